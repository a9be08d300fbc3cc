package odata

import (
	"reflect"
	"testing"
)

func TestIsSecretVariable(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"MIGRATE_PASSWORD":          true,
		"MIGRATE_TOKEN":             true,
		"MIGRATE_APP_KEY":           true,
		"MIGRATE_CLIENT_SECRET":     true,
		"migrate_token":             true,
		"MIGRATE_TEMPLATE_PASSWORD": true,
		"MIGRATE_USER":              false,
		"MIGRATE_TARGET":            false,
		"MIGRATE_APP_ID":            false,
		"WAREHOUSE_TOKEN":           false,
		"HOME":                      false,
	} {
		if got := IsSecretVariable(name); got != want {
			t.Errorf("IsSecretVariable(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestWithoutSecrets(t *testing.T) {
	t.Parallel()
	got := WithoutSecrets([]string{"HOME=/root", "MIGRATE_TOKEN=abc", "MIGRATE_USER=api", "MIGRATE_PASSWORD=x=y", "PATH=/bin"})
	want := []string{"HOME=/root", "MIGRATE_USER=api", "PATH=/bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WithoutSecrets = %q, want %q", got, want)
	}
}

// TestMayHoldCredential: what env() refuses: the tool's secrets
// and user names, and any variable whose name says it holds a credential.
func TestMayHoldCredential(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"MIGRATE_TOKEN":         true,
		"MIGRATE_USER":          true,
		"MIGRATE_T_USER":        true,
		"MIGRATE_T_PASSWORD":    true,
		"WAREHOUSE_TOKEN":       true,
		"GITHUB_TOKEN":          true,
		"DB_PASSWORD":           true,
		"db_passwd":             true,
		"MYSQL_PWD":             true,
		"AWS_SECRET_ACCESS_KEY": true,
		"AWS_ACCESS_KEY_ID":     true,
		"API-KEY":               true,
		"STRIPE_APIKEY":         true,
		"GOOGLE_CREDENTIALS":    true,
		"NPMTOKEN":              true,
		"PWD":                   false,
		"OLDPWD":                false,
		"MIGRATE_TARGET":        false, // handed over without its user information
		"MIGRATE_APP_ID":        false,
		"WAREHOUSE":             false,
		"MONKEY":                false,
		"HOME":                  false,
		"KEYBOARD_LAYOUT":       false,
	} {
		if got := MayHoldCredential(name); got != want {
			t.Errorf("MayHoldCredential(%q) = %v, want %v", name, got, want)
		}
	}
}
