package cli

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
)

// --quirks alone switches on every quirk; with a value, in either spelling,
// only those named; the flags after it still parse.
func TestQuirksFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--quirks"}, []string{"multipart-ids", "json-errors", "cold-forms", "normalised-texts", "metadata-wrong-type", "real-metadata", "permission-400", "oidc-accounts", "ignored-filters", "numbers-as-strings"}},
		{[]string{"--quirks", "--seed", "2"}, []string{"multipart-ids", "json-errors", "cold-forms", "normalised-texts", "metadata-wrong-type", "real-metadata", "permission-400", "oidc-accounts", "ignored-filters", "numbers-as-strings"}},
		{[]string{"--quirks", "cold-forms,json-errors", "--seed", "2"}, []string{"json-errors", "cold-forms"}},
		{[]string{"--quirks=multipart-ids"}, []string{"multipart-ids"}},
		{[]string{"--quirks", "all"}, []string{"multipart-ids", "json-errors", "cold-forms", "normalised-texts", "metadata-wrong-type", "real-metadata", "permission-400", "oidc-accounts", "ignored-filters", "numbers-as-strings"}},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var q quirksFlag
		fs.Var(&q, "quirks", "")
		fs.Int64("seed", 1, "")
		if err := fs.Parse(joinQuirksValue(tt.args)); err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if fs.NArg() != 0 {
			t.Errorf("%q: left %q unparsed", tt.args, fs.Args())
		}
		var got []string
		if n := quirksNote(q.set); n != "" {
			got = strings.Split(strings.TrimPrefix(n, ", quirks "), ",")
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: quirks %q, want %q", tt.args, got, tt.want)
		}
	}
}
