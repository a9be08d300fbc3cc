package odata

import (
	"html"
	"regexp"
	"strings"
)

var (
	styleOrScript = regexp.MustCompile(`(?is)<(style|script)\b[^>]*>.*?</(style|script)\s*>`)
	anyTag        = regexp.MustCompile(`<[^<>]*>`)
)

// TextContent reduces the TEXT of a text sub-form (docs/service.md, Text
// sub-forms) to what it says: a style block with its rules and every tag go
// (each tag leaves a space), entities are decoded and whitespace collapsed.
// Real servers read texts back normalised, with a <style> block, <p dir=rtl>
// wrappers and no whitespace before <br> (docs/servers.md, Reading: "order.
// <br> There" reads "order.<br> There"), so a text written is found in one
// read back by its content, never by its bytes.
func TextContent(text string) string {
	text = styleOrScript.ReplaceAllString(text, " ")
	text = anyTag.ReplaceAllString(text, " ")
	return strings.Join(strings.Fields(html.UnescapeString(text)), " ")
}
