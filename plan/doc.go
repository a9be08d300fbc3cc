// Package plan owns the YAML plan (../shared/docs/PLAN-FORMAT.md): strict
// decoding through yaml.Node with file:line:col on every problem, static
// checks, checks against the service's metadata, and the dependency order of
// steps. It reads no source rows and talks no HTTP.
package plan
