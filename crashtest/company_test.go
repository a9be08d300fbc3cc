package crashtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// lookAlikes fills a fresh sandbox with what a company holds before the
// load: the customers and parts that some of the load's orders
// use, as the load has them (the load upserts them and finds nothing to
// change); for one order in four of the load, orders entered by hand with
// the same customer, date and DETAILS, every field the load writes, in
// four shapes: without lines, with the same lines, with only the first
// line in another quantity, and twice without lines; and a customer with
// an order that the load never mentions. A reconciliation that takes any
// of them for the run's own loses the load's order, and an undo that
// believes it deletes what the company had. It returns what the sandbox
// then holds and how many look-alike orders it made.
func lookAlikes(t testing.TB, tg *target, l *load) (company, int) {
	t.Helper()
	customers, parts := rowsBy(l.want["CUSTOMERS"], "CUSTNAME"), rowsBy(l.want["LOGPART"], "PARTNAME")
	made := map[string]bool{}
	master := func(set, key string, row map[string]any) {
		if made[set+key] {
			return
		}
		made[set+key] = true
		post(t, tg, set, row)
	}
	n := 0
	for i, o := range l.want["ORDERS"] {
		if i%4 != 0 {
			continue
		}
		cust := o["CUSTNAME"].(string)
		master("CUSTOMERS", cust, customers[cust])
		header := map[string]any{"CUSTNAME": cust, "CURDATE": o["CURDATE"], "DETAILS": o["DETAILS"]}
		lines, _ := o["ORDERITEMS_SUBFORM"].([]any)
		copies := 1
		switch variant := (i / 4) % 4; {
		case variant == 1 && len(lines) > 0:
			header["ORDERITEMS_SUBFORM"] = sentLines(lines, master, parts, len(lines), 0)
		case variant == 2 && len(lines) > 0:
			header["ORDERITEMS_SUBFORM"] = sentLines(lines, master, parts, 1, 1)
		case variant == 3:
			copies = 2
		}
		for range copies {
			post(t, tg, "ORDERS", header)
			n++
		}
	}
	post(t, tg, "CUSTOMERS", map[string]any{"CUSTNAME": "X-OWN", "CUSTDES": "The company's own customer"})
	post(t, tg, "ORDERS", map[string]any{"CUSTNAME": "X-OWN", "CURDATE": "2025-12-31T00:00:00+00:00", "DETAILS": "not from the load"})
	return tg.sb.Snapshot(), n
}

// sentLines is the first n lines of an expected order as a client sends
// them, each quantity plus more, creating the parts they name first.
func sentLines(lines []any, master func(set, key string, row map[string]any), parts map[string]map[string]any, n int, more float64) []map[string]any {
	var out []map[string]any
	for _, ln := range lines[:n] {
		line := ln.(map[string]any)
		part := line["PARTNAME"].(string)
		master("LOGPART", part, parts[part])
		out = append(out, map[string]any{"PARTNAME": part, "TQUANT": line["TQUANT"].(float64) + more, "PRICE": line["PRICE"]})
	}
	return out
}

func rowsBy(rows []map[string]any, key string) map[string]map[string]any {
	out := make(map[string]map[string]any, len(rows))
	for _, r := range rows {
		out[r[key].(string)] = r
	}
	return out
}

// post creates one entity on the sandbox over HTTP, as a user would by hand.
func post(t testing.TB, tg *target, set string, body map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, tg.url+"/"+set, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("demo", "demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := tg.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(res.Body)
		t.Fatalf("creating %s %s by hand: %s: %s", set, b, res.Status, msg)
	}
	_, _ = io.Copy(io.Discard, res.Body)
}

// held counts the rows of a company snapshot in the sets a load writes.
func held(c company) int {
	n := 0
	for _, set := range []string{"CUSTOMERS", "LOGPART", "ORDERS"} {
		n += len(c[set])
	}
	return n
}
