package odata

// EdmType is a property type as written in the metadata (spec 2.3).
type EdmType string

// The four types of spec 2.3, and Edm.Boolean, which the text sub-forms'
// APPEND and SIGNATURE flags use (spec 2.9).
const (
	EdmString         EdmType = "Edm.String"
	EdmInt64          EdmType = "Edm.Int64"
	EdmDecimal        EdmType = "Edm.Decimal"
	EdmDateTimeOffset EdmType = "Edm.DateTimeOffset"
	EdmBoolean        EdmType = "Edm.Boolean"
)

// Metadata is a parsed $metadata document (spec 2.2).
type Metadata struct {
	// Namespace is the schema namespace, read from the document (real
	// installations use their own, not Service.OData).
	Namespace string
	// Container is the entity container's name (DefaultContainer).
	Container string
	// Types holds every entity type by its unqualified name, in document order.
	Types []*EntityType
	// Sets holds every entity set of the container, in document order.
	Sets []*EntitySet

	typeByName map[string]*EntityType
	setByName  map[string]*EntitySet
}

// EntitySet is a top-level entity of the container.
type EntitySet struct {
	Name string
	Type *EntityType
}

// EntityType is a form (spec 1): its key, fields and sub-forms.
type EntityType struct {
	Name        string
	Description string
	// Key lists the key property names in order (one, or several for a
	// composite key, spec 2.5).
	Key         []string
	Properties  []*Property
	Navigations []*NavigationProperty

	propByName map[string]*Property
	navByName  map[string]*NavigationProperty
}

// Property is a field of a form.
type Property struct {
	Name string
	Type EdmType
	// MaxLength is the declared maximum length in characters; 0 when none.
	MaxLength   int
	Nullable    bool
	Description string
	// Mandatory is the Service.OData.Mandatory annotation (spec 2.2, from 25.1).
	Mandatory bool
	// Computed marks a read-only, server-assigned field: an auto-unique key
	// (spec 2.5) known by name, or one carrying Org.OData.Core.V1.Computed.
	Computed bool
}

// NavigationProperty is a sub-form (spec 2.4).
type NavigationProperty struct {
	Name string
	// Type is the target entity type's unqualified name.
	Type string
	// Collection is true for Collection(...) types: lines; false for a
	// single-object sub-form such as a text or ship-to sub-form.
	Collection     bool
	ContainsTarget bool
}
