package odata

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ServiceRoot returns base with the language code after the
// configuration-file segment (docs/service.md, Service root; from 18.2):
// /odata/Priority/tabula.ini/COMPANY becomes
// /odata/Priority/tabula.ini,3/COMPANY. A code already there is replaced;
// language 0 removes it. The result has no trailing slash.
func ServiceRoot(base string, language int) (string, error) {
	if language < 0 {
		return "", fmt.Errorf("service root %q: language code %d is negative", StripUserinfo(base), language)
	}
	u, err := rootURL(base, "https://host/odata/Priority/tabula.ini/COMPANY")
	if err != nil {
		return "", err
	}
	base = StripUserinfo(base)
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) < 2 || segs[len(segs)-1] == "" || segs[len(segs)-2] == "" {
		return "", fmt.Errorf("service root %q: the path needs a configuration file and a company, like /odata/Priority/tabula.ini/COMPANY", base)
	}
	cfg := segs[len(segs)-2]
	if i := strings.IndexByte(cfg, ','); i >= 0 {
		if _, err := strconv.Atoi(cfg[i+1:]); err != nil {
			return "", fmt.Errorf("service root %q: %q after the comma is not a language code", base, cfg[i+1:])
		}
		cfg = cfg[:i]
	}
	if language > 0 {
		cfg += "," + strconv.Itoa(language)
	}
	segs[len(segs)-2] = cfg
	u.Path = "/" + strings.Join(segs, "/")
	u.RawPath = ""
	return u.String(), nil
}

// rootURL checks a service root's form: an absolute http(s) URL without a
// query or a fragment; credentials in it are dropped (they belong in
// Config.Auth, never in a URL that errors print). like is an example.
func rootURL(base, like string) (*url.URL, error) {
	base = StripUserinfo(base)
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("service root %q: want an absolute URL such as %s", base, like)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("service root %q: scheme %q is not http or https", base, u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("service root %q: remove the query or fragment", base)
	}
	u.User = nil
	return u, nil
}

var userinfoRE = regexp.MustCompile(`//[^/?#]*@`)

// StripUserinfo drops credentials from a URL before it can reach an error.
func StripUserinfo(s string) string {
	return userinfoRE.ReplaceAllString(s, "//")
}

// Query holds the query options (docs/service.md, Queries; $filter and
// $skip as real servers have them, docs/servers.md, Reading).
// Zero values are left out.
type Query struct {
	Top, Skip int
	Select    []string
	Expand    []string
	Filter    string
	OrderBy   string // $orderby: what makes $skip paging stable
	Format    string
}

// Encode writes the options in a fixed order, percent-encoded the way
// OData servers read them: spaces as %20 and '+' as %2B (an offset's plus
// sign would otherwise arrive as a space).
func (q Query) Encode() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+escapeOData(v, "'(),$=:@!*;/")) }
	if q.Filter != "" {
		add("$filter", q.Filter)
	}
	if len(q.Select) > 0 {
		add("$select", strings.Join(q.Select, ","))
	}
	if len(q.Expand) > 0 {
		add("$expand", strings.Join(q.Expand, ","))
	}
	if q.OrderBy != "" {
		add("$orderby", q.OrderBy)
	}
	if q.Top > 0 {
		add("$top", strconv.Itoa(q.Top))
	}
	if q.Skip > 0 {
		add("$skip", strconv.Itoa(q.Skip))
	}
	if q.Format != "" {
		add("$format", q.Format)
	}
	return strings.Join(parts, "&")
}

// filterLiteral is FormatLiteral with the filter rule of docs/service.md,
// Types and literals: dates as
// YYYY-MM-DD. A value with no literal is compared as its text.
func filterLiteral(v any) string {
	switch x := v.(type) {
	case time.Time:
		return FormatDate(x)
	case *time.Time:
		if x != nil {
			return FormatDate(*x)
		}
	}
	s, err := FormatLiteral(v)
	if err != nil {
		return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", "''") + "'"
	}
	return s
}

// Eq writes "FIELD eq literal".
func Eq(field string, v any) string { return field + " eq " + filterLiteral(v) }

// Ne writes "FIELD ne literal".
func Ne(field string, v any) string { return field + " ne " + filterLiteral(v) }

// Gt writes "FIELD gt literal".
func Gt(field string, v any) string { return field + " gt " + filterLiteral(v) }

// Ge writes "FIELD ge literal".
func Ge(field string, v any) string { return field + " ge " + filterLiteral(v) }

// Lt writes "FIELD lt literal".
func Lt(field string, v any) string { return field + " lt " + filterLiteral(v) }

// Le writes "FIELD le literal".
func Le(field string, v any) string { return field + " le " + filterLiteral(v) }

// And joins conditions with "and", each in parentheses when there are
// several; empty conditions are dropped.
func And(conds ...string) string { return joinConds("and", conds) }

// Or joins conditions with "or" (the service has no "in"; keep chains
// short, docs/servers.md, Reading: about 50 values make the URL fail).
func Or(conds ...string) string { return joinConds("or", conds) }

func joinConds(op string, conds []string) string {
	var kept []string
	for _, c := range conds {
		if strings.TrimSpace(c) != "" {
			kept = append(kept, c)
		}
	}
	if len(kept) == 1 {
		return kept[0]
	}
	for i, c := range kept {
		kept[i] = "(" + c + ")"
	}
	return strings.Join(kept, " "+op+" ")
}

// CompanyURL is base with its company, the last segment of the service
// root (docs/service.md, Service root), replaced: the same installation's
// other company.
func CompanyURL(base, company string) (string, error) {
	if !IsCompanyName(company) {
		return "", fmt.Errorf("company %q: want a name such as demo (the last segment of the service root)", company)
	}
	if _, err := ServiceRoot(base, 0); err != nil {
		return "", err
	}
	trimmed := strings.TrimRight(base, "/")
	i := strings.LastIndexByte(trimmed, '/')
	return trimmed[:i+1] + company, nil
}

// IsCompanyName reports whether name can be a company: the last segment
// of a service root, so not empty and without /, ?, #, %, comma or space.
func IsCompanyName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "/?#%, ")
}

// CompanyOf is the company of a service root: its last segment.
func CompanyOf(base string) string {
	trimmed := strings.TrimRight(base, "/")
	return trimmed[strings.LastIndexByte(trimmed, '/')+1:]
}
