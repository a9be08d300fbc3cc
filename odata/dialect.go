package odata

import (
	"fmt"
	"regexp"
	"strings"
)

// Dialect is the kind of service a client speaks to: the ERP's own
// (DialectPriority, the default, with its functions, version gates, URL
// segments and quirks: docs/service.md and docs/servers.md) or any other
// service that speaks OData 4.0 as the standard says (DialectOData:
// docs/other-services.md).
type Dialect string

// The dialects.
const (
	DialectPriority Dialect = "priority"
	DialectOData    Dialect = "odata"
)

// Dialects are the dialects' names, the default first.
var Dialects = []string{string(DialectPriority), string(DialectOData)}

// ParseDialect reads a dialect's name; "" is the default.
func ParseDialect(s string) (Dialect, error) {
	switch Dialect(strings.ToLower(strings.TrimSpace(s))) {
	case "", DialectPriority:
		return DialectPriority, nil
	case DialectOData:
		return DialectOData, nil
	}
	return "", fmt.Errorf("dialect %q: want %s", s, strings.Join(Dialects, " or "))
}

// Standard reports whether d is the standard's dialect.
func (d Dialect) Standard() bool { return d == DialectOData }

// StandardVersion is the version a service of the odata dialect is taken
// to be: it has no system version, and every feature the gates ask about
// is the standard's (writes, $expand, $batch with JSON answers, deep
// insert answered whole). Its String says so.
var StandardVersion = Version{Major: 25, Minor: 1, Raw: "OData 4.0", From: "the OData standard (dialect odata)", Standard: true}

// Guid is an Edm.Guid value. It is written bare in keys and filters
// (ORDERS(3a943e5e-c925-4fae-b2d5-9e2f0a36c6d8)), as a JSON string in
// bodies.
type Guid string

var guidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ParseGuid reads a Guid's text (8-4-4-4-12 hexadecimal digits, spaces
// around them ignored).
func ParseGuid(s string) (Guid, error) {
	t := strings.TrimSpace(s)
	if !guidRE.MatchString(t) {
		return "", fmt.Errorf("%q is not a Guid (8-4-4-4-12 hexadecimal digits)", s)
	}
	return Guid(t), nil
}

// Date is an Edm.Date value, a calendar day as "2026-11-03": written bare
// in keys and filters, as a JSON string in bodies (never a date-time,
// which a standard service refuses for a Date).
type Date string

var dateRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// standardRoot is a service root of the odata dialect: any absolute http(s)
// URL, without the ERP's configuration-file and company segments.
func standardRoot(base string) (string, error) {
	u, err := rootURL(base, "https://host/odata/v4/service")
	if err != nil {
		return "", err
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}
