package odata

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is the ERP system version that gates features (docs/service.md,
// Versions).
type Version struct {
	Major, Minor int
	// Raw is the value GetSystemVersion returned ("23.1-srv01") or the one
	// declared, or "" when the server has no version function (older than
	// 22.0) and none was declared.
	Raw string
	// From says where the version came from: the function that answered
	// ("GetSystemVersion()") or where it was declared ("--system-version").
	From string
	// Standard: a service of the odata dialect, which has no system version
	// (StandardVersion).
	Standard bool
}

// ParseVersion reads "25.1", "23.0.12" or "23.1-server.example"
// (docs/service.md, Queries: <version>-<server address>).
func ParseVersion(s string) (Version, error) {
	v := strings.TrimSpace(s)
	if i := strings.IndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return Version{}, fmt.Errorf("system version %q: want MAJOR.MINOR", s)
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || maj < 0 || min < 0 {
		return Version{}, fmt.Errorf("system version %q: want MAJOR.MINOR", s)
	}
	return Version{Major: maj, Minor: min, Raw: strings.TrimSpace(s)}, nil
}

func (v Version) String() string {
	if v.Standard {
		return v.Raw
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// AtLeast reports whether v is major.minor or newer.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// Feature gates of docs/service.md, Versions.

func (v Version) Writes() bool       { return v.AtLeast(17, 2) }
func (v Version) Expand() bool       { return v.AtLeast(18, 1) }
func (v Version) Language() bool     { return v.AtLeast(18, 2) }
func (v Version) TextSubforms() bool { return v.AtLeast(20, 0) }

// Batch reports $batch, $skip and personal access tokens, which arrived
// together in 19.1 (docs/servers.md, Connection).
func (v Version) Batch() bool              { return v.AtLeast(19, 1) }
func (v Version) DataURIAttachments() bool { return v.AtLeast(21, 0) }
func (v Version) ParentChildResponse() bool {
	return v.AtLeast(21, 1)
}
func (v Version) AttachmentSuffix() bool    { return v.AtLeast(22, 0) }
func (v Version) ClearMetadata() bool       { return v.AtLeast(22, 0) }
func (v Version) JSONBatchResponses() bool  { return v.AtLeast(22, 1) }
func (v Version) GetMetadataFor() bool      { return v.AtLeast(25, 0) }
func (v Version) MandatoryAnnotation() bool { return v.AtLeast(25, 1) }

// BatchLimit is the most operations one $batch may carry (docs/service.md,
// Limits).
func (v Version) BatchLimit() int {
	if v.AtLeast(21, 0) {
		return 100
	}
	return 1000
}

// Known reports whether v holds a version at all: Version{} stands for a
// server without a version function (older than 22.0).
func (v Version) Known() bool { return v.Raw != "" || v.Major != 0 || v.Minor != 0 }
