package sandbox

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// SetUnpermitted replaces the forms the API user may not write
// (Options.Unpermitted): a test takes a permission away, or grants it back
// to see a stopped load resume.
func (s *Server) SetUnpermitted(forms ...string) {
	set := make(map[string]bool, len(forms))
	for _, f := range forms {
		set[f] = true
	}
	s.permMu.Lock()
	s.denied = set
	s.permMu.Unlock()
}

func (s *Server) unpermitted(form string) bool {
	s.permMu.Lock()
	defer s.permMu.Unlock()
	return s.denied[form]
}

// noPermission is the answer to a write the user has no permission for:
// 403 for a forbidden screen, or, as real servers answer to a user without
// permission (docs/servers.md, Status codes), a 400 screen error in the
// installation's language.
func (c *call) noPermission(t *odata.EntityType) *apiError {
	if c.s.quirk(QuirkPermission400) {
		return c.screenErr(http.StatusBadRequest, t, nil, "noPermission", t.Name)
	}
	return &apiError{status: http.StatusForbidden, code: "Forbidden", msg: c.lang.text("noPermission", t.Name)}
}

// hideFields records Options.HiddenFields, each FORM.FIELD of a known
// entity type.
func (s *Server) hideFields(names []string) error {
	s.hidden = map[string]map[string]bool{}
	for _, name := range names {
		form, field, ok := strings.Cut(name, ".")
		t := s.meta.Type(form)
		if !ok || t == nil || t.Property(field) == nil {
			return fmt.Errorf("sandbox: hidden field %q: want FORM.FIELD, a field of an entity type of the metadata", name)
		}
		if t.IsKey(field) {
			return fmt.Errorf("sandbox: hidden field %q: a key field is always readable", name)
		}
		if s.hidden[t.Name] == nil {
			s.hidden[t.Name] = map[string]bool{}
		}
		s.hidden[t.Name][field] = true
	}
	return nil
}

// readable is t as the user may read it: without its hidden fields.
func (s *Server) readable(t *odata.EntityType) *odata.EntityType {
	h := s.hidden[t.Name]
	if len(h) == 0 {
		return t
	}
	props := make([]*odata.Property, 0, len(t.Properties))
	for _, p := range t.Properties {
		if !h[p.Name] {
			props = append(props, p)
		}
	}
	return &odata.EntityType{Name: t.Name, Description: t.Description, Key: t.Key, Properties: props, Navigations: t.Navigations}
}
