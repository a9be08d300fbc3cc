package sandbox

import (
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// realNamespace is the schema namespace of real installations' documents.
const realNamespace = "Priority.OData"

// The demo fields real documents annotate (quirk real-metadata): the
// customer and part names an order copies from the records it names are
// filled by the screen and read-only through the API; document dates are
// calendar days.
var (
	realReadOnly = []string{"ORDERS.CDES", "AINVOICES.CDES", "ORDERITEMS_SUBFORM.PDES", "AINVOICEITEMS_SUBFORM.PDES"}
	realDateOnly = []string{"ORDERS.CURDATE", "AINVOICES.IVDATE", "ORDERITEMS_SUBFORM.DUEDATE", "GENCUSTNOTES_SUBFORM.CURDATE"}
)

// annotateReal gives the demo schema what real documents declare
// (docs/servers.md, Metadata): the AutoUnique term on auto-unique keys,
// Precision="16" Scale="2" on decimals, DateType Date and Core.Permissions
// Read on the fields above. The sandbox then behaves by them: it rounds
// decimals to the Scale, keeps the day of date-only fields and refuses
// writes to read-only ones.
func annotateReal(m *odata.Metadata) {
	for _, t := range m.Types {
		for _, p := range t.Properties {
			switch {
			case p.Computed && p.Type == odata.EdmInt64:
				p.AutoUnique = true
			case p.Type == odata.EdmDecimal:
				p.Precision, p.Scale, p.HasScale = 16, 2, true
			}
		}
	}
	for _, f := range realReadOnly {
		if p := fieldOf(m, f); p != nil {
			p.ReadOnly = true
		}
	}
	for _, f := range realDateOnly {
		if p := fieldOf(m, f); p != nil {
			p.DateOnly = true
		}
	}
}

func fieldOf(m *odata.Metadata, typeDotField string) *odata.Property {
	tn, pn, _ := strings.Cut(typeDotField, ".")
	if t := m.Type(tn); t != nil {
		return t.Property(pn)
	}
	return nil
}

// servedTypeName is a type's name in the served document: real documents
// drop the _SUBFORM suffix of sub-form types (ORDERITEMS_SUBFORM's type is
// Priority.OData.ORDERITEMS); navigation properties keep their names.
func (s *Server) servedTypeName(name string) string {
	if s.quirk(QuirkRealMetadata) {
		return strings.TrimSuffix(name, "_SUBFORM")
	}
	return name
}

// served is the metadata as this server shows it: Mandatory only from
// 25.1; under real-metadata in the namespace and with the type names of
// real documents.
func (s *Server) served() *odata.Metadata {
	real := s.quirk(QuirkRealMetadata)
	if s.version.MandatoryAnnotation() && !real {
		return s.meta
	}
	m := &odata.Metadata{Namespace: s.meta.Namespace, Container: s.meta.Container}
	if real {
		m.Namespace = realNamespace
	}
	for _, t := range s.meta.Types {
		ct := odata.EntityType{Name: s.servedTypeName(t.Name), Description: t.Description, Key: t.Key}
		ct.Properties = make([]*odata.Property, len(t.Properties))
		for i, p := range t.Properties {
			cp := *p
			cp.Mandatory = cp.Mandatory && s.version.MandatoryAnnotation()
			ct.Properties[i] = &cp
		}
		ct.Navigations = make([]*odata.NavigationProperty, len(t.Navigations))
		for i, n := range t.Navigations {
			cn := *n
			cn.Type = s.servedTypeName(n.Type)
			ct.Navigations[i] = &cn
		}
		m.Types = append(m.Types, &ct)
	}
	m.Reindex()
	for _, set := range s.meta.Sets {
		m.Sets = append(m.Sets, &odata.EntitySet{Name: set.Name, Type: m.Type(s.servedTypeName(set.Type.Name))})
	}
	m.Reindex()
	return m
}

// typeRef is a record's @odata.type: "#NS.TYPE" as the served document
// names the type.
func (s *Server) typeRef(t *odata.EntityType) string {
	ns := s.meta.Namespace
	if s.quirk(QuirkRealMetadata) {
		ns = realNamespace
	}
	return "#" + ns + "." + s.servedTypeName(t.Name)
}
