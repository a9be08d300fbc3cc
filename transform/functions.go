package transform

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/migrate-tool/migrate/odata"
)

// errSkip is what skip() returns: the row is skipped and counted.
var errSkip = errors.New("row skipped by skip()")

// failError is what fail(message) returns: the row is rejected with message.
type failError struct{ msg string }

func (e *failError) Error() string { return e.msg }

// argError says which argument of which function was wrong and why.
func argError(fn string, i int, want string, got any) error {
	return fmt.Errorf("%s: argument %d must be %s, got %s", fn, i, want, describe(got))
}

// textArg reads argument i (1-based, for messages) as text: text, an empty
// cell (""), or a number. Booleans, dates, lists and maps are refused.
func textArg(fn string, i int, v any) (string, error) {
	switch v.(type) {
	case bool, time.Time:
		return "", argError(fn, i, "text", v)
	}
	s, ok := asText(v)
	if !ok {
		return "", argError(fn, i, "text", v)
	}
	return s, nil
}

// intArg reads argument i as a whole number.
func intArg(fn string, i int, v any) (int, error) {
	switch v.(type) {
	case nil, bool, time.Time:
		return 0, argError(fn, i, "a whole number", v)
	}
	n, err := toInt64(v)
	if err != nil || n > 1<<31 || n < -(1<<31) {
		return 0, argError(fn, i, "a whole number", v)
	}
	return int(n), nil
}

func arity(fn string, params []any, min, max int) error {
	if len(params) < min || (max >= 0 && len(params) > max) {
		switch {
		case min == max:
			return fmt.Errorf("%s: takes %d arguments, got %d", fn, min, len(params))
		case max < 0:
			return fmt.Errorf("%s: takes at least %d arguments, got %d", fn, min, len(params))
		}
		return fmt.Errorf("%s: takes %d to %d arguments, got %d", fn, min, max, len(params))
	}
	return nil
}

// library is the function library of docs/plan-format.md, Expressions. Each
// function checks its arguments at run time and says which one is wrong; the
// declared types let the compiler catch a wrong number of arguments early.
func (p *Program) library() []expr.Option {
	text := func(name string, f func(string) string) expr.Option {
		return expr.Function(name, func(params ...any) (any, error) {
			if err := arity(name, params, 1, 1); err != nil {
				return nil, err
			}
			s, err := textArg(name, 1, params[0])
			if err != nil {
				return nil, err
			}
			return f(s), nil
		}, new(func(any) string))
	}
	return []expr.Option{
		// trim("  C001 ") == "C001"
		text("trim", strings.TrimSpace),
		// upper("abc") == "ABC"
		text("upper", strings.ToUpper),
		// lower("ABC") == "abc"
		text("lower", strings.ToLower),
		// html("a < b\nשלום") == "<p dir=\"rtl\">a &lt; b<br>שלום</p>": a text
		// sub-form's TEXT is HTML (docs/service.md, Text sub-forms)
		text("html", htmlText),
		// basename(`C:\docs\a.pdf`) == "a.pdf", as basename("docs/a.pdf")
		text("basename", baseName),
		// replace("a-b-c", "-", "/") == "a/b/c" (every occurrence)
		expr.Function("replace", fnReplace, new(func(any, any, any) string)),
		// substr("שלום עולם", 0, 4) == "שלום": start and length count
		// characters; a negative start counts from the end.
		expr.Function("substr", fnSubstr, new(func(any, any) string), new(func(any, any, any) string)),
		// pad_left("42", 5, "0") == "00042"
		expr.Function("pad_left", fnPadLeft, new(func(any, any, any) string)),
		// split("a;b;c", ";") == ["a", "b", "c"]
		expr.Function("split", fnSplit, new(func(any, any) []any)),
		// join(["a", "b"], "-") == "a-b"
		expr.Function("join", fnJoin, new(func(any, any) string)),
		// regex_match("AB-12", "^[A-Z]+-[0-9]+$") == true
		expr.Function("regex_match", p.fnRegexMatch, new(func(any, any) bool)),
		// regex_replace("AB-12", "[^0-9]", "") == "12" ($1 names a group)
		expr.Function("regex_replace", p.fnRegexReplace, new(func(any, any, any) string)),
		// coalesce(row.Mobile, row.Phone, "none"): the first value that is not empty
		expr.Function("coalesce", fnCoalesce, new(func(...any) any)),
		// default(row.Country, "IL"): x unless it is empty
		expr.Function("default", fnDefault, new(func(any, any) any)),
		// number("12,5", ",") is the decimal 12.5; without a separator the
		// plan's target.decimal_separator applies
		expr.Function("number", p.fnNumber, new(func(any) odata.Decimal), new(func(any, any) odata.Decimal)),
		// int("12") == 12; int("12.5") is an error
		expr.Function("int", fnInt, new(func(any) int64)),
		// date("31/12/2024", "02/01/2006"): midnight in the plan's timezone;
		// also a date cell or an Excel serial number (45657)
		expr.Function("date", p.fnDate, new(func(any, ...any) any)),
		// datetime("2024-12-31 08:30", "2006-01-02 15:04"): keeps the time of day
		expr.Function("datetime", p.fnDateTime, new(func(any, ...any) any)),
		// now(): the current time in the plan's timezone
		expr.Function("now", p.fnNow, new(func() time.Time)),
		// env("WAREHOUSE"): an environment variable ("" when unset)
		expr.Function("env", p.fnEnv, new(func(any) string)),
		// file("attachments/" + row.File): data:application/pdf;base64,...
		expr.Function("file", p.fnFile, new(func(any) string)),
		// fail("no price for " + row.Part): reject the row with that message
		expr.Function("fail", fnFail, new(func(any) any)),
		// skip(): skip the row; it is counted, not reported as an error
		expr.Function("skip", fnSkip, new(func() any)),
		// lookup("agent_code", row.Agent): the value of a lookup table
		expr.Function("lookup", p.fnLookup, new(func(any, any) any)),
	}
}

func fnReplace(params ...any) (any, error) {
	if err := arity("replace", params, 3, 3); err != nil {
		return nil, err
	}
	var s [3]string
	for i := range s {
		var err error
		if s[i], err = textArg("replace", i+1, params[i]); err != nil {
			return nil, err
		}
	}
	n := len(s[0])
	if s[1] == "" {
		n += (utf8.RuneCountInString(s[0]) + 1) * len(s[2])
	} else {
		n += strings.Count(s[0], s[1]) * (len(s[2]) - len(s[1]))
	}
	if n > MaxTextResult {
		return nil, tooLong("replace", n)
	}
	return strings.ReplaceAll(s[0], s[1], s[2]), nil
}

// MaxTextResult bounds the text that replace, join and regex_replace may
// build, so that nested calls (replace(replace(x, "a", x), …)) cannot take
// the machine's memory: expr-lang's own memory budget does not see what a
// function allocates. It is far above any field the service takes, and
// above the data URI of the largest attachment file() reads.
const MaxTextResult = 32 << 20

func tooLong(fn string, n int) error {
	return fmt.Errorf("%s: the result would be %d bytes, more than the limit of %d; check the expression", fn, n, MaxTextResult)
}

func fnSubstr(params ...any) (any, error) {
	if err := arity("substr", params, 2, 3); err != nil {
		return nil, err
	}
	s, err := textArg("substr", 1, params[0])
	if err != nil {
		return nil, err
	}
	start, err := intArg("substr", 2, params[1])
	if err != nil {
		return nil, err
	}
	r := []rune(s)
	if start < 0 {
		start += len(r)
		if start < 0 {
			start = 0
		}
	}
	if start > len(r) {
		start = len(r)
	}
	end := len(r)
	if len(params) == 3 {
		n, err := intArg("substr", 3, params[2])
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, fmt.Errorf("substr: argument 3 (length) must not be negative, got %d", n)
		}
		if start+n < end {
			end = start + n
		}
	}
	return string(r[start:end]), nil
}

func fnPadLeft(params ...any) (any, error) {
	if err := arity("pad_left", params, 3, 3); err != nil {
		return nil, err
	}
	s, err := textArg("pad_left", 1, params[0])
	if err != nil {
		return nil, err
	}
	n, err := intArg("pad_left", 2, params[1])
	if err != nil {
		return nil, err
	}
	if n > 1<<16 {
		return nil, fmt.Errorf("pad_left: width %d is too large", n)
	}
	ch, err := textArg("pad_left", 3, params[2])
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(ch) != 1 {
		return nil, fmt.Errorf("pad_left: argument 3 must be one character, got %s", quote(ch))
	}
	if c := utf8.RuneCountInString(s); c < n {
		s = strings.Repeat(ch, n-c) + s
	}
	return s, nil
}

func fnSplit(params ...any) (any, error) {
	if err := arity("split", params, 2, 2); err != nil {
		return nil, err
	}
	s, err := textArg("split", 1, params[0])
	if err != nil {
		return nil, err
	}
	sep, err := textArg("split", 2, params[1])
	if err != nil {
		return nil, err
	}
	if s == "" {
		return []any{}, nil
	}
	parts := strings.Split(s, sep)
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

func fnJoin(params ...any) (any, error) {
	if err := arity("join", params, 2, 2); err != nil {
		return nil, err
	}
	sep, err := textArg("join", 2, params[1])
	if err != nil {
		return nil, err
	}
	var items []string
	switch l := params[0].(type) {
	case []any:
		items = make([]string, len(l))
		for i, v := range l {
			s, ok := asText(v)
			if !ok {
				return nil, fmt.Errorf("join: item %d of the list is %s, not text", i+1, describe(v))
			}
			items[i] = s
		}
	case []string:
		items = l
	default:
		return nil, argError("join", 1, "a list", params[0])
	}
	n := len(sep) * max(len(items)-1, 0)
	for _, it := range items {
		if n += len(it); n > MaxTextResult {
			return nil, tooLong("join", n)
		}
	}
	return strings.Join(items, sep), nil
}

// regexCache holds compiled patterns: constant patterns are compiled when
// the plan is compiled; others once when first met, up to a bound.
type regexCache struct {
	mu sync.RWMutex
	m  map[string]*regexp.Regexp
}

const maxCachedRegexps = 1000

func (c *regexCache) get(fn, pattern string) (*regexp.Regexp, error) {
	c.mu.RLock()
	re, ok := c.m[pattern]
	c.mu.RUnlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: bad pattern %s: %v", fn, quote(pattern), regexMessage(err))
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string]*regexp.Regexp)
	}
	if len(c.m) < maxCachedRegexps {
		c.m[pattern] = re
	}
	c.mu.Unlock()
	return re, nil
}

func regexMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

func (p *Program) fnRegexMatch(params ...any) (any, error) {
	if err := arity("regex_match", params, 2, 2); err != nil {
		return nil, err
	}
	s, err := textArg("regex_match", 1, params[0])
	if err != nil {
		return nil, err
	}
	pat, err := textArg("regex_match", 2, params[1])
	if err != nil {
		return nil, err
	}
	re, err := p.regexps.get("regex_match", pat)
	if err != nil {
		return nil, err
	}
	return re.MatchString(s), nil
}

func (p *Program) fnRegexReplace(params ...any) (any, error) {
	if err := arity("regex_replace", params, 3, 3); err != nil {
		return nil, err
	}
	var s [3]string
	for i := range s {
		var err error
		if s[i], err = textArg("regex_replace", i+1, params[i]); err != nil {
			return nil, err
		}
	}
	re, err := p.regexps.get("regex_replace", s[1])
	if err != nil {
		return nil, err
	}
	// The size of the result is known only as it is built: build it match
	// by match (what ReplaceAllString does) and stop at the limit.
	var out []byte
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s[0], -1) {
		out = append(out, s[0][last:m[0]]...)
		out = re.ExpandString(out, s[2], s[0], m)
		last = m[1]
		if n := len(out) + len(s[0]) - last; n > MaxTextResult {
			return nil, tooLong("regex_replace", n)
		}
	}
	return string(append(out, s[0][last:]...)), nil
}

// isEmptyValue is what coalesce and default skip: nil and "".
func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	}
	return false
}

func fnCoalesce(params ...any) (any, error) {
	for _, v := range params {
		if !isEmptyValue(v) {
			return v, nil
		}
	}
	return nil, nil
}

func fnDefault(params ...any) (any, error) {
	if err := arity("default", params, 2, 2); err != nil {
		return nil, err
	}
	if isEmptyValue(params[0]) {
		return params[1], nil
	}
	return params[0], nil
}

func sepArg(fn string, i int, v any) (byte, error) {
	s, ok := v.(string)
	if !ok || (s != "." && s != ",") {
		return 0, argError(fn, i, `"." or ","`, v)
	}
	return s[0], nil
}

// numericInput sorts out what number() and int() take before converting:
// nil and blank text are empty (the result is nil), booleans and dates are
// refused with an error naming the function.
func numericInput(fn, want string, v any) (empty bool, err error) {
	switch x := v.(type) {
	case nil:
		return true, nil
	case string:
		return strings.TrimSpace(x) == "", nil
	case bool, time.Time:
		return false, argError(fn, 1, want, x)
	}
	return false, nil
}

func (p *Program) fnNumber(params ...any) (any, error) {
	if err := arity("number", params, 1, 2); err != nil {
		return nil, err
	}
	sep := p.defaultSep
	if len(params) == 2 {
		var err error
		if sep, err = sepArg("number", 2, params[1]); err != nil {
			return nil, err
		}
	}
	if empty, err := numericInput("number", "a number or text", params[0]); empty || err != nil {
		return nil, err
	}
	d, err := toDecimal(params[0], sep)
	if err != nil {
		if _, ok := params[0].(string); ok {
			return nil, fmt.Errorf("number: %s", decimalMessage(params[0], err, sep, odata.EdmDecimal))
		}
		return nil, argError("number", 1, "a number or text", params[0])
	}
	return d, nil
}

func fnInt(params ...any) (any, error) {
	if err := arity("int", params, 1, 1); err != nil {
		return nil, err
	}
	if empty, err := numericInput("int", "a whole number or text", params[0]); empty || err != nil {
		return nil, err
	}
	n, err := toInt64(params[0])
	if err != nil {
		return nil, fmt.Errorf("int: %v", err)
	}
	return n, nil
}

func layoutArgs(fn string, params []any) ([]string, error) {
	var layouts []string
	for i, v := range params[1:] {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, argError(fn, i+2, "a layout such as \"02/01/2006\"", v)
		}
		layouts = append(layouts, s)
	}
	return layouts, nil
}

func (p *Program) fnDate(params ...any) (any, error) {
	if err := arity("date", params, 1, -1); err != nil {
		return nil, err
	}
	layouts, err := layoutArgs("date", params)
	if err != nil {
		return nil, err
	}
	return toTime("date", params[0], layouts, p.loc, true)
}

func (p *Program) fnDateTime(params ...any) (any, error) {
	if err := arity("datetime", params, 1, -1); err != nil {
		return nil, err
	}
	layouts, err := layoutArgs("datetime", params)
	if err != nil {
		return nil, err
	}
	return toTime("datetime", params[0], layouts, p.loc, false)
}

func (p *Program) fnNow(params ...any) (any, error) {
	if err := arity("now", params, 0, 0); err != nil {
		return nil, err
	}
	return p.opts.Now().In(p.loc), nil
}

func (p *Program) fnEnv(params ...any) (any, error) {
	if err := arity("env", params, 1, 1); err != nil {
		return nil, err
	}
	name, ok := params[0].(string)
	if !ok || name == "" {
		return nil, argError("env", 1, "a variable name", params[0])
	}
	if err := envRefused(name); err != nil {
		return nil, err
	}
	// A URL's user name and password never reach the plan:
	// MIGRATE_TARGET may carry them.
	return odata.StripUserinfo(p.opts.Getenv(name)), nil
}

// envRefused is env()'s refusal of a variable that may hold a credential:
// read there, it would be written into the target's data and into plan
// --out. Credentials stay with the code that logs in. A name written in
// the expression is refused when the plan is compiled.
func envRefused(name string) error {
	switch {
	case odata.IsSecretVariable(name):
		return fmt.Errorf("env(%q): %s holds one of migrate's own credentials, which a plan may not read; put the value the plan needs in a variable of its own", name, name)
	case odata.MayHoldCredential(name):
		return fmt.Errorf("env(%q): %s may hold a credential (its name says so), which a plan may not read; put the value the plan needs in a variable of its own", name, name)
	}
	return nil
}

func fnFail(params ...any) (any, error) {
	if err := arity("fail", params, 1, 1); err != nil {
		return nil, err
	}
	msg, ok := asText(params[0])
	if !ok {
		msg = describe(params[0])
	}
	if msg == "" {
		msg = "rejected by fail()"
	}
	return nil, &failError{msg}
}

func fnSkip(params ...any) (any, error) {
	if err := arity("skip", params, 0, 0); err != nil {
		return nil, err
	}
	return nil, errSkip
}

// htmlText is s as the HTML a text sub-form holds: <, > and & escaped,
// line breaks as <br>, and a text whose first strong letter reads right to
// left wrapped in <p dir="rtl">, as the service writes such texts.
func htmlText(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r\n", "<br>", "\n", "<br>", "\r", "<br>").Replace(s)
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Hebrew, r) || unicode.Is(unicode.Arabic, r):
			return `<p dir="rtl">` + s + "</p>"
		case unicode.IsLetter(r):
			return s
		}
	}
	return s
}

// baseName is the last element of a path, whether it is written with /
// (Unix) or \ (Windows: a file() cell often holds C:\...\a.pdf).
func baseName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		return s[i+1:]
	}
	return s
}
