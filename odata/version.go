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

// Feature is one version gate of docs/service.md, Versions: what it
// allows, in the words migrate info shows, and the version that brought it.
type Feature struct {
	Name         string
	Major, Minor int
}

// Since is the version that brought f, as "22.1".
func (f Feature) Since() string { return fmt.Sprintf("%d.%d", f.Major, f.Minor) }

// Gate names a row of the table of version features.
type Gate int

// The rows of the table, one a gate; GateClearMetadata is also the
// version function's and attachments' SUFFIX (22.0).
const (
	GateWrites Gate = iota
	GateExpand
	GateLanguage
	GateBatch
	GateTextSubforms
	GateDataURIAttachments
	GateParentChildResponse
	GateClearMetadata
	GateJSONBatchResponses
	GateGetMetadataFor
	GateMandatoryAnnotation
)

// features is the one table of the version gates, oldest first: the
// methods below ask it, and migrate info lists it (Features).
var features = [...]Feature{
	GateWrites:              {"create, update and delete", 17, 2},
	GateExpand:              {"$expand of sub-forms", 18, 1},
	GateLanguage:            {"language code in the service root", 18, 2},
	GateBatch:               {"$batch, $skip and personal access tokens (migrate loads only with $batch)", 19, 1},
	GateTextSubforms:        {"text sub-forms (TEXT, APPEND, SIGNATURE)", 20, 0},
	GateDataURIAttachments:  {"attachments as data URIs", 21, 0},
	GateParentChildResponse: {"parent and children returned together", 21, 1},
	GateClearMetadata:       {"attachment SUFFIX, ClearEntityMetadata, version function", 22, 0},
	GateJSONBatchResponses:  {"JSON batch responses", 22, 1},
	GateGetMetadataFor:      {"GetMetadataFor", 25, 0},
	GateMandatoryAnnotation: {"Mandatory annotations", 25, 1},
}

// Features are the version gates, oldest first (a copy: the table is the
// gates').
func Features() []Feature { return append([]Feature(nil), features[:]...) }

// Has reports whether v has feature f.
func (v Version) Has(f Feature) bool { return v.AtLeast(f.Major, f.Minor) }

// Feature is g's row of the table.
func (g Gate) Feature() Feature { return features[g] }

// AfterVersionFunction reports whether f came with the version function
// (22.0) or later: a server that cannot say its version surely lacks it.
func (f Feature) AfterVersionFunction() bool {
	return Version{Major: f.Major, Minor: f.Minor}.Has(features[GateClearMetadata])
}

func (v Version) has(g Gate) bool { return v.Has(features[g]) }

// The gates, one a feature row.

func (v Version) Writes() bool       { return v.has(GateWrites) }
func (v Version) Expand() bool       { return v.has(GateExpand) }
func (v Version) Language() bool     { return v.has(GateLanguage) }
func (v Version) TextSubforms() bool { return v.has(GateTextSubforms) }

// Batch reports $batch, $skip and personal access tokens, which arrived
// together in 19.1 (docs/servers.md, Connection).
func (v Version) Batch() bool               { return v.has(GateBatch) }
func (v Version) DataURIAttachments() bool  { return v.has(GateDataURIAttachments) }
func (v Version) ParentChildResponse() bool { return v.has(GateParentChildResponse) }
func (v Version) AttachmentSuffix() bool    { return v.has(GateClearMetadata) }
func (v Version) ClearMetadata() bool       { return v.has(GateClearMetadata) }
func (v Version) JSONBatchResponses() bool  { return v.has(GateJSONBatchResponses) }
func (v Version) GetMetadataFor() bool      { return v.has(GateGetMetadataFor) }
func (v Version) MandatoryAnnotation() bool { return v.has(GateMandatoryAnnotation) }

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
