package odata

import "encoding/json"

// BatchRequest is one sub-request of a $batch (spec 4.5), in either format.
type BatchRequest struct {
	ID     string
	Method string
	// URL is relative to the service root, or starts with $<id> to refer to
	// the entity another sub-request created.
	URL       string
	Headers   map[string]string
	Body      json.RawMessage
	DependsOn []string
	// AtomicityGroup is accepted by servers but never rolled back (spec 4.5).
	AtomicityGroup string
}

// BatchResponse is the outcome of one sub-request.
type BatchResponse struct {
	ID      string
	Status  int
	Headers map[string]string
	Body    json.RawMessage
}
