package sandbox_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/migrate-tool/migrate/sandbox"
)

// A test starts a sandbox in-process and talks to it over loopback.
func ExampleNew() {
	sb, err := sandbox.New(sandbox.Options{SystemVersion: "25.1"})
	if err != nil {
		panic(err)
	}
	defer sb.Close()
	srv := httptest.NewServer(sb)
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+sandbox.BasePath+"/CUSTOMERS", strings.NewReader(`{"CUSTNAME":"C100","CUSTDES":"Acme"}`))
	req.SetBasicAuth("demo", "demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	fmt.Println(res.StatusCode, sb.Snapshot()["CUSTOMERS"][0]["CUSTDES"])
	// Output: 201 Acme
}
