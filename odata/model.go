package odata

import "sync/atomic"

// EdmType is a property type as written in the metadata (docs/service.md,
// Types and literals).
type EdmType string

// The four types of docs/service.md, Types and literals, and Edm.Boolean,
// which the text sub-forms' APPEND and SIGNATURE flags use (docs/service.md,
// Text sub-forms).
const (
	EdmString         EdmType = "Edm.String"
	EdmInt64          EdmType = "Edm.Int64"
	EdmDecimal        EdmType = "Edm.Decimal"
	EdmDateTimeOffset EdmType = "Edm.DateTimeOffset"
	EdmBoolean        EdmType = "Edm.Boolean"
	// EdmDate and EdmGuid are types of other services (docs/other-services.md):
	// their values are Date and Guid.
	EdmDate EdmType = "Edm.Date"
	EdmGuid EdmType = "Edm.Guid"
	// The standard's other primitive types a record's value may have
	// (docs/other-services.md, What differs).
	EdmInt32     EdmType = "Edm.Int32"
	EdmInt16     EdmType = "Edm.Int16"
	EdmByte      EdmType = "Edm.Byte"
	EdmSByte     EdmType = "Edm.SByte"
	EdmTimeOfDay EdmType = "Edm.TimeOfDay"
	EdmDuration  EdmType = "Edm.Duration"
)

// Metadata is a parsed $metadata document (docs/service.md, Metadata).
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

	idx atomic.Pointer[metaIndex]
}

// metaIndex is a Metadata's look-up tables. It is built whole and then
// published, so that goroutines looking up at once in metadata built by
// hand never see a table half filled (a type found missing).
type metaIndex struct {
	types map[string]*EntityType
	sets  map[string]*EntitySet
}

// EntitySet is a top-level entity of the container.
type EntitySet struct {
	Name string
	Type *EntityType
}

// EntityType is a form (docs/service.md, Service root): its key, fields and
// sub-forms.
type EntityType struct {
	Name        string
	Description string
	// Key lists the key property names in order (one, or several for a
	// composite key, docs/service.md, Keys).
	Key         []string
	Properties  []*Property
	Navigations []*NavigationProperty

	idx atomic.Pointer[typeIndex]
}

// typeIndex is an EntityType's look-up tables, built whole and then
// published as metaIndex is.
type typeIndex struct {
	props map[string]*Property
	navs  map[string]*NavigationProperty
}

// Property is a field of a form.
type Property struct {
	Name string
	Type EdmType
	// MaxLength is the declared maximum length in characters; 0 when none.
	MaxLength   int
	Nullable    bool
	Description string
	// Mandatory is the Service.OData.Mandatory annotation (docs/service.md,
	// Metadata, from 25.1).
	Mandatory bool
	// Computed marks a read-only, server-assigned field: one carrying
	// Org.OData.Core.V1.Computed or the service's AutoUnique term.
	Computed bool
	// ComputedDefault is Org.OData.Core.V1.ComputedDefaultValue: the server
	// computes the value where a create gives none (a Guid key it numbers),
	// and takes one that is given (docs/other-services.md).
	ComputedDefault bool
	// AutoUnique is the service's AutoUnique term: an auto-unique key
	// (docs/service.md, Keys). Computed is set too.
	AutoUnique bool
	// ReadOnly is Org.OData.Core.V1.Permissions = Read: the API may read
	// the field but not write it.
	ReadOnly bool
	// DateOnly is the service's DateType annotation with Date: the field
	// holds a calendar day, not a moment.
	DateOnly bool
	// Precision and Scale are an Edm.Decimal's facets: at most Precision
	// digits, Scale of them after the point. Precision 0 and HasScale false
	// mean none was declared.
	Precision int
	Scale     int
	HasScale  bool
}

// Writable reports whether the API may write the field: neither assigned
// by the server nor declared read-only.
func (p *Property) Writable() bool { return !p.Computed && !p.ReadOnly }

// WriteRefusal says why a plan may not write the field (after its
// "ENTITY.FIELD"), or "" when it may. plan's checks and transform's
// compiler both refuse with it, so the message is the same.
func WriteRefusal(p *Property) string {
	switch {
	case p == nil:
		return ""
	case p.Computed:
		return "is assigned by the server and read-only; remove it from fields"
	case p.ReadOnly:
		return "is read-only through the API (Core.Permissions Read in the metadata); remove it from fields"
	}
	return ""
}

// NavigationProperty is a sub-form (docs/service.md, Sub-forms).
type NavigationProperty struct {
	Name string
	// Type is the target entity type's unqualified name.
	Type string
	// Collection is true for Collection(...) types: lines; false for a
	// single-object sub-form such as a text or ship-to sub-form.
	Collection     bool
	ContainsTarget bool
	// Partner is the navigation back from the target, and Constraints the
	// referential constraints (standard services; the ERP's metadata has
	// neither): a line's fields that hold its parent's key.
	Partner     string
	Constraints []Constraint
}

// Constraint is a referential constraint: Property of the navigation's
// own type holds Referenced of its target's.
type Constraint struct{ Property, Referenced string }

// FilledFromParent are the fields of child, the type of the sub-form nav
// of parent, that hold the parent's key by a referential constraint
// (a CAP composition's up__ID): a standard service fills them from the
// parent of a deep insert or a POST to the sub-form, so a plan need not
// write them (docs/other-services.md).
func FilledFromParent(parent *EntityType, nav *NavigationProperty, child *EntityType) map[string]bool {
	out := map[string]bool{}
	if parent == nil || nav == nil || child == nil {
		return out
	}
	for _, back := range child.Navigations {
		if back.Type != parent.Name || !(back.Partner == nav.Name || nav.Partner == back.Name) {
			continue
		}
		for _, c := range back.Constraints {
			out[c.Property] = true
		}
	}
	return out
}

// Reindex rebuilds the look-up tables after Types or Sets were changed by
// hand (parsers and the sandbox's demo schema call it once).
func (m *Metadata) Reindex() {
	ix := &metaIndex{types: make(map[string]*EntityType, len(m.Types)), sets: make(map[string]*EntitySet, len(m.Sets))}
	for _, t := range m.Types {
		t.reindex()
		ix.types[t.Name] = t
	}
	for _, s := range m.Sets {
		ix.sets[s.Name] = s
	}
	m.idx.Store(ix)
}

// index is the look-up tables, built at the first look-up of metadata
// built by hand.
func (m *Metadata) index() *metaIndex { return built(&m.idx, m.Reindex) }

// built is the tables p points to, which build publishes there when it
// has none yet (goroutines looking up at once may each build them: the
// same tables).
func built[T any](p *atomic.Pointer[T], build func()) *T {
	if ix := p.Load(); ix != nil {
		return ix
	}
	build()
	return p.Load()
}

// ReplaceType puts t in place of the entity type of its name (the
// entity sets of that type then have t), as GetMetadataFor's annotated
// type stands in for the one $metadata had; a t of a name m does not
// hold, or nil, changes nothing.
func (m *Metadata) ReplaceType(t *EntityType) {
	if t == nil {
		return
	}
	for i, old := range m.Types {
		if old.Name == t.Name {
			m.Types[i] = t
			for _, s := range m.Sets {
				if s.Type == old {
					s.Type = t
				}
			}
			m.Reindex()
			return
		}
	}
}

// Type returns the entity type of that unqualified name, or nil.
func (m *Metadata) Type(name string) *EntityType { return m.index().types[name] }

// EntitySet returns the top-level entity set of that name, or nil.
func (m *Metadata) EntitySet(name string) *EntitySet { return m.index().sets[name] }

// reindex rebuilds the type's look-up tables after its fields or
// sub-forms changed.
func (t *EntityType) reindex() {
	ix := &typeIndex{props: make(map[string]*Property, len(t.Properties)), navs: make(map[string]*NavigationProperty, len(t.Navigations))}
	for _, p := range t.Properties {
		ix.props[p.Name] = p
	}
	for _, n := range t.Navigations {
		ix.navs[n.Name] = n
	}
	t.idx.Store(ix)
}

// index is the type's look-up tables, built at the first look-up of a
// type built by hand.
func (t *EntityType) index() *typeIndex { return built(&t.idx, t.reindex) }

// Property returns the field of that name, or nil.
func (t *EntityType) Property(name string) *Property { return t.index().props[name] }

// Navigation returns the sub-form of that name, or nil.
func (t *EntityType) Navigation(name string) *NavigationProperty { return t.index().navs[name] }

// IsKey reports whether name is one of the type's key properties.
func (t *EntityType) IsKey(name string) bool {
	for _, k := range t.Key {
		if k == name {
			return true
		}
	}
	return false
}
