package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// Calls per minute per user: 429 with Retry-After past the limit.
func TestLimitCallsPerMinute(t *testing.T) {
	t.Parallel()
	clock := newClock()
	c := start(t, sandbox.Options{CallsPerMinute: 3, Now: clock.Now, Users: map[string]string{"demo": "demo", "other": "pw"}})
	for i := 0; i < 3; i++ {
		c.must(200, "GET", "/CUSTOMERS", nil)
		clock.Advance(10 * time.Second)
	}
	r := c.must(429, "GET", "/CUSTOMERS", nil)
	if r.header.Get("Retry-After") != "30" {
		t.Errorf("Retry-After %q, want 30", r.header.Get("Retry-After"))
	}
	c.auth = basic("other", "pw")
	c.must(200, "GET", "/CUSTOMERS", nil) // per user
	c.auth = basic("demo", "demo")
	clock.Advance(31 * time.Second)
	c.must(200, "GET", "/CUSTOMERS", nil)
	if st := c.sb.Stats(); st.Throttled != 1 || st.Calls != 5 {
		t.Errorf("stats %+v", st)
	}
}

// Concurrent calls per user: a call in flight (its body still arriving)
// holds its slot.
func TestLimitMaxConcurrent(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{MaxConcurrent: 1})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", c.base+"/CUSTOMERS", pr)
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan int)
	go func() {
		res, err := c.srv.Client().Do(req)
		if err != nil {
			done <- 0
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}()
	if _, err := pw.Write([]byte(`{"CUSTNAME":"C1",`)); err != nil {
		t.Fatal(err)
	}
	// Wait until the first call holds its slot (it is counted once admitted).
	for c.sb.Stats().Calls == 0 {
		runtime.Gosched()
	}
	r := c.must(429, "GET", "/CUSTOMERS", nil)
	if r.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	pw.Write([]byte(`"CUSTDES":"x"}`))
	pw.Close()
	if st := <-done; st != 201 {
		t.Errorf("first call: %d", st)
	}
	c.must(200, "GET", "/CUSTOMERS", nil)
}

// Faults: each kind at rate 1.
func TestFaults(t *testing.T) {
	t.Parallel()
	body := map[string]any{"CUSTNAME": "C1", "CUSTDES": "x"}
	tests := []struct {
		kind      string
		status    int // 0: the connection drops
		committed bool
	}{
		{sandbox.FaultError500, 500, false},
		{sandbox.FaultThrottle429, 429, false},
		{sandbox.FaultDropBeforeCommit, 0, false},
		{sandbox.FaultDropAfterCommit, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			t.Parallel()
			c := start(t, sandbox.Options{Faults: map[string]float64{tt.kind: 1}, Seed: 7})
			j, _ := json.Marshal(body)
			req, _ := http.NewRequest("POST", c.base+"/CUSTOMERS", bytes.NewReader(j))
			req.Header.Set("Authorization", c.auth)
			res, err := c.srv.Client().Do(req)
			status := 0
			if err == nil {
				status = res.StatusCode
				res.Body.Close()
			}
			if status != tt.status {
				t.Errorf("status %d (err %v), want %d", status, err, tt.status)
			}
			if got := len(c.sb.Snapshot()["CUSTOMERS"]) == 1; got != tt.committed {
				t.Errorf("committed %v, want %v", got, tt.committed)
			}
			if st := c.sb.Stats(); st.Faults != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
	if _, err := sandbox.New(sandbox.Options{Faults: map[string]float64{"flood": 0.5}}); err == nil {
		t.Error("unknown fault accepted")
	}
	// Reads are not dropped, and a zero rate never fires.
	c := start(t, sandbox.Options{Faults: map[string]float64{sandbox.FaultDropBeforeCommit: 1, sandbox.FaultError500: 0}})
	c.must(200, "GET", "/CUSTOMERS", nil)
}

// Options.RefuseKey refuses one record with a screen error, in a batch too.
func TestRefuseKey(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{RefuseKey: func(entity, key string) string {
		if entity == "CUSTOMERS" && key == "C13" {
			return "Customer C13 is blocked"
		}
		return ""
	}})
	_, rs := c.batch("json", []odata.BatchRequest{
		post("1", "CUSTOMERS", `{"CUSTNAME":"C12","CUSTDES":"ok"}`),
		post("2", "CUSTOMERS", `{"CUSTNAME":"C13","CUSTDES":"ok"}`),
		post("3", "CUSTOMERS", `{"CUSTNAME":"C14","CUSTDES":"ok"}`),
	})
	if statuses(rs) != "1:201 2:400 3:201" || !strings.Contains(string(rs[1].Body), "Line 1- Customer C13 is blocked") {
		t.Errorf("%s %s", statuses(rs), rs[1].Body)
	}
}

// Options.StatePath: data and counters survive a restart; the file is
// replaced atomically.
func TestPersistence(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	opts := sandbox.Options{StatePath: path, Now: newClock().Now}
	c := start(t, opts)
	c.seed()
	c.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C100", "ORDERITEMS_SUBFORM": []any{map[string]any{"PARTNAME": "P1", "TQUANT": 1.5}}})
	c.must(200, "POST", "/ORDERS('SO26000001')/ORDERSTEXT_SUBFORM", map[string]any{"TEXT": "<p>hi</p>"})
	before := c.sb.Snapshot()
	if err := c.sb.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files beside the state: %v", entries)
	}
	c2 := start(t, opts)
	if after := c2.sb.Snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("after restart:\n%v\nwant\n%v", after, before)
	}
	o := c2.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C100"}).json(t)
	if o["ORDNAME"] != "SO26000002" || o["ORD"] != float64(2) {
		t.Errorf("counters not restored: %v", o)
	}
	// A state written by hand, without counters, does not reuse ORD values.
	hand := filepath.Join(t.TempDir(), "hand.json")
	os.WriteFile(hand, []byte(`{"version":1,"data":{"CUSTOMERS":[{"CUSTNAME":"C1","CUSTDES":"x"}],"ORDERS":[{"ORDNAME":"X1","CUSTNAME":"C1","ORD":41}]}}`), 0o644)
	c3 := start(t, sandbox.Options{StatePath: hand})
	if o := c3.must(201, "POST", "/ORDERS", map[string]any{"CUSTNAME": "C1"}).json(t); o["ORD"] != float64(42) {
		t.Errorf("ORD after a hand-written state: %v", o["ORD"])
	}
	if _, err := sandbox.New(sandbox.Options{StatePath: filepath.Join(t.TempDir(), "no", "such", "s.json")}); err == nil {
		t.Error("a state path in a missing directory was accepted")
	}
	if err := os.WriteFile(path, []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.New(opts); err == nil || !strings.Contains(err.Error(), "state.json") {
		t.Errorf("corrupt state: %v", err)
	}
}

// Concurrent clients (run with -race): every create lands exactly once.
func TestConcurrentClients(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.seed()
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan string, workers*each*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				name := fmt.Sprintf("W%dC%d", w, i)
				if r := c.do("POST", "/CUSTOMERS", map[string]any{"CUSTNAME": name, "CUSTDES": "x"}); r.status != 201 {
					errs <- fmt.Sprintf("%s: %d", name, r.status)
				}
				var reqs []odata.BatchRequest
				reqs = append(reqs, post("o", "ORDERS", `{"CUSTNAME":"`+name+`"}`), post("l", "$o/ORDERITEMS_SUBFORM", `{"PARTNAME":"P1","TQUANT":1}`, "o"))
				r := c.do("POST", "/$batch", jsonBatch(t, reqs))
				if r.status != 200 || strings.Count(r.String(), `"status":201`) != 2 {
					errs <- fmt.Sprintf("batch %s: %d %s", name, r.status, r.body)
				}
				if r := c.do("GET", "/ORDERS?$top=5&$expand=ORDERITEMS_SUBFORM", nil); r.status != 200 {
					errs <- fmt.Sprintf("read: %d", r.status)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	snap := c.sb.Snapshot()
	if len(snap["CUSTOMERS"]) != 1+workers*each || len(snap["ORDERS"]) != workers*each {
		t.Errorf("%d customers, %d orders", len(snap["CUSTOMERS"]), len(snap["ORDERS"]))
	}
	seen := map[any]bool{}
	for _, o := range snap["ORDERS"] {
		if seen[o["ORD"]] {
			t.Errorf("ORD %v assigned twice", o["ORD"])
		}
		seen[o["ORD"]] = true
	}
}

// BenchmarkSandboxBatch measures sub-requests per second through JSON
// batches of 100 creates on loopback, client included (target: 20,000/s).
func BenchmarkSandboxBatch(b *testing.B) {
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httpServer(sb)
	defer srv.Close()
	client := srv.Client()
	b.ReportAllocs()
	n := 0
	start, cpu0 := time.Now(), cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var reqs []odata.BatchRequest
		for j := 0; j < 100; j++ {
			n++
			reqs = append(reqs, post(fmt.Sprint(j), "CUSTOMERS", fmt.Sprintf(`{"CUSTNAME":"B%d","CUSTDES":"bench"}`, n)))
		}
		var buf bytes.Buffer
		_ = odata.EncodeJSONBatch(&buf, reqs)
		req, _ := http.NewRequest("POST", srv.URL+sandbox.BasePath+"/$batch", &buf)
		req.Header.Set("Authorization", basic("demo", "demo"))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "subrequests/s")
	// Per CPU-second of client and server together: what a shared machine
	// cannot distort.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "subrequests/cpu-s")
	}
}

func TestParseFault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		kind string
		rate float64
		ok   bool
	}{
		{"error-500=0.05", sandbox.FaultError500, 0.05, true},
		{"drop-after-commit=1", sandbox.FaultDropAfterCommit, 1, true},
		{"error-500", "", 0, false},
		{"error-500=2", "", 0, false},
		{"flood=0.1", "", 0, false},
	}
	for _, tt := range tests {
		kind, rate, err := sandbox.ParseFault(tt.in)
		if (err == nil) != tt.ok || kind != tt.kind || rate != tt.rate {
			t.Errorf("ParseFault(%q) = %q, %v, %v", tt.in, kind, rate, err)
		}
	}
}

func TestODataVersionHeader(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.must(200, "GET", "/CUSTOMERS", nil, "OData-Version", "4.0")
	c.must(400, "GET", "/CUSTOMERS", nil, "OData-Version", "3.0")
}

// Faults drawn from Options.Seed repeat exactly; Latency delays answers.
func TestFaultsSeededAndLatency(t *testing.T) {
	t.Parallel()
	outcomes := func() string {
		c := start(t, sandbox.Options{Faults: map[string]float64{sandbox.FaultError500: 0.5}, Seed: 42})
		var b strings.Builder
		for i := 0; i < 40; i++ {
			fmt.Fprintf(&b, "%d ", c.do("GET", "/CURRENCIES", nil).status)
		}
		return b.String()
	}
	a, b := outcomes(), outcomes()
	if a != b || !strings.Contains(a, "500") || !strings.Contains(a, "200") {
		t.Errorf("seeded faults differ or are one-sided:\n%s\n%s", a, b)
	}
	c := start(t, sandbox.Options{Latency: 30 * time.Millisecond})
	begin := time.Now()
	c.must(200, "GET", "/CURRENCIES", nil)
	if d := time.Since(begin); d < 30*time.Millisecond {
		t.Errorf("answered in %v, latency 30ms", d)
	}
}

// DropNextWrites drops exactly the next calls that write, before or after
// they took effect; reads, and a $batch of reads, are answered meanwhile.
func TestDropNextWrites(t *testing.T) {
	t.Parallel()
	c := start(t, sandbox.Options{})
	c.sb.DropNextWrites(1, sandbox.FaultDropAfterCommit)
	post := func(body string) error {
		req, _ := http.NewRequest("POST", c.base+"/$batch", strings.NewReader(body))
		req.Header.Set("Authorization", c.auth)
		req.Header.Set("Content-Type", "application/json")
		res, err := c.srv.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	if err := post(`{"requests":[{"id":"1","method":"GET","url":"CUSTOMERS?$top=1"}]}`); err != nil {
		t.Fatalf("a batch of reads was dropped: %v", err)
	}
	write := `{"requests":[{"id":"1","method":"POST","url":"CUSTOMERS","headers":{"content-type":"application/json"},"body":{"CUSTNAME":"%s","CUSTDES":"x"}}]}`
	if err := post(fmt.Sprintf(write, "D1")); err == nil {
		t.Fatal("the first write was answered; want its connection dropped")
	}
	if err := post(fmt.Sprintf(write, "D2")); err != nil {
		t.Fatalf("the second write was dropped: %v", err)
	}
	n := 0
	for _, row := range c.sb.Snapshot()["CUSTOMERS"] {
		if row["CUSTNAME"] == "D1" || row["CUSTNAME"] == "D2" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d of the two writes took effect; want both (drop after commit)", n)
	}
	c.sb.DropNextWrites(1, sandbox.FaultDropBeforeCommit)
	if err := post(fmt.Sprintf(write, "D3")); err == nil {
		t.Fatal("the write was answered; want its connection dropped")
	}
	if err := post(fmt.Sprintf(write, "D4")); err != nil {
		t.Fatalf("the next write was dropped: %v", err)
	}
	for _, row := range c.sb.Snapshot()["CUSTOMERS"] {
		if row["CUSTNAME"] == "D3" {
			t.Error("D3 took effect; drop before commit must lose it")
		}
	}
}
