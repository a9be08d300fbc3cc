package odata

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CoreNamespace is the OASIS core vocabulary holding the Computed term.
const CoreNamespace = "Org.OData.Core.V1"

// ErrBadMetadata is wrapped by every error the metadata parsers return.
var ErrBadMetadata = errors.New("bad metadata document")

// MetadataError says where in a metadata document a problem is.
type MetadataError struct {
	// Where names the element: "entity type ORDERS, property QUANT".
	Where string
	Msg   string
}

func (e *MetadataError) Error() string {
	if e.Where == "" {
		return "metadata: " + e.Msg
	}
	return "metadata: " + e.Where + ": " + e.Msg
}

// Unwrap lets errors.Is(err, ErrBadMetadata) hold.
func (e *MetadataError) Unwrap() error { return ErrBadMetadata }

// The x* types mirror the CSDL XML. encoding/xml matches local names when
// a tag has no namespace, so edmx: and edm prefixes need no care.
type xEdmx struct {
	XMLName      xml.Name     `xml:"Edmx"`
	Version      string       `xml:"Version,attr"`
	References   []xReference `xml:"Reference"`
	DataServices struct {
		Schemas []xSchema `xml:"Schema"`
	} `xml:"DataServices"`
}

type xReference struct {
	Includes []struct {
		Namespace string `xml:"Namespace,attr"`
		Alias     string `xml:"Alias,attr"`
	} `xml:"Include"`
}

type xSchema struct {
	Namespace   string         `xml:"Namespace,attr"`
	Alias       string         `xml:"Alias,attr"`
	EntityTypes []xEntityType  `xml:"EntityType"`
	Containers  []xContainer   `xml:"EntityContainer"`
	Annotations []xAnnotations `xml:"Annotations"`
}

type xEntityType struct {
	Name string `xml:"Name,attr"`
	Key  struct {
		Refs []struct {
			Name string `xml:"Name,attr"`
		} `xml:"PropertyRef"`
	} `xml:"Key"`
	Properties  []xProperty   `xml:"Property"`
	Navs        []xNav        `xml:"NavigationProperty"`
	Annotations []xAnnotation `xml:"Annotation"`
}

type xProperty struct {
	Name        string        `xml:"Name,attr"`
	Type        string        `xml:"Type,attr"`
	MaxLength   string        `xml:"MaxLength,attr"`
	Precision   string        `xml:"Precision,attr"`
	Scale       string        `xml:"Scale,attr"`
	Nullable    string        `xml:"Nullable,attr"`
	Annotations []xAnnotation `xml:"Annotation"`
}

type xNav struct {
	Name           string `xml:"Name,attr"`
	Type           string `xml:"Type,attr"`
	ContainsTarget string `xml:"ContainsTarget,attr"`
	Partner        string `xml:"Partner,attr"`
	Constraints    []struct {
		Property   string `xml:"Property,attr"`
		Referenced string `xml:"ReferencedProperty,attr"`
	} `xml:"ReferentialConstraint"`
}

type xContainer struct {
	Name string `xml:"Name,attr"`
	Sets []struct {
		Name       string `xml:"Name,attr"`
		EntityType string `xml:"EntityType,attr"`
	} `xml:"EntitySet"`
}

type xAnnotations struct {
	Target      string        `xml:"Target,attr"`
	Annotations []xAnnotation `xml:"Annotation"`
}

// xAnnotation takes both the attribute form (String="..." Bool="true") and
// the element form (<String>...</String>, <Bool>true</Bool>).
type xAnnotation struct {
	Term      string  `xml:"Term,attr"`
	String    *string `xml:"String,attr"`
	Bool      *string `xml:"Bool,attr"`
	Enum      *string `xml:"EnumMember,attr"`
	StringEl  *string `xml:"String"`
	BoolEl    *string `xml:"Bool"`
	EnumEl    *string `xml:"EnumMember"`
	Qualifier string  `xml:"Qualifier,attr"`
}

// text returns the value of a String or EnumMember annotation, in either form.
func (a xAnnotation) text() string {
	for _, p := range []*string{a.String, a.StringEl, a.Enum, a.EnumEl} {
		if p != nil {
			return strings.TrimSpace(*p)
		}
	}
	return ""
}

// terms knows the prefixes a document uses for its own and the core
// vocabulary's terms.
type terms struct {
	core map[string]bool // "Org.OData.Core.V1", "Core" and declared aliases
}

func newTerms(refs []xReference) terms {
	t := terms{core: map[string]bool{CoreNamespace: true, "Core": true}}
	for _, r := range refs {
		for _, in := range r.Includes {
			if in.Namespace == CoreNamespace && in.Alias != "" {
				t.core[in.Alias] = true
			}
		}
	}
	return t
}

// splitTerm returns a term's qualifier and name: "Priority.OData.Description"
// gives "Priority.OData", "Description".
func splitTerm(term string) (prefix, name string) {
	i := strings.LastIndexByte(term, '.')
	if i < 0 {
		return "", term
	}
	return term[:i], term[i+1:]
}

// annotationTarget is what an annotation may change.
type annotationTarget struct {
	description *string
	mandatory   *bool
	computed    *bool
	prop        *Property // the field's other terms (AutoUnique, DateType, Permissions); nil for a type
}

// apply sets what a recognised annotation says. Description, Mandatory,
// AutoUnique and DateType are the service's own terms, qualified by
// whatever namespace the installation uses (docs/service.md, Metadata;
// Priority.OData on real servers, docs/servers.md, Metadata), so any prefix
// is taken; Core.Description is the standard term for the same. Computed and
// Permissions must come from the core vocabulary.
func (tm terms) apply(a xAnnotation, tgt annotationTarget) error {
	if a.Qualifier != "" {
		return nil // a qualified annotation applies to some other context
	}
	prefix, name := splitTerm(strings.TrimSpace(a.Term))
	own := prefix != "" && !tm.core[prefix] // a term of the service's vocabulary
	switch name {
	case "Description":
		if tgt.description == nil {
			return nil
		}
		if a.String != nil {
			*tgt.description = *a.String
		} else if a.StringEl != nil {
			*tgt.description = strings.TrimSpace(*a.StringEl)
		}
	case "Mandatory":
		if tgt.mandatory == nil || !own {
			return nil
		}
		return setBool(tgt.mandatory, a)
	case "Computed":
		if tgt.computed == nil || !tm.core[prefix] {
			return nil
		}
		return setBool(tgt.computed, a)
	case "ComputedDefaultValue":
		if tgt.prop == nil || !tm.core[prefix] {
			return nil
		}
		return setBool(&tgt.prop.ComputedDefault, a)
	case "AutoUnique":
		// An auto-unique key is assigned by the server (docs/service.md,
		// Keys): real documents say so with this term rather than
		// Core.Computed.
		if tgt.prop == nil || !own {
			return nil
		}
		if err := setBool(&tgt.prop.AutoUnique, a); err != nil {
			return err
		}
	case "DateType":
		if tgt.prop == nil || !own {
			return nil
		}
		tgt.prop.DateOnly = strings.EqualFold(a.text(), "Date")
	case "Permissions":
		if tgt.prop == nil || !tm.core[prefix] {
			return nil
		}
		// Core.V1.Permission is a flags enum ("Core.Permission/Read",
		// several separated by spaces): read-only unless Write is among them.
		members := strings.Fields(a.text())
		readOnly := len(members) > 0
		for _, m := range members {
			_, flag, _ := strings.Cut(m, "/")
			readOnly = readOnly && (flag == "Read" || flag == "None")
		}
		tgt.prop.ReadOnly = readOnly
	}
	return nil
}

// setBool sets *dst to what a Bool annotation says.
func setBool(dst *bool, a xAnnotation) error {
	b, err := annotationBool(a)
	if err == nil {
		*dst = b
	}
	return err
}

// annotationBool reads a Bool annotation; a tagging term without a value
// means true (CSDL 4.0, 14.3).
func annotationBool(a xAnnotation) (bool, error) {
	var s string
	switch {
	case a.Bool != nil:
		s = *a.Bool
	case a.BoolEl != nil:
		s = *a.BoolEl
	default:
		return true, nil
	}
	switch strings.TrimSpace(s) {
	case "true", "True", "1":
		return true, nil
	case "false", "False", "0":
		return false, nil
	}
	return false, fmt.Errorf("annotation %s: Bool %q is neither true nor false", a.Term, s)
}

// ParseMetadata reads a $metadata EDMX document (docs/service.md, Metadata).
// The schema namespace is read from the document; annotations are taken both
// inline and from <Annotations Target="NS.TYPE/FIELD"> blocks.
func ParseMetadata(r io.Reader) (*Metadata, error) {
	var doc xEdmx
	dec := xml.NewDecoder(r)
	dec.Strict = true
	if err := dec.Decode(&doc); err != nil {
		line, col := dec.InputPos()
		return nil, &MetadataError{Where: fmt.Sprintf("line %d:%d", line, col), Msg: "not an EDMX document: " + xmlErrText(err)}
	}
	if len(doc.DataServices.Schemas) == 0 {
		return nil, &MetadataError{Msg: "the document has no edmx:DataServices/Schema element"}
	}
	tm := newTerms(doc.References)
	m := &Metadata{}
	aliases := map[string]string{} // namespace or alias -> namespace
	for _, s := range doc.DataServices.Schemas {
		if s.Namespace == "" {
			return nil, &MetadataError{Where: "Schema", Msg: "no Namespace attribute"}
		}
		if tm.core[s.Namespace] || strings.ContainsAny(s.Namespace, "/()\"' ") {
			return nil, &MetadataError{Where: "Schema", Msg: fmt.Sprintf("Namespace %q cannot name the service's schema", s.Namespace)}
		}
		aliases[s.Namespace] = s.Namespace
		if s.Alias != "" {
			aliases[s.Alias] = s.Namespace
		}
		if m.Namespace == "" && len(s.EntityTypes) > 0 {
			m.Namespace = s.Namespace
		}
	}
	if m.Namespace == "" {
		m.Namespace = doc.DataServices.Schemas[0].Namespace
	}
	types, sets := map[string]*EntityType{}, map[string]bool{}
	for _, s := range doc.DataServices.Schemas {
		for i := range s.EntityTypes {
			t, err := buildType(&s.EntityTypes[i], tm)
			if err != nil {
				return nil, err
			}
			if types[t.Name] != nil {
				return nil, &MetadataError{Where: "entity type " + t.Name, Msg: "declared twice"}
			}
			m.Types = append(m.Types, t)
			types[t.Name] = t
		}
	}
	m.Reindex() // the annotations find their types by name
	for _, s := range doc.DataServices.Schemas {
		for _, block := range s.Annotations {
			if err := applyBlock(m, block, aliases, tm); err != nil {
				return nil, err
			}
		}
	}
	for _, s := range doc.DataServices.Schemas {
		for _, c := range s.Containers {
			if m.Container == "" {
				m.Container = c.Name
			}
			for _, es := range c.Sets {
				if !validName(es.Name) {
					return nil, &MetadataError{Where: "entity container " + c.Name, Msg: fmt.Sprintf("EntitySet Name %q is not a simple identifier", es.Name)}
				}
				t := types[unqualify(es.EntityType)]
				if t == nil {
					return nil, &MetadataError{Where: "entity set " + es.Name, Msg: fmt.Sprintf("entity type %q is not declared", es.EntityType)}
				}
				if sets[es.Name] {
					return nil, &MetadataError{Where: "entity set " + es.Name, Msg: "declared twice"}
				}
				sets[es.Name] = true
				m.Sets = append(m.Sets, &EntitySet{Name: es.Name, Type: t})
			}
		}
	}
	autoUniqueComputed(m.Types)
	m.Reindex()
	addTextFlags(m)
	return m, nil
}

// addTextFlags gives every text sub-form the APPEND and SIGNATURE flags it
// lacks: docs/service.md, Text sub-forms says a text sub-form always takes
// them, but documents pulled from real installations often declare TEXT
// alone, and a plan writing APPEND: true must not fail validation there. A
// text sub-form is the type of a single-object sub-form that has a TEXT
// field.
func addTextFlags(m *Metadata) {
	for _, t := range m.Types {
		for _, n := range t.Navigations {
			ct := m.Type(n.Type)
			if n.Collection || ct == nil || ct.Property("TEXT") == nil || ct.Property("TEXT").Type != EdmString {
				continue
			}
			added := false
			for _, flag := range []string{"APPEND", "SIGNATURE"} {
				if ct.Property(flag) == nil {
					ct.Properties = append(ct.Properties, &Property{Name: flag, Type: EdmBoolean, Nullable: true})
					added = true
				}
			}
			if added {
				ct.reindex()
			}
		}
	}
}

// xmlErrText drops encoding/xml's "xml: " prefix and Go type names.
func xmlErrText(err error) string {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("line %d: %s", se.Line, se.Msg)
	}
	if errors.Is(err, io.EOF) {
		return "empty document"
	}
	s := err.Error()
	if strings.Contains(s, "expected element type") {
		return "the root element is not edmx:Edmx"
	}
	return strings.TrimPrefix(s, "xml: ")
}

// validName reports whether s can be a CSDL simple identifier as the
// service uses them: no qualifier dots, path slashes, parentheses, quotes,
// commas or spaces, which would break keys and URLs built from it.
func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || strings.ContainsRune("./()',=\"?#&%+$@:;[]{}<>*", r) {
			return false
		}
	}
	return true
}

// unqualify strips the namespace (or alias) from "NS.TYPE".
func unqualify(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func buildType(x *xEntityType, tm terms) (*EntityType, error) {
	if !validName(x.Name) {
		return nil, &MetadataError{Msg: fmt.Sprintf("EntityType Name %q is not a simple identifier", x.Name)}
	}
	where := "entity type " + x.Name
	t := &EntityType{Name: x.Name}
	for _, a := range x.Annotations {
		if err := tm.apply(a, annotationTarget{description: &t.Description}); err != nil {
			return nil, &MetadataError{Where: where, Msg: err.Error()}
		}
	}
	seen := map[string]bool{}
	for _, xp := range x.Properties {
		p, err := buildProperty(xp, tm, where)
		if err != nil {
			return nil, err
		}
		if seen[p.Name] {
			return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("property %s declared twice", p.Name)}
		}
		seen[p.Name] = true
		t.Properties = append(t.Properties, p)
	}
	for _, xn := range x.Navs {
		if !validName(xn.Name) {
			return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("NavigationProperty Name %q is not a simple identifier", xn.Name)}
		}
		if seen[xn.Name] {
			return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("%s declared twice", xn.Name)}
		}
		seen[xn.Name] = true
		typ, coll := strings.TrimSpace(xn.Type), false
		if strings.HasPrefix(typ, "Collection(") && strings.HasSuffix(typ, ")") {
			typ, coll = typ[len("Collection("):len(typ)-1], true
		}
		if unqualify(typ) == "" {
			return nil, &MetadataError{Where: where + ", navigation " + xn.Name, Msg: fmt.Sprintf("bad Type %q", xn.Type)}
		}
		nav := &NavigationProperty{
			Name:           xn.Name,
			Type:           unqualify(typ),
			Collection:     coll,
			ContainsTarget: strings.EqualFold(strings.TrimSpace(xn.ContainsTarget), "true"),
			Partner:        strings.TrimSpace(xn.Partner),
		}
		for _, c := range xn.Constraints {
			nav.Constraints = append(nav.Constraints, Constraint{Property: strings.TrimSpace(c.Property), Referenced: strings.TrimSpace(c.Referenced)})
		}
		t.Navigations = append(t.Navigations, nav)
	}
	for _, r := range x.Key.Refs {
		if r.Name == "" {
			return nil, &MetadataError{Where: where, Msg: "a PropertyRef has no Name"}
		}
		found := false
		for _, p := range t.Properties {
			found = found || p.Name == r.Name
		}
		if !found {
			return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("key property %s is not declared", r.Name)}
		}
		t.Key = append(t.Key, r.Name)
	}
	t.reindex()
	return t, nil
}

func buildProperty(xp xProperty, tm terms, where string) (*Property, error) {
	if !validName(xp.Name) {
		return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("Property Name %q is not a simple identifier", xp.Name)}
	}
	where += ", property " + xp.Name
	var err error
	p := &Property{Name: xp.Name, Type: EdmType(strings.TrimSpace(xp.Type)), Nullable: true}
	if p.Type == "" {
		return nil, &MetadataError{Where: where, Msg: "no Type attribute"}
	}
	if ml := strings.TrimSpace(xp.MaxLength); ml != "" && !strings.EqualFold(ml, "max") {
		n, err := strconv.Atoi(ml)
		if err != nil || n < 0 {
			return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("MaxLength %q is not a non-negative integer", xp.MaxLength)}
		}
		p.MaxLength = n
	}
	if p.Precision, err = facetInt(xp.Precision); err != nil {
		return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("Precision %q is not a non-negative integer", xp.Precision)}
	}
	// Scale "variable" or "floating" (CSDL 4.0, 6.2.5) sets no limit.
	if sc := strings.TrimSpace(xp.Scale); sc != "" && !strings.EqualFold(sc, "variable") && !strings.EqualFold(sc, "floating") {
		n, err := facetInt(sc)
		if err != nil || p.Precision > 0 && n > p.Precision {
			return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("Scale %q is not an integer from 0 to the Precision", xp.Scale)}
		}
		p.Scale, p.HasScale = n, true
	}
	switch strings.TrimSpace(xp.Nullable) {
	case "", "true":
	case "false":
		p.Nullable = false
	default:
		return nil, &MetadataError{Where: where, Msg: fmt.Sprintf("Nullable %q is neither true nor false", xp.Nullable)}
	}
	for _, a := range xp.Annotations {
		if err := tm.apply(a, p.target()); err != nil {
			return nil, &MetadataError{Where: where, Msg: err.Error()}
		}
	}
	return p, nil
}

// facetInt reads a Precision or Scale facet; "" is 0 (none given).
func facetInt(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a non-negative integer")
	}
	return n, nil
}

func (p *Property) target() annotationTarget {
	return annotationTarget{description: &p.Description, mandatory: &p.Mandatory, computed: &p.Computed, prop: p}
}

// applyBlock applies an <Annotations Target="NS.TYPE/FIELD"> block. Targets
// the model does not hold (containers, sets, other schemas' types) are
// skipped: they are legal CSDL the tool has no use for.
func applyBlock(m *Metadata, b xAnnotations, aliases map[string]string, tm terms) error {
	target := strings.TrimSpace(b.Target)
	path, member, hasMember := strings.Cut(target, "/")
	qual, typeName := splitTerm(path)
	if qual != "" {
		if _, ok := aliases[qual]; !ok {
			return nil
		}
	}
	t := m.Type(typeName)
	if t == nil {
		return nil
	}
	where := "Annotations " + target
	var tgt annotationTarget
	if !hasMember {
		tgt.description = &t.Description
	} else if p := t.Property(member); p != nil {
		tgt = p.target()
	} else {
		return nil
	}
	for _, a := range b.Annotations {
		if err := tm.apply(a, tgt); err != nil {
			return &MetadataError{Where: where, Msg: err.Error()}
		}
	}
	return nil
}

// autoUniqueComputed marks every auto-unique key Computed, whatever order
// the annotations came in (a Core.Computed false after AutoUnique does not
// make a server-assigned key writable).
func autoUniqueComputed(types []*EntityType) {
	for _, t := range types {
		for _, p := range t.Properties {
			p.Computed = p.Computed || p.AutoUnique
		}
	}
}

// ParseEntityType reads a GetMetadataFor answer (docs/service.md, Queries):
// an EntityType element, alone or inside wrappers (Schema, DataServices,
// Edmx). Sibling <Annotations> blocks that target the type are applied too.
// When the answer holds several entity types, the first is taken;
// ParseEntityTypeNamed picks one by name.
func ParseEntityType(r io.Reader) (*EntityType, error) { return ParseEntityTypeNamed(r, "") }

// ParseEntityTypeNamed is ParseEntityType that takes the entity type called
// name (an answer may carry its sub-forms' types too); with "", the first.
// An answer without that type is an error, never another type: a cold
// entity's GetMetadataFor has been seen answering another entity's type
// (docs/servers.md, Metadata).
func ParseEntityTypeNamed(r io.Reader, name string) (*EntityType, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = true
	var (
		x      *xEntityType
		blocks []xAnnotations
		refs   []xReference
		quals  = map[string]string{}
		seen   []string // names of the entity types read
	)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			line, col := dec.InputPos()
			return nil, &MetadataError{Where: fmt.Sprintf("line %d:%d", line, col), Msg: "not an XML EntityType fragment: " + xmlErrText(err)}
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		var derr error
		switch se.Name.Local {
		case "Schema":
			for _, a := range se.Attr {
				if a.Name.Local == "Namespace" || a.Name.Local == "Alias" {
					quals[a.Value] = a.Value
				}
			}
		case "Reference":
			var ref xReference
			derr = dec.DecodeElement(&ref, &se)
			refs = append(refs, ref)
		case "EntityType":
			if x != nil && (name == "" || x.Name == name) {
				derr = dec.Skip() // already have the one wanted
				break
			}
			nx := new(xEntityType)
			derr = dec.DecodeElement(nx, &se)
			seen = append(seen, nx.Name)
			if x == nil || nx.Name == name {
				x = nx
			}
		case "Annotations":
			var b xAnnotations
			derr = dec.DecodeElement(&b, &se)
			blocks = append(blocks, b)
		}
		if derr != nil {
			line, col := dec.InputPos()
			return nil, &MetadataError{Where: fmt.Sprintf("line %d:%d", line, col), Msg: xmlErrText(derr)}
		}
	}
	if x == nil {
		return nil, &MetadataError{Msg: "the answer holds no EntityType element"}
	}
	if name != "" && x.Name != name {
		return nil, &MetadataError{Msg: fmt.Sprintf("the answer holds no EntityType %s, only %s", name, strings.Join(seen, ", "))}
	}
	tm := newTerms(refs)
	t, err := buildType(x, tm)
	if err != nil {
		return nil, err
	}
	m := &Metadata{Types: []*EntityType{t}}
	m.Reindex()
	wrapped := len(quals) > 0
	for _, b := range blocks {
		if !wrapped {
			// No Schema wrapper: accept any qualifier on the target.
			q, _ := splitTerm(strings.SplitN(strings.TrimSpace(b.Target), "/", 2)[0])
			quals[q] = q
		}
		if err := applyBlock(m, b, quals, tm); err != nil {
			return nil, err
		}
	}
	autoUniqueComputed(m.Types)
	return t, nil
}

// ParseMetadataBytes is ParseMetadata of a byte slice.
func ParseMetadataBytes(b []byte) (*Metadata, error) { return ParseMetadata(bytes.NewReader(b)) }
