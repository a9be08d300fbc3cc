package plan

// Functions are the names an expression may call besides expr-lang's own
// builtins (len, abs, round, ...): the function library of docs/plan-format.md
// ("Expressions") and ref(). transform defines the library; its tests keep
// that library and this list identical, so Check can refuse a misspelt
// function (uper(x)) before a row is read.
var Functions = []string{
	"trim", "upper", "lower", "html", "basename", "replace", "substr", "pad_left", "split", "join",
	"regex_match", "regex_replace", "coalesce", "default", "number", "int",
	"date", "datetime", "now", "env", "file", "fail", "skip", "lookup", "ref",
}
