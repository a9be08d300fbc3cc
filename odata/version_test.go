package odata

import "testing"

// TestVersionGates holds each gate method to its row of the one table:
// the version that brought it has it, the minor release before does not.
func TestVersionGates(t *testing.T) {
	gates := []struct {
		name string
		has  func(Version) bool
		row  Gate
	}{
		{"Writes", Version.Writes, GateWrites},
		{"Expand", Version.Expand, GateExpand},
		{"Language", Version.Language, GateLanguage},
		{"Batch", Version.Batch, GateBatch},
		{"TextSubforms", Version.TextSubforms, GateTextSubforms},
		{"DataURIAttachments", Version.DataURIAttachments, GateDataURIAttachments},
		{"ParentChildResponse", Version.ParentChildResponse, GateParentChildResponse},
		{"AttachmentSuffix", Version.AttachmentSuffix, GateClearMetadata},
		{"ClearMetadata", Version.ClearMetadata, GateClearMetadata},
		{"JSONBatchResponses", Version.JSONBatchResponses, GateJSONBatchResponses},
		{"GetMetadataFor", Version.GetMetadataFor, GateGetMetadataFor},
		{"MandatoryAnnotation", Version.MandatoryAnnotation, GateMandatoryAnnotation},
	}
	// The versions of docs/service.md's Versions table.
	since := map[string]string{
		"Writes": "17.2", "Expand": "18.1", "Language": "18.2", "Batch": "19.1", "TextSubforms": "20.0",
		"DataURIAttachments": "21.0", "ParentChildResponse": "21.1", "AttachmentSuffix": "22.0", "ClearMetadata": "22.0",
		"JSONBatchResponses": "22.1", "GetMetadataFor": "25.0", "MandatoryAnnotation": "25.1",
	}
	for _, g := range gates {
		f := features[g.row]
		if f.Since() != since[g.name] {
			t.Errorf("%s: row %q says %s, want %s", g.name, f.Name, f.Since(), since[g.name])
		}
		at := Version{Major: f.Major, Minor: f.Minor}
		before := Version{Major: f.Major, Minor: f.Minor - 1}
		if f.Minor == 0 {
			before = Version{Major: f.Major - 1, Minor: 99}
		}
		if !g.has(at) || g.has(before) {
			t.Errorf("%s: %s has it %v, %s has it %v; want true, false", g.name, at, g.has(at), before, g.has(before))
		}
	}
	for _, f := range Features() {
		// The version function came with 22.0: what came with it or later,
		// a server without it surely lacks.
		if want := f.Major >= 22; f.AfterVersionFunction() != want {
			t.Errorf("%s (%s): AfterVersionFunction %v, want %v", f.Name, f.Since(), !want, want)
		}
	}
	if n := len(Features()); n != len(features) {
		t.Errorf("Features() lists %d gates, the table holds %d", n, len(features))
	}
}
