package plan

import "github.com/migrate-tool/migrate/internal/didyoumean"

// didYouMean formats a suggestion as a message suffix.
func didYouMean(name string, candidates []string) string {
	if s := didyoumean.Closest(name, candidates); s != "" {
		return "; did you mean " + quote(s) + "?"
	}
	return ""
}
