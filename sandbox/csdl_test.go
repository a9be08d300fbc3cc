package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/sandbox"
)

// csdlChecker converts CSDL XML with the OASIS TC's npm package odata-csdl
// in strict mode; any message or error fails the conversion.
const csdlChecker = `
const csdl = require("odata-csdl");
const fs = require("fs");
const messages = [];
try {
  const j = csdl.xml2json(fs.readFileSync(process.argv[1]), { messages, strict: true });
  if (messages.length > 0) { console.error(JSON.stringify(messages)); process.exit(1); }
  console.log(JSON.stringify(j));
} catch (e) { console.error(e.message); process.exit(1); }
`

// odataCSDL returns a directory holding node_modules/odata-csdl, installing
// it when needed ($SANDBOX_CSDL_DIR names a ready one), or skips the test.
func odataCSDL(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: skipping the CSDL validity check")
	}
	dir := os.Getenv("SANDBOX_CSDL_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "migrate-sandbox-odata-csdl")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "odata-csdl")); err == nil {
		return dir
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: skipping the CSDL validity check")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "odata-csdl").CombinedOutput()
	if err != nil {
		t.Skipf("npm install odata-csdl failed (registry unavailable?): %v\n%s", err, out)
	}
	return dir
}

// The served $metadata is valid CSDL for the OASIS converter.
func TestSpec2_2MetadataIsValidCSDL(t *testing.T) {
	dir := odataCSDL(t)
	for _, version := range []string{"17.1", "25.1"} {
		c := start(t, sandbox.Options{SystemVersion: version})
		xml := filepath.Join(t.TempDir(), "metadata.xml")
		if err := os.WriteFile(xml, c.must(200, "GET", "/$metadata", nil).body, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("node", "-e", csdlChecker, xml)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("%s: odata-csdl refuses the metadata: %v\n%s", version, err, stderr)
		}
		js := string(out)
		for _, want := range []string{`"$Kind":"EntityType"`, `"ORDERS"`, `"$Key":["IVNUM","IVTYPE","DEBIT"]`, `"@Core.Computed":true`} {
			if !strings.Contains(js, want) {
				t.Errorf("%s: converted CSDL lacks %s", version, want)
			}
		}
		if mandatory := strings.Contains(js, `"@Service.OData.Mandatory":true`); mandatory != (version == "25.1") {
			t.Errorf("%s: Mandatory annotations present: %v", version, mandatory)
		}
	}
}
