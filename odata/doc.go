// Package odata owns the service's wire format (spec: ../shared/spec/service-spec.md):
// the EDMX metadata model, value encoding per Edm type, key expressions, URL
// building with the language code, the JSON and multipart $batch codecs, the
// error bodies (XML FORM/InterfaceErrors and their JSON forms) and the HTTP
// client with authentication, retries and version detection.
//
// It knows nothing about plans, sources or journals.
package odata
