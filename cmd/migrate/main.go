// Command migrate loads CSV and Excel data into an ERP's OData service from a
// declarative plan. See README.md and docs/cli.md.
package main

import (
	"context"
	"os"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
