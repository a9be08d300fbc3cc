package odata

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/internal/didyoumean"
)

// CoreVocabularyURI is where the OASIS core vocabulary lives; the
// edmx:Reference of a document that uses Core.Computed points at it.
const CoreVocabularyURI = "https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Core.V1.xml"

const (
	edmxNS = "http://docs.oasis-open.org/odata/ns/edmx"
	edmNS  = "http://docs.oasis-open.org/odata/ns/edm"
)

// WriteXML writes m as a CSDL 4.0 EDMX document (docs/service.md, Metadata):
// the schema in m.Namespace, entity types with keys, properties, sub-forms
// and the Description/Mandatory annotations inline, Core.Computed with its
// edmx:Reference, and the entity container. ParseMetadata reads it back to
// an equal model.
func (m *Metadata) WriteXML(w io.Writer) error {
	bw := bufio.NewWriter(w)
	ns := m.namespace()
	bw.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	bw.WriteString(`<edmx:Edmx xmlns:edmx="` + edmxNS + `" Version="4.0">` + "\n")
	if m.usesCore() {
		bw.WriteString(`  <edmx:Reference Uri="` + CoreVocabularyURI + `">` + "\n")
		bw.WriteString(`    <edmx:Include Namespace="` + CoreNamespace + `" Alias="Core"/>` + "\n")
		bw.WriteString("  </edmx:Reference>\n")
	}
	bw.WriteString("  <edmx:DataServices>\n")
	bw.WriteString(`    <Schema xmlns="` + edmNS + `" Namespace="` + attr(ns) + `">` + "\n")
	for _, t := range m.Types {
		writeEntityType(bw, t, ns, "      ")
	}
	// A document without a container (and so without sets) stays without
	// one, so that parse(write(m)) == m; sets need one, named as
	// docs/service.md, Metadata says.
	if container := m.Container; container != "" || len(m.Sets) > 0 {
		if container == "" {
			container = "DefaultContainer"
		}
		bw.WriteString(`      <EntityContainer Name="` + attr(container) + `">` + "\n")
		for _, s := range m.Sets {
			typeName := s.Name
			if s.Type != nil {
				typeName = s.Type.Name
			}
			bw.WriteString(`        <EntitySet Name="` + attr(s.Name) + `" EntityType="` + attr(ns+"."+typeName) + `"/>` + "\n")
		}
		bw.WriteString("      </EntityContainer>\n")
	}
	bw.WriteString("    </Schema>\n")
	bw.WriteString("  </edmx:DataServices>\n")
	bw.WriteString("</edmx:Edmx>\n")
	return bw.Flush()
}

// WriteXML writes the type alone as GetMetadataFor answers it
// (docs/service.md, Queries): one EntityType element in the default CSDL
// namespace, annotations inline. Core.Computed is written with the full core
// namespace so the fragment needs no reference.
func (t *EntityType) WriteXML(w io.Writer, namespace string) error {
	bw := bufio.NewWriter(w)
	if namespace == "" {
		namespace = "Service.OData"
	}
	bw.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	writeEntityTypeNS(bw, t, namespace, "", ` xmlns="`+edmNS+`"`, CoreNamespace)
	return bw.Flush()
}

func (m *Metadata) namespace() string {
	if m.Namespace == "" {
		return "Service.OData"
	}
	return m.Namespace
}

func (m *Metadata) usesCore() bool {
	for _, t := range m.Types {
		for _, p := range t.Properties {
			if p.Computed && !p.AutoUnique || p.ReadOnly {
				return true
			}
		}
	}
	return false
}

func writeEntityType(bw *bufio.Writer, t *EntityType, ns, indent string) {
	writeEntityTypeNS(bw, t, ns, indent, "", "Core")
}

func writeEntityTypeNS(bw *bufio.Writer, t *EntityType, ns, indent, xmlns, core string) {
	in2, in3 := indent+"  ", indent+"    "
	bw.WriteString(indent + `<EntityType Name="` + attr(t.Name) + `"` + xmlns + ">\n")
	if len(t.Key) > 0 {
		bw.WriteString(in2 + "<Key>\n")
		for _, k := range t.Key {
			bw.WriteString(in3 + `<PropertyRef Name="` + attr(k) + `"/>` + "\n")
		}
		bw.WriteString(in2 + "</Key>\n")
	}
	for _, p := range t.Properties {
		bw.WriteString(in2 + `<Property Name="` + attr(p.Name) + `" Type="` + attr(string(p.Type)) + `"`)
		if p.MaxLength > 0 {
			bw.WriteString(` MaxLength="` + strconv.Itoa(p.MaxLength) + `"`)
		}
		if p.Precision > 0 {
			bw.WriteString(` Precision="` + strconv.Itoa(p.Precision) + `"`)
		}
		if p.HasScale {
			bw.WriteString(` Scale="` + strconv.Itoa(p.Scale) + `"`)
		}
		if !p.Nullable {
			bw.WriteString(` Nullable="false"`)
		}
		if p.Description == "" && !p.Mandatory && !p.Computed && !p.ReadOnly && !p.DateOnly {
			bw.WriteString("/>\n")
			continue
		}
		bw.WriteString(">\n")
		if p.Description != "" {
			bw.WriteString(in3 + `<Annotation Term="` + attr(ns) + `.Description" String="` + attr(p.Description) + `"/>` + "\n")
		}
		if p.Mandatory {
			bw.WriteString(in3 + `<Annotation Term="` + attr(ns) + `.Mandatory" Bool="true"/>` + "\n")
		}
		// Real documents mark an auto-unique key with the service's own
		// term only (docs/servers.md, Metadata); Core.Computed is the
		// contract's way.
		if p.AutoUnique {
			bw.WriteString(in3 + `<Annotation Term="` + attr(ns) + `.AutoUnique" Bool="true"/>` + "\n")
		} else if p.Computed {
			bw.WriteString(in3 + `<Annotation Term="` + core + `.Computed" Bool="true"/>` + "\n")
		}
		if p.ReadOnly {
			bw.WriteString(in3 + `<Annotation Term="` + core + `.Permissions" EnumMember="` + core + `.Permission/Read"/>` + "\n")
		}
		if p.DateOnly {
			bw.WriteString(in3 + `<Annotation Term="` + attr(ns) + `.DateType" String="Date"/>` + "\n")
		}
		bw.WriteString(in2 + "</Property>\n")
	}
	for _, n := range t.Navigations {
		typ := ns + "." + n.Type
		if n.Collection {
			typ = "Collection(" + typ + ")"
		}
		bw.WriteString(in2 + `<NavigationProperty Name="` + attr(n.Name) + `" Type="` + attr(typ) + `"`)
		if n.ContainsTarget {
			bw.WriteString(` ContainsTarget="true"`)
		}
		bw.WriteString("/>\n")
	}
	if t.Description != "" {
		bw.WriteString(in2 + `<Annotation Term="` + attr(ns) + `.Description" String="` + attr(t.Description) + `"/>` + "\n")
	}
	bw.WriteString(indent + "</EntityType>\n")
}

// attr escapes s for a double-quoted attribute value. Characters XML cannot
// carry at all become U+FFFD (encoding/xml's rule).
func attr(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) //nolint:errcheck // strings.Builder never fails
	return b.String()
}

// PropertyNames returns the type's field names in document order.
func (t *EntityType) PropertyNames() []string {
	out := make([]string, len(t.Properties))
	for i, p := range t.Properties {
		out[i] = p.Name
	}
	return out
}

// NavigationNames returns the type's sub-form names in document order.
func (t *EntityType) NavigationNames() []string {
	out := make([]string, len(t.Navigations))
	for i, n := range t.Navigations {
		out[i] = n.Name
	}
	return out
}

// SetNames returns the entity-set names, sorted.
func (m *Metadata) SetNames() []string {
	out := make([]string, len(m.Sets))
	for i, s := range m.Sets {
		out[i] = s.Name
	}
	sort.Strings(out)
	return out
}

// NoEntity says name is no entity set of md, with the nearest name.
func (md *Metadata) NoEntity(name string) string {
	return fmt.Sprintf("no entity %q in the metadata", name) + didyoumean.Hint(name, md.SetNames())
}
