package cli

import (
	"fmt"
	"strings"

	"github.com/migrate-tool/migrate/odata"
)

// infoView shows the target: who the credentials are, its versions and
// what they allow.
type infoView interface {
	Info(doc infoJSON, method string, v odata.Version) error
}

func (a *app) infoView(asJSON bool) infoView {
	if asJSON {
		return infoJSONView{jsonView{a}}
	}
	return infoHuman{a.human()}
}

type infoHuman struct{ humanView }

// Info: method is how the credentials signed in, v the version as found.
func (h infoHuman) Info(out infoJSON, method string, v odata.Version) error {
	tw := newTable(h.a.stdout)
	fmt.Fprintf(tw, "target\t%s\n", out.Target)
	if out.User == "" && v.Standard {
		fmt.Fprintf(tw, "user\tnot told: a service of dialect odata has no GetLoginName (%s)\n", method)
	} else {
		fmt.Fprintf(tw, "user\t%s (%s)\n", out.User, method)
	}
	fmt.Fprintf(tw, "system version\t%s\n", systemVersionLine(v))
	fmt.Fprintf(tw, "OData version\t%s\n", out.ODataVersion)
	fmt.Fprintf(tw, "batch limit\t%d operations per $batch, responses as %s\n", out.BatchLimit, out.BatchResponse)
	fmt.Fprintf(tw, "allows\t%s\n", strings.Join(out.Allows, "; "))
	if len(out.Lacks) > 0 {
		fmt.Fprintf(tw, "lacks\t%s\n", strings.Join(out.Lacks, "; "))
	}
	if len(out.MayLack) > 0 {
		fmt.Fprintf(tw, "may lack\t%s\n", strings.Join(out.MayLack, "; "))
	}
	return tw.Flush()
}

type infoJSONView struct{ jsonView }

func (v infoJSONView) Info(doc infoJSON, _ string, _ odata.Version) error {
	return writeJSON(v.a.stdout, doc)
}
