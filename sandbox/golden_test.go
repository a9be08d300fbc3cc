package sandbox_test

import (
	"testing"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/sandbox"
)

// docs/service.md, Metadata and Queries: the demo schema's documents, as
// served at 25.1 (with Mandatory) and 25.0 (without), and one GetMetadataFor
// fragment.
func TestSpec2_2MetadataGolden(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"25.0", "25.1"} {
		c := start(t, sandbox.Options{SystemVersion: v})
		golden.Check(t, "testdata/metadata-"+v+".xml", c.must(200, "GET", "/$metadata", nil).body)
		c.must(200, "GET", "/AINVOICES?$top=1", nil)
		golden.Check(t, "testdata/GetMetadataFor-AINVOICES-"+v+".xml", c.must(200, "GET", "/GetMetadataFor(entity='AINVOICES')", nil).body)
	}
}
