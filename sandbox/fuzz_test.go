package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/migrate-tool/migrate/sandbox"
)

// FuzzSandboxRequest sends arbitrary paths, queries and bodies: the sandbox
// answers every one with a status, never a panic.
func FuzzSandboxRequest(f *testing.F) {
	seeds := []struct{ method, target, body string }{
		{"GET", "/ORDERS('O1')?$expand=ORDERITEMS_SUBFORM($expand=ORDERITEMSTEXT_SUBFORM;$select=KLINE)", ""},
		{"GET", "/LOGPART?$filter=PRICE%20gt%201%20and%20(PARTNAME%20eq%20'P1'%20or%20PART%20le%203)&$top=2&$skip=1", ""},
		{"POST", "/ORDERS", `{"CUSTNAME":"C1","ORDERITEMS_SUBFORM":[{"PARTNAME":"P1","TQUANT":1}]}`},
		{"PATCH", "/AINVOICES(IVNUM='I1',IVTYPE='A',DEBIT='D')/AINVOICEITEMS_SUBFORM(1)", `{"TQUANT":2}`},
		{"POST", "/ORDERS('O1')/EXTFILES_SUBFORM", `{"EXTFILENAME":"data:text/plain;base64,aGk=","SUFFIX":".txt"}`},
		{"POST", "/$batch", `{"requests":[{"id":"1","method":"POST","url":"CUSTOMERS","body":{"CUSTNAME":"X","CUSTDES":"Y"}},{"id":"2","method":"GET","url":"$1/GENCUSTNOTES_SUBFORM","dependsOn":["1"]}]}`},
		{"GET", "/GetMetadataFor(entity='ORDERS')", ""},
		{"DELETE", "/FAMILY_LOG('F1')/FAMILY_LOGPART_SUBFORM(3)", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, s.body)
	}
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		f.Fatal(err)
	}
	setup := []struct{ method, target, body string }{
		{"POST", "/CUSTOMERS", `{"CUSTNAME":"C1","CUSTDES":"c"}`},
		{"POST", "/LOGPART", `{"PARTNAME":"P1","PARTDES":"p","PRICE":2}`},
		{"POST", "/ORDERS", `{"ORDNAME":"O1","CUSTNAME":"C1","ORDERITEMS_SUBFORM":[{"PARTNAME":"P1","TQUANT":1}]}`},
	}
	for _, s := range setup {
		serve(sb, s.method, s.target, s.body)
	}
	f.Fuzz(func(t *testing.T, method, target, body string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n\t#") {
			return
		}
		switch method {
		case "GET", "POST", "PATCH", "DELETE", "PUT":
		default:
			return
		}
		code := serve(sb, method, target, body)
		if code < 200 || code > 599 {
			t.Fatalf("%s %s: status %d", method, target, code)
		}
	})
}

func serve(sb *sandbox.Server, method, target, body string) int {
	req, err := http.NewRequest(method, "http://sandbox.test"+sandbox.BasePath+target, strings.NewReader(body))
	if err != nil {
		return 200 // not a request a client could send
	}
	req.Header.Set("Authorization", basic("demo", "demo"))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	sb.ServeHTTP(rec, req)
	return rec.Code
}
