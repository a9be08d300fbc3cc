package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// DefaultCompany is the company a sandbox holds when Options.Companies
// names none: the one BasePath addresses.
const DefaultCompany = "demo"

// company is one company of the installation: the last segment of the
// service root (docs/service.md, Service root) selects it, and each holds
// data of its own in the same schema, as a real installation's companies do.
type company struct {
	name     string
	data     map[string]*table
	counters map[string]int64
}

// CompanyPath is the service root of a company of the sandbox: BasePath
// with its last segment replaced.
func CompanyPath(name string) string {
	return strings.TrimSuffix(BasePath, DefaultCompany) + name
}

// checkCompanies refuses a company name that cannot be a URL segment.
func checkCompanies(names []string) error {
	for _, n := range names {
		if !odata.IsCompanyName(n) {
			return fmt.Errorf("sandbox: company %q: want a name such as demo or test (no /, ?, #, %%, comma or space)", n)
		}
	}
	return nil
}

// newCompany makes a company's tables, empty but for what a new company of
// the demo schema starts with (currencies).
func (s *Server) newCompany(name string) *company {
	co := &company{name: name, data: map[string]*table{}, counters: map[string]int64{}}
	for _, set := range s.meta.Sets {
		co.data[set.Name] = &table{typ: set.Type, rows: map[string]*record{}}
	}
	if s.opts.Metadata == nil {
		for set, rows := range demoSeed() {
			tb := co.data[set]
			for _, row := range rows {
				rec, _ := s.loadRecord(tb.typ, row)
				tb.rows[keyString(tb.typ, rec.vals)] = rec
			}
		}
	}
	s.companies[name] = co
	if !slices.Contains(s.names, name) {
		s.names = append(s.names, name)
	}
	return co
}

// Companies names the companies the sandbox holds, in the order declared
// (then those only its state file had).
func (s *Server) Companies() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.names)
}

// SnapshotOf is Snapshot of one company; false when there is no such company.
func (s *Server) SnapshotOf(name string) (map[string][]map[string]any, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	co := s.companies[name]
	if co == nil {
		return nil, false
	}
	return s.snapshotLocked(co, true), true
}
