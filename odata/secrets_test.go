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
