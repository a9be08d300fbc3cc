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

// Variables are the environment variables that configure a target and
// its credentials, without their MIGRATE_ prefix. A plan's connection
// NAME reads each as MIGRATE_NAME_X (ConnectionPrefix).
var Variables = []string{
	"TOKEN", "USER", "PASSWORD", "TARGET", "AUTH", "APP_ID", "APP_KEY",
	"CLIENT_ID", "CLIENT_SECRET", "CLIENT_AUTH", "AUTH_URL", "SYSTEM_VERSION",
	"TOKEN_URL", "SCOPES",
}

// ConnectionPrefix starts the variables of the plan's connection name:
// MIGRATE_TEMPLATE_ for template. Names that differ only in case share
// theirs.
func ConnectionPrefix(name string) string { return "MIGRATE_" + strings.ToUpper(name) + "_" }

// credentialWords are the words of a variable's name (split at "_", "-"
// and ".") that say it holds a credential, whoever's it is.
var credentialWords = map[string]bool{
	"PASSWORD": true, "PASSWD": true, "PASSPHRASE": true, "PASS": true, "PWD": true,
	"SECRET": true, "SECRETS": true, "TOKEN": true, "TOKENS": true, "KEY": true,
	"APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true, "CREDS": true,
	"AUTH": true, "COOKIE": true, "SESSION": true, "PRIVATE": true,
}

// MayHoldCredential reports whether a plan's env() must refuse the
// variable: the tool's own secrets (IsSecretVariable) and user names
// (MIGRATE_USER, MIGRATE_<NAME>_USER), and any variable whose name says
// it holds a password, token, key or secret (GITHUB_TOKEN, DB_PASSWORD,
// AWS_SECRET_ACCESS_KEY). PWD and OLDPWD, the working folders, do not.
func MayHoldCredential(name string) bool {
	n := strings.ToUpper(name)
	if IsSecretVariable(n) || strings.HasPrefix(n, "MIGRATE_") && strings.HasSuffix(n, "_USER") {
		return true
	}
	if n == "PWD" || n == "OLDPWD" {
		return false
	}
	for _, w := range strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if credentialWords[w] {
			return true
		}
	}
	for _, s := range []string{"PASSWORD", "PASSWD", "TOKEN", "SECRET", "APIKEY"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}
