package transform

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/expr-lang/expr"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
)

// evalWith compiles src in a step's scope with p's library and runs it over row.
func evalWith(p *Program, src string, row map[string]any) (any, error) {
	opts := append([]expr.Option{expr.Env(scope{grouped: true}.env())}, p.library()...)
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, err
	}
	return expr.Run(prog, map[string]any{"row": row, "ref": refFunc(noRef), "group": []any{}})
}

func testProgram(t *testing.T, tz string) *Program {
	t.Helper()
	p := &plan.Plan{Dir: t.TempDir(), Target: plan.Target{Timezone: tz}}
	return mustCompile(t, p, nil, testOptions())
}

func TestFunctions(t *testing.T) {
	t.Parallel()
	prog := testProgram(t, "Asia/Jerusalem")
	jlm, _ := time.LoadLocation("Asia/Jerusalem")
	row := map[string]any{
		"Code": "  c001 ", "Name": "שלום עולם", "Num": source.Number("12.50"), "Empty": nil,
		"Flag": true, "When": time.Date(2024, 12, 31, 14, 0, 0, 0, time.UTC), "List": []any{"a", 1},
	}
	tests := []struct {
		src  string
		want any
		err  string // substring of the error; "" for none
	}{
		{src: `trim(row.Code)`, want: "c001"},
		{src: `trim(row.Empty)`, want: ""},
		{src: `trim(row.Num)`, want: "12.50"},
		{src: `trim(row.Flag)`, err: "trim: argument 1 must be text, got boolean true"},
		{src: `trim(row.When)`, err: "trim: argument 1 must be text, got date"},
		{src: `upper(trim(row.Code))`, want: "C001"},
		{src: `lower("ABC")`, want: "abc"},
		{src: `html("a < b & c\n> d")`, want: "a &lt; b &amp; c<br>&gt; d"},
		{src: `html(row.Name + "\r\nline 2")`, want: `<p dir="rtl">שלום עולם<br>line 2</p>`},
		{src: `html("12 שלום")`, want: `<p dir="rtl">12 שלום</p>`},
		{src: `html("")`, want: ""},
		{src: `basename("C:\\docs\\drawing 1.pdf")`, want: "drawing 1.pdf"},
		{src: `basename("docs/a.pdf")`, want: "a.pdf"},
		{src: `basename("a.pdf")`, want: "a.pdf"},
		{src: `upper(row.List)`, err: "upper: argument 1 must be text, got a list of 2"},
		{src: `replace("a-b-c", "-", "/")`, want: "a/b/c"},
		{src: `replace("a-b", row.Flag, "/")`, err: "replace: argument 2 must be text"},
		{src: `substr(row.Name, 0, 4)`, want: "שלום"},
		{src: `substr(row.Name, 5)`, want: "עולם"},
		{src: `substr(row.Name, -4)`, want: "עולם"},
		{src: `substr("abc", 10)`, want: ""},
		{src: `substr("abc", 1, 100)`, want: "bc"},
		{src: `substr("abc", 1, -1)`, err: "must not be negative"},
		{src: `substr("abc", "x")`, err: `substr: argument 2 must be a whole number, got "x"`},
		{src: `substr("abc", 1.5)`, err: "substr: argument 2 must be a whole number"},
		{src: `pad_left("42", 5, "0")`, want: "00042"},
		{src: `pad_left("שלום", 6, "*")`, want: "**שלום"},
		{src: `pad_left("123456", 3, "0")`, want: "123456"},
		{src: `pad_left("1", 3, "00")`, err: "pad_left: argument 3 must be one character"},
		{src: `pad_left("1", "x", "0")`, err: "pad_left: argument 2 must be a whole number"},
		{src: `split("a;b;c", ";")`, want: []any{"a", "b", "c"}},
		{src: `split("", ";")`, want: []any{}},
		{src: `split(row.Flag, ";")`, err: "split: argument 1 must be text"},
		{src: `join(["a", "b"], "-")`, want: "a-b"},
		{src: `join(split("a;b", ";"), "+")`, want: "a+b"},
		{src: `join(row.List, ",")`, want: "a,1"},
		{src: `join("ab", ",")`, err: `join: argument 1 must be a list, got "ab"`},
		{src: `join([{"a": 1}], ",")`, err: "join: item 1 of the list is a row or map, not text"},
		{src: `regex_match("AB-12", "^[A-Z]+-[0-9]+$")`, want: true},
		{src: `regex_match("ab", "^[A-Z]+$")`, want: false},
		{src: `regex_match("ab", row.Code + "(")`, err: "regex_match: bad pattern"},
		{src: `regex_match(row.Flag, "a")`, err: "regex_match: argument 1 must be text"},
		{src: `regex_replace("AB-12", "[^0-9]", "")`, want: "12"},
		{src: `regex_replace("2024-12-31", "(\\d+)-(\\d+)-(\\d+)", "$3/$2/$1")`, want: "31/12/2024"},
		{src: `regex_replace("a", "a", 1)`, want: "1"},
		{src: `coalesce(row.Empty, "", "x", "y")`, want: "x"},
		{src: `coalesce(row.Empty, "")`, want: nil},
		{src: `coalesce()`, want: nil},
		{src: `default(row.Empty, "IL")`, want: "IL"},
		{src: `default("US", "IL")`, want: "US"},
		{src: `default(0, 5)`, want: 0},
		{src: `number("12,5", ",")`, want: mustDec("12.5")},
		{src: `number(row.Num)`, want: mustDec("12.50")},
		{src: `number("12.5")`, want: mustDec("12.5")},
		{src: `number(3 * 2)`, want: mustDec("6")},
		{src: `number(1.5 + 1)`, want: mustDec("2.5")},
		{src: `number(row.Empty)`, want: nil},
		{src: `number("12,5")`, err: `number: "12,5" is not a decimal (Edm.Decimal); set decimal_separator: ","`},
		{src: `number("abc")`, err: `number: "abc" is not a decimal`},
		{src: `number("1.234,50", ",")`, want: mustDec("1234.50")},
		{src: `number("1,234,567.5")`, want: mustDec("1234567.5")},
		{src: `number("1.234", ",")`, err: `number: "1.234" reads two ways under decimal_separator: ","`},
		{src: `number("1", ";")`, err: `number: argument 2 must be "." or ","`},
		{src: `number(row.Flag)`, err: "number: argument 1 must be a number or text, got boolean true"},
		{src: `int("12")`, want: int64(12)},
		{src: `int(" 12 ")`, want: int64(12)},
		{src: `int(row.Num)`, err: "int: number 12.50 is not a whole number"},
		{src: `int(source_num)`, err: "unknown name source_num"},
		{src: `int("12.5")`, err: `int: "12.5" is not a whole number`},
		{src: `int(7 / 7)`, want: int64(1)},
		{src: `int(row.Flag)`, err: "int: argument 1 must be a whole number or text, got boolean true"},
		{src: `int(number("12.0")) + 1`, want: 13},
		{src: `date("31/12/2024", "02/01/2006")`, want: time.Date(2024, 12, 31, 0, 0, 0, 0, jlm)},
		{src: `date("2024-12-31")`, want: time.Date(2024, 12, 31, 0, 0, 0, 0, jlm)},
		{src: `date("12/31/2024", "02/01/2006", "01/02/2006")`, want: time.Date(2024, 12, 31, 0, 0, 0, 0, jlm)},
		{src: `date(45657)`, want: time.Date(2024, 12, 31, 0, 0, 0, 0, jlm)},
		{src: `date("45657")`, want: time.Date(2024, 12, 31, 0, 0, 0, 0, jlm)},
		{src: `date(row.When)`, want: time.Date(2024, 12, 31, 0, 0, 0, 0, jlm)},
		{src: `date(row.Empty)`, want: nil},
		{src: `date("31.12.2024", "02/01/2006")`, err: `date: "31.12.2024" does not match the layout "02/01/2006"`},
		{src: `date("tomorrow")`, err: `date: "tomorrow" is not a date in a known layout`},
		{src: `date(row.Flag)`, err: "date: argument 1 must be a date, text or an Excel serial number, got boolean true"},
		{src: `date("1", 5)`, err: "date: argument 2 must be a layout"},
		{src: `date(-3)`, err: "is not an Excel date serial number"},
		{src: `datetime("2024-12-31 08:30", "2006-01-02 15:04")`, want: time.Date(2024, 12, 31, 8, 30, 0, 0, jlm)},
		{src: `datetime(row.When)`, want: time.Date(2024, 12, 31, 14, 0, 0, 0, jlm)},
		{src: `datetime(45657.5)`, want: time.Date(2024, 12, 31, 12, 0, 0, 0, jlm)},
		{src: `datetime("2024-12-31T10:00:00Z")`, want: time.Date(2024, 12, 31, 12, 0, 0, 0, jlm)},
		{src: `now()`, want: fixedNow.In(jlm)},
		{src: `env("WAREHOUSE")`, want: "Main"},
		{src: `env("NOPE")`, want: ""},
		{src: `env(1)`, err: "env: argument 1 must be a variable name, got number 1"},
		{src: `env("MIGRATE_TOKEN")`, err: `env("MIGRATE_TOKEN"): MIGRATE_TOKEN holds one of migrate's own credentials`},
		{src: `env("migrate_password")`, err: `holds one of migrate's own credentials`},
		{src: `env("MIGRATE_TEMPLATE_TOKEN")`, err: `holds one of migrate's own credentials`},
		// Every variable that may hold a credential, and never a
		// URL's user name and password.
		{src: `env("GITHUB_TOKEN")`, err: `env("GITHUB_TOKEN"): GITHUB_TOKEN may hold a credential (its name says so)`},
		{src: `env("MIGRATE_T_USER")`, err: `may hold a credential`},
		{src: `env(lower("GITHUB_TOKEN"))`, err: `env("github_token"): github_token may hold a credential`},
		{src: `env("MIGRATE_TARGET")`, want: "https://erp.example.com/odata/Priority/tabula.ini/demo"},
		{src: `fail("no price for " + trim(row.Code))`, err: "no price for c001"},
		{src: `row.Code == "" ? fail("x") : "ok"`, want: "ok"},
		{src: `skip()`, err: errSkip.Error()},
		{src: `lookup("nope", "x")`, err: "lookup: the lookup tables were not built"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := evalWith(prog, tt.src, row)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want one containing %q (value %#v)", err, tt.err, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if !equalValue(got, tt.want) {
				t.Fatalf("= %#v (%T), want %#v (%T)", got, got, tt.want, tt.want)
			}
		})
	}
}

func mustDec(s string) odata.Decimal {
	d, err := odata.ParseDecimal(s, '.')
	if err != nil {
		panic(err)
	}
	return d
}

func equalValue(a, b any) bool {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y) && x.Location().String() == y.Location().String()
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestFunctionErrorsAreTyped(t *testing.T) {
	t.Parallel()
	prog := testProgram(t, "")
	_, err := evalWith(prog, `fail("bad row")`, nil)
	var fe *failError
	if !errors.As(err, &fe) || fe.msg != "bad row" {
		t.Fatalf("fail(): %v, want a *failError", err)
	}
	if _, err := evalWith(prog, `skip()`, nil); !errors.Is(err, errSkip) {
		t.Fatalf("skip(): %v, want errSkip", err)
	}
}

func TestFunctionArityIsCheckedAtCompile(t *testing.T) {
	t.Parallel()
	prog := testProgram(t, "")
	for _, src := range []string{`trim()`, `trim("a", "b")`, `substr("a")`, `pad_left("a", 1)`, `now(1)`, `skip(1)`, `int()`} {
		if _, err := evalWith(prog, src, nil); err == nil || !strings.Contains(err.Error(), "argument") && !strings.Contains(err.Error(), "not enough") && !strings.Contains(err.Error(), "too many") {
			t.Errorf("%s: error = %v, want an argument count error", src, err)
		}
	}
}

func TestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "att"), 0o755)
	os.WriteFile(filepath.Join(dir, "att", "a.pdf"), []byte("%PDF"), 0o644)
	os.WriteFile(filepath.Join(dir, "att", "big.png"), make([]byte, 100), 0o644)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "x.txt"), []byte("hi"), 0o644)
	os.Symlink(filepath.Join(outside, "x.txt"), filepath.Join(dir, "link.txt"))

	opts := testOptions()
	opts.MaxFileSize = 50
	prog := mustCompile(t, &plan.Plan{Dir: dir}, nil, opts)
	tests := []struct {
		src, want, err string
	}{
		{src: `file("att/a.pdf")`, want: "data:application/pdf;base64,JVBERg=="},
		{src: `file("att/" + "a.pdf")`, want: "data:application/pdf;base64,JVBERg=="},
		// An absolute path is used as it is, not joined onto the folder.
		{src: `file("` + filepath.Join(dir, "att", "a.pdf") + `")`, want: "data:application/pdf;base64,JVBERg=="},
		{src: `file("att/big.png")`, err: "is 100 bytes, more than the limit of 50"},
		{src: `file("att/none.pdf")`, err: `file: "att/none.pdf": no such file or directory`},
		{src: `file("att")`, err: "is a folder"},
		{src: `file("../x.txt")`, err: "outside the plan's folder"},
		{src: `file("` + filepath.Join(outside, "x.txt") + `")`, err: "outside the plan's folder"},
		{src: `file("link.txt")`, err: "links outside the plan's folder"},
		{src: `file(1)`, err: "file: argument 1 must be a file path, got number 1"},
	}
	for _, tt := range tests {
		got, err := evalWith(prog, tt.src, nil)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error = %v, want %q", tt.src, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s = %v, %v; want %q", tt.src, got, err, tt.want)
		}
	}
	if got, err := evalWith(prog, `file("")`, nil); err != nil || got != nil {
		t.Errorf(`file("") = %v, %v; want nil (an empty attachment column)`, got, err)
	}

	opts.AllowOutside = true
	free := mustCompile(t, &plan.Plan{Dir: dir}, nil, opts)
	if got, err := evalWith(free, `file("`+filepath.Join(outside, "x.txt")+`")`, nil); err != nil || got != "data:text/plain;base64,aGk=" {
		t.Errorf("AllowOutside: %v, %v", got, err)
	}
}

func TestMimeType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"a.PDF": "application/pdf", "b.jpeg": "image/jpeg", "c.xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "d.unknownext": "application/octet-stream", "noext": "application/octet-stream"} {
		if got := mimeType(in); got != want {
			t.Errorf("mimeType(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExcelSerial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		serial float64
		want   time.Time
	}{
		{1, time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{59, time.Date(1900, 2, 28, 0, 0, 0, 0, time.UTC)},
		{61, time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC)},
		{25569, time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)},
		{45657.75, time.Date(2024, 12, 31, 18, 0, 0, 0, time.UTC)},
		{2958465, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := fromExcelSerial(tt.serial, time.UTC)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("fromExcelSerial(%v) = %v, %v; want %v", tt.serial, got, err, tt.want)
		}
	}
	for _, bad := range []float64{0, -1, 2958466} {
		if _, err := fromExcelSerial(bad, time.UTC); err == nil {
			t.Errorf("fromExcelSerial(%v): no error", bad)
		}
	}
}

func TestDecimalArithmetic(t *testing.T) {
	t.Parallel()
	prog := mustCompile(t, &plan.Plan{Dir: t.TempDir()}, nil, testOptions())
	compile := func(src string) (any, error) {
		opts := append([]expr.Option{expr.Env(scope{}.env())}, prog.library()...)
		opts = append(opts, prog.decimalOperators()...)
		pr, err := expr.Compile(src, opts...)
		if err != nil {
			return nil, err
		}
		return expr.Run(pr, map[string]any{"row": map[string]any{}, "row.Qty": "3", "row.Price": "19.99"})
	}
	tests := []struct {
		src  string
		want any
		err  string
	}{
		{src: `number("19.99") * 3`, want: mustDec("59.97")},
		{src: `3 * number("19.99")`, want: mustDec("59.97")},
		{src: `number("0.1") + number("0.2")`, want: mustDec("0.3")},
		{src: `number("12.50") - 2`, want: mustDec("10.50")},
		{src: `number("100") * 1.17`, want: mustDec("117.00")},
		{src: `number("1.5") * number("1.5")`, want: mustDec("2.25")},
		{src: `number("12.10") == number("12.1")`, want: true},
		{src: `number("2") > 1`, want: true},
		{src: `number("2") <= 1.5`, want: false},
		{src: `number("2") != number("2.0")`, want: false},
		{src: `int(number("3")) + 1`, want: 4},
		{src: `number("2") * number("")`, err: "*: operand 2 must be a number, got empty"},
	}
	for _, tt := range tests {
		got, err := compile(tt.src)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error = %v, want %q", tt.src, err, tt.err)
			}
			continue
		}
		if err != nil || !equalValue(got, tt.want) {
			t.Errorf("%s = %#v, %v; want %#v", tt.src, got, err, tt.want)
		}
	}
}

// Text functions cannot build more than MaxTextResult, however they nest;
// below the limit they give what the standard library gives.
func TestTextFunctionsBounded(t *testing.T) {
	t.Parallel()
	prog := mustCompile(t, &plan.Plan{Dir: t.TempDir()}, nil, testOptions())
	big := strings.Repeat("a", 1<<20)
	x40 := strings.Repeat("x", 40)
	nested := func(params ...any) (any, error) {
		inner, err := fnReplace(big, "a", "aaaaaaaa")
		if err != nil {
			return nil, err
		}
		return fnReplace(inner, "a", "aaaaaaaa")
	}
	bigs := make([]any, 40)
	for i := range bigs {
		bigs[i] = big
	}
	for name, call := range map[string]func() (any, error){
		"replace":           func() (any, error) { return fnReplace(big, "a", x40) },
		"nested replace":    func() (any, error) { return nested() },
		"replace empty old": func() (any, error) { return fnReplace(big, "", x40) },
		"regex_replace":     func() (any, error) { return prog.fnRegexReplace(big, "a", strings.Repeat("$0", 40)) },
		"join":              func() (any, error) { return fnJoin(bigs, ",") },
	} {
		if _, err := call(); err == nil || !strings.Contains(err.Error(), "more than the limit") {
			t.Errorf("%s: err = %v, want the limit", name, err)
		}
	}
	run := func(src string) (any, error) {
		opts := append([]expr.Option{expr.Env(scope{}.env())}, prog.library()...)
		pr, err := expr.Compile(src, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return expr.Run(pr, map[string]any{"row": map[string]any{}})
	}
	for src, want := range map[string]string{
		`regex_replace("ab-cd ef", "(\\w)(\\w)", "$2$1")`: regexp.MustCompile(`(\w)(\w)`).ReplaceAllString("ab-cd ef", "$2$1"),
		`regex_replace("aaa", "a*", "X")`:                 regexp.MustCompile(`a*`).ReplaceAllString("aaa", "X"),
		`regex_replace("abc", "", "-")`:                   regexp.MustCompile(``).ReplaceAllString("abc", "-"),
		`regex_replace("foo bar", "\\bba", "BA")`:         "foo BAr",
		`replace("abc", "", "-")`:                         "-a-b-c-",
		`join(["a", "b"], ", ")`:                          "a, b",
	} {
		got, err := run(src)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %q", src, got, err, want)
		}
	}
}

// plan.Check refuses a call of any function not in plan.Functions, so that
// list and the library must name the same functions (ref() is the
// environment's, not the library's).
func TestLibraryIsPlanFunctions(t *testing.T) {
	t.Parallel()
	c := &compiler{lib: (&Program{}).library()}
	got := append(c.functionNames(), "ref")
	sort.Strings(got)
	want := slices.Clone(plan.Functions)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("the library defines %v\nplan.Functions lists %v", got, want)
	}
}
