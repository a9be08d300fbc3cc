package sandbox

import (
	"net/http"

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
// 403 as spec 6 has it, or, as real servers answer (SERVICE-NOTES "Status
// codes"), a 400 screen error in the installation's language.
func (c *call) noPermission(t *odata.EntityType) *apiError {
	if c.s.quirk(QuirkPermission400) {
		return c.screenErr(http.StatusBadRequest, t, nil, "noPermission", t.Name)
	}
	return &apiError{status: http.StatusForbidden, code: "Forbidden", msg: c.lang.text("noPermission", t.Name)}
}
