package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/read"
	"github.com/migrate-tool/migrate/source"
)

// TestCause: whose trouble a run's error is, for apply's exit code
// (a CSV syntax error and a full temporary folder were the
// target's, exit 3).
func TestCause(t *testing.T) {
	t.Parallel()
	csv := &source.Error{File: "orders.csv", Line: 3, Col: 8, Err: errors.New(`extraneous or missing " in quoted-field`)}
	tests := []struct {
		name          string
		err           error
		source, local bool
	}{
		{"CSV syntax error", fmt.Errorf("step orders: %w", csv), true, false},
		{"temporary folder not a folder", fmt.Errorf("a temporary file for the rows: %w", &fs.PathError{Op: "open", Path: "/tmp/x/migrate-rows-1", Err: syscall.ENOTDIR}), false, true},
		{"temporary folder full", fmt.Errorf("writing the rows: %w", &fs.PathError{Op: "write", Path: "/tmp/migrate-rows-1", Err: syscall.ENOSPC}), false, true},
		{"disk full, bare", syscall.ENOSPC, false, true},
		{"connection refused", &url.Error{Op: "Post", URL: "http://127.0.0.1:1/$batch", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, false, false},
		{"server error", &odata.Error{Status: 500, Messages: []string{"boom"}}, false, false},
		{"a company source repeats a page", fmt.Errorf("step families: %w", &source.Error{File: "template:FAMILY_LOG", Err: &read.Error{Set: "FAMILY_LOG", Err: errors.New("the server answered the row FAMILY_LOG('F01') again")}}), false, false},
		{"a company source unreachable", &source.Error{File: "template:FAMILY_LOG", Err: &url.Error{Op: "Get", URL: "http://127.0.0.1:1/FAMILY_LOG", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}}, false, false},
	}
	for _, tt := range tests {
		if got := SourceBroken(tt.err); got != tt.source {
			t.Errorf("%s: SourceBroken = %v, want %v", tt.name, got, tt.source)
		}
		if got := LocalResource(tt.err); got != tt.local {
			t.Errorf("%s: LocalResource = %v, want %v", tt.name, got, tt.local)
		}
	}
}
