package odata

import "strings"

// IsSecretVariable reports whether an environment variable holds one of the
// tool's own credentials: MIGRATE_PASSWORD, MIGRATE_TOKEN, MIGRATE_APP_KEY,
// MIGRATE_CLIENT_SECRET, and any MIGRATE_…_PASSWORD, _TOKEN, _SECRET or
// _KEY that a connection of its own may use. Such a variable is read only
// by the code that authenticates: never by a plan's env(), never passed to
// a program the tool starts.
func IsSecretVariable(name string) bool {
	n := strings.ToUpper(name)
	if !strings.HasPrefix(n, "MIGRATE_") {
		return false
	}
	for _, suffix := range []string{"_PASSWORD", "_TOKEN", "_SECRET", "_KEY"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

// WithoutSecrets returns environ (KEY=VALUE entries, as os.Environ gives)
// without the tool's secret variables.
func WithoutSecrets(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !IsSecretVariable(name) {
			out = append(out, kv)
		}
	}
	return out
}
