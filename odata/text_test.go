package odata

import "testing"

// What a text sub-form reads back as on real servers has the same content
// as what was written (docs/servers.md, Reading).
func TestTextContent(t *testing.T) {
	t.Parallel()
	tests := []struct{ written, readBack string }{
		{"Deliver the order. <br> There", `<style>p{margin:0}</style><p dir=rtl>Deliver the order.<br> There</p>`},
		{"<p>שלום  עולם</p>", "<STYLE type=\"text/css\">\n.x { a: b }\n</STYLE><p dir=rtl><p>שלום עולם</p></p>"},
		{"a&amp;b &lt;c&gt;", "<p dir=rtl>a&b &lt;c&gt;</p>"},
		{"line one<br>line two", "<p dir=rtl>line one<br/>line two</p>"},
	}
	for _, tt := range tests {
		w, r := TextContent(tt.written), TextContent(tt.readBack)
		if w != r || w == "" {
			t.Errorf("TextContent(%q) = %q, TextContent(%q) = %q; want equal", tt.written, w, tt.readBack, r)
		}
	}
	if got := TextContent("<style>b{}</style><p dir=rtl> Two  words<br></p>"); got != "Two words" {
		t.Errorf("TextContent = %q, want %q", got, "Two words")
	}
}
