package sandbox

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// apiError is an error answer: a screen error (docs/service.md, Errors,
// FORM/InterfaceErrors) or a protocol error (OData JSON error body).
type apiError struct {
	status int
	code   string // OData error code, for protocol errors
	msg    string
	screen bool
	form   string // FORM TYPE of a screen error
	typ    *odata.EntityType
	vals   map[string]any // the submitted values a screen error echoes
	header http.Header
}

func (e *apiError) Error() string { return e.msg }

func protoErr(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// lang is a language code of the URL (docs/service.md, Service root): 1
// English, 2 Hebrew.
type lang int

const (
	langEnglish lang = 1
	langHebrew  lang = 2
)

// The screen messages the sandbox raises, in English and Hebrew.
var messages = map[string][2]string{
	"required":     {"%s: a value is required.", "%s: חובה להזין ערך."},
	"tooLong":      {"%s: the value is longer than %d characters.", "%s: הערך ארוך מ-%d תווים."},
	"notAllowed":   {"%s: the value %q is not allowed; use %s.", "%s: הערך %q אינו מותר; יש להשתמש ב-%s."},
	"badType":      {"%s: %s is not a valid %s.", "%s: %s אינו ערך %s תקין."},
	"missing":      {"%s %q does not exist in %s.", "%s %q לא קיים ב-%s."},
	"exists":       {"A record with key %s already exists.", "כבר קיימת רשומה עם המפתח %s."},
	"readOnly":     {"%s is a read-only field.", "%s הוא שדה לקריאה בלבד."},
	"notOpen":      {"The form %s is not open to the API for this operation.", "המסך %s אינו פתוח לממשק עבור פעולה זו."},
	"unknown":      {"%s is not a field of %s.", "%s אינו שדה של %s."},
	"noPermission": {"Insufficient permissions for the form %s.", "אין לך הרשאות מספיקות למסך %s."},
	"noRecord":     {"No record %s in %s.", "אין רשומה %s ב-%s."},
	"linePrefix":   {"Line %d- ", "שורה %d- "},
}

func (l lang) text(key string, args ...any) string {
	i := 0
	if l == langHebrew {
		i = 1
	}
	return fmt.Sprintf(messages[key][i], args...)
}

// screenErr builds a screen error in the request's language.
func (c *call) screenErr(status int, t *odata.EntityType, vals map[string]any, key string, args ...any) *apiError {
	return c.screenText(status, t, vals, c.lang.text(key, args...))
}

func (c *call) screenText(status int, t *odata.EntityType, vals map[string]any, text string) *apiError {
	name := ""
	if t != nil {
		name = t.Name
	}
	return &apiError{status: status, screen: true, form: name, typ: t, vals: vals,
		msg: c.lang.text("linePrefix", 1) + text}
}

// errorBody renders e as the version and kind ask: XML FORM before 23.0 and
// JSON FORM from 23.0 for screen errors; the OData JSON error otherwise.
func (s *Server) errorBody(e *apiError) (contentType string, body []byte) {
	const jsonType = "application/json;odata.metadata=minimal"
	switch {
	case !e.screen:
		return jsonType, odata.ODataErrorJSON(e.code, e.msg)
	case s.quirk(QuirkJSONErrors) && s.version.AtLeast(jsonErrorsReally.Major, jsonErrorsReally.Minor):
		// As real servers: the parts of a message as a list of texts.
		return jsonType, odata.ScreenErrorJSON(e.form, strings.Split(e.msg, "; "))
	case s.version.AtLeast(jsonErrorsFrom.Major, jsonErrorsFrom.Minor):
		return jsonType, odata.ScreenErrorJSON(e.form, []string{e.msg})
	}
	var values []odata.FormValue
	if e.typ != nil {
		for _, p := range e.typ.Properties {
			v, ok := e.vals[p.Name]
			if p.Computed {
				v, ok = 0, true // docs/service.md, Errors: the auto-unique key with value 0
			}
			if ok && v != nil {
				values = append(values, odata.FormValue{Name: p.Name, Value: fmt.Sprint(jsonValue(v))})
			}
		}
	}
	return "application/xml", odata.ScreenErrorXML(e.form, values, []string{e.msg})
}

// jsonErrorsFrom is the first version that sends screen errors as JSON;
// jsonErrorsReally the one real servers switch at (QuirkJSONErrors).
var (
	jsonErrorsFrom   = odata.Version{Major: 23, Minor: 0}
	jsonErrorsReally = odata.Version{Major: 19, Minor: 1}
)
