package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// Quirks of real servers (docs/servers.md) that Options.Quirks switches on.
// The contract (docs/service.md) leaves each of them open or real servers
// break it; a client that loads correctly against every quirk at once loads
// correctly against them.
const (
	// QuirkMultipartIDs: before 22.1 every batch answer is multipart/mixed;
	// a write's part carries Content-ID "ID-r1" (the vendor's example answers
	// g1 as g1-r1), a GET's part none.
	QuirkMultipartIDs = "multipart-ids"
	// QuirkJSONErrors: screen errors are JSON from 19.1 (not 23.0), with
	// "text" a list when the message has several lines and "/n" for a line
	// break inside one.
	QuirkJSONErrors = "json-errors"
	// QuirkColdForms: the first request to an entity set not used since
	// the server started answers 404 ("404 on the first probe, 200 on the
	// second"), whatever its method: a GET, a PATCH or a DELETE, whose 404
	// a client could take for a missing record, and a POST, whose 404 a
	// client could take for a failed record; nothing is changed, and any
	// request to the set warms it.
	QuirkColdForms = "cold-forms"
	// QuirkNormalisedTexts: text sub-forms read back with a <style> block,
	// a <p dir=rtl> wrapper and no whitespace before <br>.
	QuirkNormalisedTexts = "normalised-texts"
	// QuirkMetadataWrongType: GetMetadataFor of an entity whose set was
	// never read answers the document of another entity's type.
	QuirkMetadataWrongType = "metadata-wrong-type"
	// QuirkRealMetadata: $metadata as real installations write it: the
	// namespace Priority.OData, sub-form types without the _SUBFORM suffix,
	// Precision/Scale on decimals (values rounded to the Scale), DateType
	// Date on date-only fields (stored as the day in UTC),
	// Core.Permissions Read on fields the API may not write, and the
	// AutoUnique term instead of Core.Computed.
	QuirkRealMetadata = "real-metadata"
	// QuirkPermission400: a user without permission on a form (Options.
	// Unpermitted) gets a 400 screen error "insufficient permissions" in
	// the installation's language, not a 403 (docs/servers.md, Status codes).
	QuirkPermission400 = "permission-400"
	// QuirkOIDCAccounts: the authorization server of an on-premise
	// installation: endpoints at /accounts/connect/authorize and /token
	// (not /oauth2), found by discovery at
	// /accounts/.well-known/openid-configuration, the client secret taken
	// as a Basic header only (client_secret_basic).
	QuirkOIDCAccounts = "oidc-accounts"
	// QuirkIgnoredFilters: a $filter the server cannot apply, naming a
	// field it does not know or one the user may not read (Options.
	// HiddenFields), is ignored silently: 200 with the unfiltered rows
	// ("$filter=ZZZNOPE eq 'x'" answers every row), not a 400 as without the
	// quirk.
	QuirkIgnoredFilters = "ignored-filters"
	// QuirkNumbersAsStrings: read answers (a GET, a $batch's GETs) and the
	// echo of a write give Int64 and Decimal values as JSON strings
	// ("KLINE":"1", "PRICE":"500.0000"), as a server honouring
	// IEEE754Compatible=true does (CAP answers so): a client comparing
	// what it wrote with what it reads must compare by the field's type.
	QuirkNumbersAsStrings = "numbers-as-strings"
)

// quirkNames lists every quirk, in the order the documentation gives them.
var quirkNames = []string{
	QuirkMultipartIDs, QuirkJSONErrors, QuirkColdForms, QuirkNormalisedTexts, QuirkMetadataWrongType,
	QuirkRealMetadata, QuirkPermission400, QuirkOIDCAccounts, QuirkIgnoredFilters, QuirkNumbersAsStrings,
}

// QuirkNames returns the names of every quirk the sandbox can imitate.
func QuirkNames() []string { return append([]string(nil), quirkNames...) }

// AllQuirks returns a set with every quirk switched on.
func AllQuirks() map[string]bool {
	all := map[string]bool{}
	for _, q := range quirkNames {
		all[q] = true
	}
	return all
}

// ParseQuirks reads the value of --quirks: "all" (or empty) for every quirk,
// else names separated by commas.
func ParseQuirks(s string) (map[string]bool, error) {
	if s = strings.TrimSpace(s); s == "" || s == "all" || s == "true" {
		return AllQuirks(), nil
	}
	set := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if err := checkQuirk(name); err != nil {
			return nil, err
		}
		set[name] = true
	}
	return set, nil
}

func checkQuirk(name string) error {
	for _, q := range quirkNames {
		if q == name {
			return nil
		}
	}
	return fmt.Errorf("quirk %q: unknown (want all or some of %s)", name, strings.Join(quirkNames, ", "))
}

func checkQuirks(set map[string]bool) error {
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if err := checkQuirk(name); err != nil {
			return fmt.Errorf("sandbox: %v", err)
		}
	}
	return nil
}

// quirk reports whether a quirk is switched on.
func (s *Server) quirk(name string) bool { return s.opts.Quirks[name] }

// coldForm imitates QuirkColdForms for a request to path: the first
// request to an entity set since the server started answers 404 as a
// missing record does, and changes nothing; any request warms the set.
func (c *call) coldForm(path string) *apiError {
	s := c.s
	if !s.quirk(QuirkColdForms) {
		return nil
	}
	segs, err := parsePath(path)
	if err != nil {
		return nil
	}
	set := s.meta.EntitySet(segs[0].name)
	if set == nil {
		return nil
	}
	s.prepMu.Lock()
	cold := !s.warm[set.Name]
	s.warm[set.Name] = true
	s.prepMu.Unlock()
	if !cold {
		return nil
	}
	return c.notFound(set.Type, path)
}

// otherType imitates QuirkMetadataWrongType: GetMetadataFor of an entity
// whose set was not read since start (or since ClearEntityMetadata) answers
// with the type of the set listed after it.
func (s *Server) otherType(entity string) *odata.EntitySet {
	if !s.quirk(QuirkMetadataWrongType) || len(s.meta.Sets) < 2 {
		return nil
	}
	for i, set := range s.meta.Sets {
		if set.Name == entity {
			return s.meta.Sets[(i+1)%len(s.meta.Sets)]
		}
	}
	return nil
}

var spaceBeforeBr = regexp.MustCompile(`(?i)\s+(<br\b)`)

// readBackText is an HTML text as a read answers it: after the style block
// (docs/service.md, Text sub-forms), and with QuirkNormalisedTexts in a <p
// dir=rtl> wrapper without whitespace before <br>, as real servers store it.
func (s *Server) readBackText(text string) string {
	if !s.quirk(QuirkNormalisedTexts) {
		return styleBlock + text
	}
	return styleBlock + "<p dir=rtl>" + spaceBeforeBr.ReplaceAllString(text, "$1") + "</p>"
}

// parseFilter compiles a $filter against what the user may read of t.
// Under QuirkIgnoredFilters a filter naming a field the server cannot
// filter on is no filter at all (nil): every row answers.
func (s *Server) parseFilter(t *odata.EntityType, v string) (odata.Filter, error) {
	f, err := odata.ParseFilter(s.readable(t), v)
	var unknown *odata.UnknownFieldError
	if err != nil && s.quirk(QuirkIgnoredFilters) && errors.As(err, &unknown) {
		return nil, nil
	}
	return f, err
}

// numberText imitates QuirkNumbersAsStrings for the value v of field p in
// an answer: an Int64 or Decimal as the JSON string of its digits.
func (s *Server) numberText(p *odata.Property, v any) any {
	if v == nil || !s.quirk(QuirkNumbersAsStrings) || p.Type != odata.EdmInt64 && p.Type != odata.EdmDecimal {
		return v
	}
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case json.Number:
		return string(x)
	case odata.Decimal:
		return x.String()
	}
	return v
}
