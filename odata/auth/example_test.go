package auth_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/migrate-tool/migrate/odata/auth"
)

// How cmd/migrate chooses the credentials for a run.
func ExampleResolve() {
	env := map[string]string{"MIGRATE_USER": "demo", "MIGRATE_PASSWORD": "demo"}
	a, warning, err := auth.Resolve(auth.ResolveOptions{
		Flag:     "", // --auth
		PlanAuth: "", // plan.Target.Auth
		Target:   "https://erp.example.com/odata/Priority/tabula.ini/demo",
		Env:      func(k string) string { return env[k] },
		CacheDir: os.TempDir() + "/example-no-tokens",
	})
	if err != nil {
		fmt.Println(err) // exit code 3 or 2, as docs/cli.md says
		return
	}
	if warning != "" {
		fmt.Println(warning) // to stderr
	}
	fmt.Println(a.Method(), a)
	// Output:
	// warning: basic authentication (MIGRATE_USER/MIGRATE_PASSWORD) is deprecated by the service; set MIGRATE_TOKEN to a personal access token or run `migrate login`
	// basic auth.Basic{User: "demo", Password: [redacted]}
}

// How `migrate login` and `migrate logout` use the package.
func ExampleLogin() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	target := "https://erp.example.com/odata/Priority/tabula.ini/demo"
	tok, err := auth.Login(ctx, auth.LoginOptions{
		Target: target,
		// RedirectURI: "https://app.example.com/callback", // --redirect-uri: paste mode
		Stdin: os.Stdin, Stdout: os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Printf("logged in to %s until %s\n", tok.Target, tok.Expiry.Format(time.RFC3339))

	if removed, err := auth.Logout(target, ""); err == nil && removed {
		fmt.Println("logged out")
	}
}
