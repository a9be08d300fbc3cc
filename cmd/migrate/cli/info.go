package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

type infoJSON struct {
	Target        string `json:"target"`
	User          string `json:"user"`
	SystemVersion string `json:"system_version"`
	// SystemVersionFrom is the function that reported it, or where it was
	// declared ("declared by --system-version"); "" when unknown.
	SystemVersionFrom string   `json:"system_version_from"`
	ODataVersion      string   `json:"odata_version"`
	BatchLimit        int      `json:"batch_limit"`
	BatchResponse     string   `json:"batch_response"`
	Allows            []string `json:"allows"`
	Lacks             []string `json:"lacks"`
	// MayLack: with the version unknown, what a server before 22.0 may or
	// may not have.
	MayLack []string `json:"may_lack,omitempty"`
}

func (a *app) info(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("info", &cf, true)
	asJSON := jsonFlag(fs)
	pos, err := a.parse(fs, args, "[PLAN]", 0, 1)
	if err != nil {
		return err
	}
	view := a.infoView(*asJSON)
	p, err := optionalPlan(pos)
	if err != nil {
		return err
	}
	c, v, err := a.connectVersion(ctx, cf, p)
	if err != nil {
		return err
	}
	defer c.Close()
	user, err := c.client.LoginName(ctx)
	if err != nil {
		return a.unreachable(c, err)
	}
	ov, err := c.client.ODataVersion(ctx)
	if err != nil {
		return a.unreachable(c, err)
	}
	out := infoJSON{Target: c.url, User: user, SystemVersion: v.Raw, SystemVersionFrom: v.From, ODataVersion: ov,
		BatchLimit: v.BatchLimit(), BatchResponse: "multipart/mixed", Allows: []string{}, Lacks: []string{}}
	if !v.Known() {
		// Older than 22.0, but how much is unknown: what apply would do.
		out.SystemVersion, out.BatchLimit = "unknown, older than 22.0 (no version function; declare it with --system-version)", 100
	}
	if v.JSONBatchResponses() {
		out.BatchResponse = "JSON"
	}
	if v.Standard {
		// The features listed are the ERP's, gated on its versions; a
		// standard service has what the standard has, and refuses the
		// ERP's own (a language code, GetMetadataFor).
		out.Allows = []string{"what the OData 4.0 standard has: no system version gates it (dialect odata)"}
		return view.Info(out, c.method, v)
	}
	for _, f := range odata.Features() {
		switch {
		case v.Has(f):
			out.Allows = append(out.Allows, f.Name)
		case !v.Known() && f.AfterVersionFunction():
			out.Lacks = append(out.Lacks, f.Name+" (needs "+f.Since()+")")
		case !v.Known():
			out.MayLack = append(out.MayLack, f.Name+" (needs "+f.Since()+")")
		default:
			out.Lacks = append(out.Lacks, f.Name+" (needs "+f.Since()+")")
		}
	}
	return view.Info(out, c.method, v)
}

// systemVersionLine is info's line: the version and which source it used.
func systemVersionLine(v odata.Version) string {
	switch {
	case v.Standard:
		return "none: " + v.From + ", every feature the standard has"
	case !v.Known():
		return "unknown, older than 22.0: the target has no version function and none was declared (--system-version, " + envSystemVersion + " or target.system_version)"
	case strings.HasPrefix(v.From, "declared"):
		return v.Raw + " (" + v.From + "; the target has no version function)"
	}
	return v.Raw + " (reported by " + v.From + ")"
}

func optionalPlan(pos []string) (*plan.Plan, error) {
	if len(pos) == 0 {
		return nil, nil
	}
	p, diags := plan.Load(pos[0])
	if p == nil || len(diags) > 0 {
		var b strings.Builder
		for _, d := range diags {
			b.WriteString("\n  " + d.String())
		}
		return nil, usageErr("the plan has problems; run `migrate validate %s`:%s", pos[0], b.String())
	}
	return p, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
