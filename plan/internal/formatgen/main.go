// Command formatgen writes what the plan format table (plan/format.go)
// says for people and editors: docs/plan.schema.json and the keys tables
// of docs/plan-format.md. Run it as `go generate ./plan`.
package main

import (
	"fmt"
	"os"

	"github.com/migrate-tool/migrate/plan"
)

func main() {
	if err := run("../docs/plan.schema.json", "../docs/plan-format.md"); err != nil {
		fmt.Fprintln(os.Stderr, "formatgen:", err)
		os.Exit(1)
	}
}

func run(schemaPath, docPath string) error {
	if err := os.WriteFile(schemaPath, plan.Schema(), 0o644); err != nil {
		return err
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		return err
	}
	out, err := plan.ReplaceKeysDoc(string(doc))
	if err != nil {
		return fmt.Errorf("%s: %w", docPath, err)
	}
	return os.WriteFile(docPath, []byte(out), 0o644)
}
