package sandbox

import "github.com/migrate-tool/migrate/odata"

// textKind says how a single-object sub-form stores text (docs/service.md,
// Text sub-forms).
type textKind int

const (
	notText   textKind = iota
	textHTML           // TEXT is HTML; read returns it with a style block
	textPlain          // text-only form: no tags, SIGNATURE always false
)

// ref is a business rule "field must name an existing record of set; copy
// these fields from it" (an order's customer, a line's part).
type ref struct {
	field string
	set   string
	fill  map[string]string // this type's field <- the referenced record's field
}

// rules are the screen behaviours of one form beyond what the metadata says.
type rules struct {
	allowed  map[string][]string // field -> allowed values ("" = blank)
	refs     []ref
	numbered string // key field numbered by the server when absent
	prefix   string // numbering prefix, followed by yy and 6 digits
	readOnly bool   // screen not open to the API for writes (403)
	text     textKind
}

func prop(name string, t odata.EdmType, maxLen int, desc string) *odata.Property {
	return &odata.Property{Name: name, Type: t, MaxLength: maxLen, Nullable: true, Description: desc}
}

func str(name string, maxLen int, desc string) *odata.Property {
	return prop(name, odata.EdmString, maxLen, desc)
}
func i64(name, desc string) *odata.Property  { return prop(name, odata.EdmInt64, 0, desc) }
func dec(name, desc string) *odata.Property  { return prop(name, odata.EdmDecimal, 0, desc) }
func date(name, desc string) *odata.Property { return prop(name, odata.EdmDateTimeOffset, 0, desc) }
func boolean(name, desc string) *odata.Property {
	return prop(name, odata.EdmBoolean, 0, desc)
}

func auto(p *odata.Property) *odata.Property { p.Computed = true; return p }
func must(p *odata.Property) *odata.Property { p.Mandatory = true; return p }

func coll(name, typ string) *odata.NavigationProperty {
	return &odata.NavigationProperty{Name: name, Type: typ, Collection: true, ContainsTarget: true}
}
func single(name, typ string) *odata.NavigationProperty {
	return &odata.NavigationProperty{Name: name, Type: typ, ContainsTarget: true}
}

func entity(name, desc string, key []string, props []*odata.Property, navs ...*odata.NavigationProperty) *odata.EntityType {
	t := &odata.EntityType{Name: name, Description: desc, Key: key, Properties: props, Navigations: navs}
	for _, p := range props {
		if t.IsKey(p.Name) {
			p.Nullable = false
		}
	}
	return t
}

func textType(name string) *odata.EntityType {
	return entity(name, "Text", []string{"TEXT"}, []*odata.Property{
		str("TEXT", 0, "Text"), boolean("APPEND", "Append to the existing text"), boolean("SIGNATURE", "Add the user's signature"),
	})
}

// DemoMetadata returns the built-in demo schema: every entity and sub-form
// the contract names (its part families, parts, orders, invoices, customers
// and abilities, attachments and text sub-forms) with the fields and
// MaxLengths it gives,
// plus plausible extras. Auto-unique keys carry Core.Computed; mandatory
// fields carry Mandatory (written to $metadata from 25.1). CURRENCIES is
// readable but not open to the API for writes.
func DemoMetadata() *odata.Metadata {
	types := []*odata.EntityType{
		entity("CUSTOMERS", "Customers", []string{"CUSTNAME"}, []*odata.Property{
			must(str("CUSTNAME", 16, "Customer Number")), must(str("CUSTDES", 48, "Customer Name")),
			str("PHONE", 30, "Phone"), str("ADDRESS", 80, "Address"), str("STATE", 40, "City"),
			str("ZIP", 10, "Zip Code"), str("AGENTCODE", 6, "Sales Rep"), auto(i64("CUST", "Customer (ID)")),
		}, coll("GENCUSTNOTES_SUBFORM", "GENCUSTNOTES_SUBFORM"), single("SHIPTO2_SUBFORM", "SHIPTO2_SUBFORM"),
			single("CUSTOMERSTEXT_SUBFORM", "CUSTOMERSTEXT_SUBFORM")),
		entity("GENCUSTNOTES_SUBFORM", "Customer Notes", []string{"NOTENUM"}, []*odata.Property{
			i64("NOTENUM", "Note Number"), str("SUBJECT", 80, "Subject"), date("CURDATE", "Date"), str("OWNERLOGIN", 20, "Owner"),
		}),
		entity("SHIPTO2_SUBFORM", "Ship-To Address", []string{"CUSTNAME"}, []*odata.Property{
			str("CUSTNAME", 16, "Customer Number"), str("NAME", 48, "Name"), str("PHONE", 30, "Phone"),
			str("ADDRESS", 80, "Address"), str("STATE", 40, "City"), str("ZIP", 10, "Zip Code"),
		}),
		textType("CUSTOMERSTEXT_SUBFORM"),
		entity("LOGPART", "Parts", []string{"PARTNAME"}, []*odata.Property{
			must(str("PARTNAME", 22, "Part Number")), must(str("PARTDES", 48, "Part Description")),
			str("BARCODE", 16, "Barcode"), str("EXTPART", 22, "External Part Number"), str("UNITNAME", 3, "Unit"),
			dec("PRICE", "Price"), str("FAMILYNAME", 8, "Part Family"), auto(i64("PART", "Part (ID)")),
		}),
		entity("FAMILY_LOG", "Part Families", []string{"FAMILYNAME"}, []*odata.Property{
			must(str("FAMILYNAME", 8, "Family")), must(str("FAMILYDESC", 32, "Family Description")),
			str("EFAMILYDES", 32, "Family Description (Lang 2)"), str("TECHFLAG", 1, "Technical"),
			str("DEBITFLAG", 1, "Debit Flag"), str("PROJPROCESS", 1, "Project Process"), auto(i64("FAMILY", "Family (ID)")),
		}, coll("FAMILY_LOGPART_SUBFORM", "FAMILY_LOGPART_SUBFORM"), coll("FAMILYMALF_SUBFORM", "FAMILYMALF_SUBFORM"),
			coll("FAMILYSERVTYPES_SUBFORM", "FAMILYSERVTYPES_SUBFORM"), coll("FAMILYREQLABANALYSES_SUBFORM", "FAMILYREQLABANALYSES_SUBFORM")),
		entity("FAMILY_LOGPART_SUBFORM", "Parts in Family", []string{"PART"}, []*odata.Property{
			str("PARTNAME", 22, "Part Number"), str("TYPE", 1, "Type"), str("PARTDES", 48, "Part Description"),
			str("STATDES", 12, "Status"), i64("PART", "Part (ID)"),
		}),
		entity("FAMILYMALF_SUBFORM", "Malfunctions", []string{"KLINE"}, []*odata.Property{
			str("MALFCODE", 8, "Malfunction"), str("MALFDES", 32, "Description"), i64("KLINE", "Line"),
		}),
		entity("FAMILYSERVTYPES_SUBFORM", "Service Types", []string{"KLINE"}, []*odata.Property{
			str("SERVTYPECODE", 8, "Service Type"), str("SERVTYPEDES", 32, "Description"), i64("KLINE", "Line"),
		}),
		entity("FAMILYREQLABANALYSES_SUBFORM", "Required Lab Analyses", []string{"KLINE"}, []*odata.Property{
			str("ANALYSISCODE", 8, "Analysis"), str("ANALYSISDES", 32, "Description"), i64("KLINE", "Line"),
		}),
		entity("ORDERS", "Sales Orders", []string{"ORDNAME"}, []*odata.Property{
			str("ORDNAME", 16, "Order"), must(str("CUSTNAME", 16, "Customer Number")), str("CDES", 48, "Customer Name"),
			date("CURDATE", "Date"), str("ORDSTATUSDES", 12, "Status"), str("DETAILS", 24, "Details"),
			auto(i64("ORD", "Order (ID)")),
		}, coll("ORDERITEMS_SUBFORM", "ORDERITEMS_SUBFORM"), single("ORDERSTEXT_SUBFORM", "ORDERSTEXT_SUBFORM"),
			coll("EXTFILES_SUBFORM", "EXTFILES_SUBFORM")),
		entity("ORDERITEMS_SUBFORM", "Order Items", []string{"KLINE"}, []*odata.Property{
			must(str("PARTNAME", 22, "Part Number")), str("PDES", 48, "Part Description"), must(dec("TQUANT", "Quantity")),
			str("TUNITNAME", 3, "Unit"), dec("PRICE", "Unit Price"), str("ICODE", 3, "Currency"),
			date("DUEDATE", "Due Date"), i64("KLINE", "Line"),
		}, single("ORDERITEMSTEXT_SUBFORM", "ORDERITEMSTEXT_SUBFORM")),
		textType("ORDERITEMSTEXT_SUBFORM"),
		textType("ORDERSTEXT_SUBFORM"),
		entity("EXTFILES_SUBFORM", "Attachments", []string{"EXTFILENUM"}, []*odata.Property{
			str("EXTFILEDES", 80, "Description"), i64("EXTFILENUM", "Line"), str("EXTFILENAME", 0, "File"),
			str("SUFFIX", 8, "File Type"), date("CURDATE", "Date"), date("UDATE", "Updated"), i64("FILESIZE", "File Size"),
			str("NOSEND", 1, "Do Not Send"), str("STATUS", 12, "Status"), str("EI_COND", 1, "E-Invoice"),
			str("USERLOGIN", 20, "Attached By"), str("LUSERLOGIN", 20, "Updated By"),
		}),
		entity("AINVOICES", "Sales Invoices", []string{"IVNUM", "IVTYPE", "DEBIT"}, []*odata.Property{
			str("IVNUM", 16, "Invoice"), must(str("IVTYPE", 1, "Invoice Type")), must(str("DEBIT", 1, "Debit/Credit")),
			must(str("CUSTNAME", 16, "Customer Number")), str("CDES", 48, "Customer Name"), date("IVDATE", "Invoice Date"),
			str("DETAILS", 24, "Details"), auto(i64("IV", "Invoice (ID)")),
		}, coll("AINVOICEITEMS_SUBFORM", "AINVOICEITEMS_SUBFORM")),
		entity("AINVOICEITEMS_SUBFORM", "Invoice Items", []string{"KLINE"}, []*odata.Property{
			must(str("PARTNAME", 22, "Part Number")), str("PDES", 48, "Part Description"), must(dec("TQUANT", "Quantity")),
			dec("PRICE", "Unit Price"), i64("KLINE", "Line"),
		}),
		entity("ABILITIES", "Abilities", []string{"ABILITYCODE"}, []*odata.Property{
			must(str("ABILITYCODE", 3, "Ability Code")), must(str("ABILITYDES", 32, "Ability Description")),
			auto(i64("ABILITY", "Ability (ID)")),
		}, coll("ABILITYVALUES_SUBFORM", "ABILITYVALUES_SUBFORM")),
		entity("ABILITYVALUES_SUBFORM", "Ability Values", []string{"KLINE"}, []*odata.Property{
			str("VALUENAME", 8, "Value"), str("VALUEDES", 32, "Value Description"), i64("KLINE", "Line"),
		}),
		entity("CURRENCIES", "Currencies", []string{"CODE"}, []*odata.Property{
			str("CODE", 3, "Currency"), str("NAME", 20, "Currency Name"),
		}),
	}
	sets := []string{"CUSTOMERS", "LOGPART", "FAMILY_LOG", "ORDERS", "AINVOICES", "ABILITIES", "CURRENCIES"}
	m := &odata.Metadata{Namespace: "Service.OData", Container: "DefaultContainer", Types: types}
	m.Reindex()
	for _, s := range sets {
		m.Sets = append(m.Sets, &odata.EntitySet{Name: s, Type: m.Type(s)})
	}
	m.Reindex()
	return m
}

// demoRules are the screen behaviours of the demo schema, by type name.
func demoRules() map[string]*rules {
	custRef := ref{field: "CUSTNAME", set: "CUSTOMERS", fill: map[string]string{"CDES": "CUSTDES"}}
	partRef := ref{field: "PARTNAME", set: "LOGPART", fill: map[string]string{"PDES": "PARTDES"}}
	return map[string]*rules{
		"FAMILY_LOG": {allowed: map[string][]string{"DEBITFLAG": {"Y", "N", ""}}},
		"LOGPART":    {refs: []ref{{field: "FAMILYNAME", set: "FAMILY_LOG"}}},
		"FAMILY_LOGPART_SUBFORM": {refs: []ref{{field: "PARTNAME", set: "LOGPART",
			fill: map[string]string{"PARTDES": "PARTDES", "PART": "PART"}}}},
		"ORDERS":                 {refs: []ref{custRef}, numbered: "ORDNAME", prefix: "SO"},
		"ORDERITEMS_SUBFORM":     {refs: []ref{partRef}},
		"AINVOICES":              {refs: []ref{custRef}, numbered: "IVNUM", prefix: "IV", allowed: map[string][]string{"DEBIT": {"D", "C"}}},
		"AINVOICEITEMS_SUBFORM":  {refs: []ref{partRef}},
		"ORDERSTEXT_SUBFORM":     {text: textHTML},
		"ORDERITEMSTEXT_SUBFORM": {text: textHTML},
		"CUSTOMERSTEXT_SUBFORM":  {text: textPlain},
		"CURRENCIES":             {readOnly: true},
	}
}

// demoSeed is the data a fresh demo sandbox holds: the read-only currencies.
func demoSeed() map[string][]map[string]any {
	return map[string][]map[string]any{
		"CURRENCIES": {
			{"CODE": "EUR", "NAME": "Euro"},
			{"CODE": "ILS", "NAME": "New Israeli Shekel"},
			{"CODE": "USD", "NAME": "US Dollar"},
		},
	}
}
