package crashtest

import (
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plan every campaign loads. Orders are grouped from a flat sheet; a
// group row without a part gives an order without lines; DETAILS carries
// the source order number because ORDNAME is numbered by the server. The
// order text appends (APPEND: true), so a text written twice reads back
// doubled and the comparison sees it. Customers and parts are inserted, or
// upserted into a company that already holds some of them.
const planYAML = `version: 1
name: campaign
target:
  timezone: UTC
  batch_size: %[1]d
  concurrency: %[2]d
sources:
  customers: {file: data/customers.csv}
  parts: {file: data/parts.csv}
  orders: {file: data/orders.csv}
steps:
  - name: customers
    entity: CUSTOMERS
    source: customers
    mode: %[3]s
    fields:
      CUSTNAME: row.Code
      CUSTDES: row.Name
      PHONE: row.Phone
  - name: parts
    entity: LOGPART
    source: parts
    mode: %[3]s
    fields:
      PARTNAME: row.PartNo
      PARTDES: row.Description
      PRICE: row.Price
  - name: orders
    entity: ORDERS
    source: orders
    group_by: row.OrderNo
    id: row.OrderNo
    after: [customers, parts]
    fields:
      CUSTNAME: row.Customer
      CURDATE: date(row.Date, "2006-01-02")
      DETAILS: row.OrderNo%[4]s
    subforms:
      - name: ORDERITEMS_SUBFORM
        source: group
        when: row.Part != ""
        fields:
          PARTNAME: row.Part
          TQUANT: row.Qty
          PRICE: row.Price%[5]s
        subforms:
          - name: ORDERITEMSTEXT_SUBFORM
            when: row.LineNote != ""
            fields: {TEXT: row.LineNote}
      - name: ORDERSTEXT_SUBFORM
        when: row.Remarks != ""
        fields:
          TEXT: row.Remarks
          APPEND: true
      - name: EXTFILES_SUBFORM
        source: group
        when: row.Attachment != ""
        fields:
          EXTFILEDES: row.AttachmentTitle
          EXTFILENAME: file(row.Attachment)
`

// load is a generated plan with its sources, and what the server must hold
// once it has been applied.
type load struct {
	dir, plan string
	// records is the number of top-level records (customers, parts,
	// orders); children counts lines, texts and attachments.
	records, children int
	want              expected
}

// expected is the server's data after the load, per entity set, each row
// with only the fields the load decides (see normalize).
type expected map[string][]map[string]any

// loadConfig shapes a generated load.
type loadConfig struct {
	records     int // top-level records
	seed        int64
	batchSize   int  // the plan's batch_size (0: the server's limit)
	concurrency int  // the plan's concurrency (0: the default)
	upsert      bool // customers and parts are upserted, not inserted
	// filled: the plan also writes an order's CDES and a line's PDES, typed
	// by hand, which the server fills from the customer and the part in
	// their place.
	filled bool
}

var words = []string{"alpha", "bravo", "steel", "brass", "כרמל", "גליל", "Ñandú", "O'Brien", "\"quoted\"", "comma, inside", "ümlaut", "tab"}

// generate writes a plan, its CSV sources and attachment files under dir
// and computes the expected data from the generated rows alone.
func generate(t testing.TB, dir string, cfg loadConfig) *load {
	t.Helper()
	r := rand.New(rand.NewSource(cfg.seed))
	n := max(cfg.records, 12)
	nCust, nPart := max(3, n*15/100), max(3, n*15/100)
	nOrd := n - nCust - nPart
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "data", "files"), 0o755))
	l := &load{dir: dir, plan: filepath.Join(dir, "plan.yaml"), records: n, want: expected{}}
	bs, conc := cfg.batchSize, cfg.concurrency
	if bs == 0 {
		bs = 100
	}
	if conc == 0 {
		conc = 2
	}
	mode := "insert"
	if cfg.upsert {
		mode = "upsert"
	}
	cdes, pdes := "", ""
	if cfg.filled {
		cdes, pdes = "\n      CDES: 'row.Customer + \" (typed)\"'", "\n          PDES: '\"typed\"'"
	}
	must(os.WriteFile(l.plan, fmt.Appendf(nil, planYAML, bs, conc, mode, cdes, pdes), 0o644))

	phrase := func(prefix string, i, maxLen int) string {
		s := fmt.Sprintf("%s %d %s %s", prefix, i, words[r.Intn(len(words))], words[r.Intn(len(words))])
		if rs := []rune(s); len(rs) > maxLen {
			s = string(rs[:maxLen])
		}
		return s
	}

	// Attachments: a few small files of each kind, read back as data URIs.
	type file struct{ name, uri string }
	var files []file
	for i := range 12 {
		ext, mimeType := ".txt", "text/plain"
		if i%3 == 0 {
			ext, mimeType = ".pdf", "application/pdf"
		}
		data := make([]byte, 16+r.Intn(2000))
		r.Read(data)
		if ext == ".txt" {
			data = fmt.Appendf(nil, "delivery note %d\n%x\n", i, data[:16])
		}
		name := fmt.Sprintf("data/files/doc-%02d%s", i, ext)
		must(os.WriteFile(filepath.Join(dir, name), data, 0o644))
		files = append(files, file{name, "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)})
	}

	writeCSV := func(name string, rows [][]string) {
		f, err := os.Create(filepath.Join(dir, "data", name))
		must(err)
		w := csv.NewWriter(f)
		must(w.WriteAll(rows))
		must(f.Close())
	}

	custName := map[string]string{}
	rows := [][]string{{"Code", "Name", "Phone"}}
	for i := range nCust {
		code := fmt.Sprintf("C%05d", i+1)
		name := phrase("Customer", i+1, 48)
		phone := ""
		if r.Intn(3) > 0 {
			phone = fmt.Sprintf("+972-%d-%07d", 2+r.Intn(8), r.Intn(10000000))
		}
		custName[code] = name
		row := map[string]any{"CUSTNAME": code, "CUSTDES": name}
		if phone != "" {
			row["PHONE"] = phone
		}
		l.want["CUSTOMERS"] = append(l.want["CUSTOMERS"], row)
		rows = append(rows, []string{code, name, phone})
	}
	writeCSV("customers.csv", rows)

	partDes := map[string]string{}
	var partNames []string
	rows = [][]string{{"PartNo", "Description", "Price"}}
	for i := range nPart {
		code := fmt.Sprintf("P-%05d", i+1)
		des := phrase("Part", i+1, 48)
		cents := 1 + r.Intn(100000)
		price := fmt.Sprintf("%d.%02d", cents/100, cents%100)
		partDes[code] = des
		partNames = append(partNames, code)
		l.want["LOGPART"] = append(l.want["LOGPART"], map[string]any{"PARTNAME": code, "PARTDES": des, "PRICE": decimal(price)})
		rows = append(rows, []string{code, des, price})
	}
	writeCSV("parts.csv", rows)

	rows = [][]string{{"OrderNo", "Customer", "Date", "Part", "Qty", "Price", "LineNote", "Remarks", "Attachment", "AttachmentTitle"}}
	for i := range nOrd {
		no := fmt.Sprintf("SRC-%06d", i+1)
		cust := fmt.Sprintf("C%05d", 1+r.Intn(nCust))
		date := fmt.Sprintf("2026-%02d-%02d", 1+r.Intn(12), 1+r.Intn(28))
		nLines, nAtt := r.Intn(6), 0
		if r.Intn(4) == 0 {
			nAtt = 1 + r.Intn(2)
		}
		remarks := ""
		if r.Intn(2) == 0 {
			remarks = "<p>" + phrase("Remark", i+1, 60) + "</p>"
		}
		order := map[string]any{"CUSTNAME": cust, "CDES": custName[cust], "CURDATE": date + "T00:00:00+00:00", "DETAILS": no}
		var lines, atts []any
		for j := range max(nLines, nAtt, 1) {
			rec := []string{no, cust, date, "", "", "", "", remarks, "", ""}
			if j < nLines {
				part := partNames[r.Intn(len(partNames))]
				qty := fmt.Sprintf("%d", 1+r.Intn(500))
				cents := r.Intn(50000)
				price := fmt.Sprintf("%d.%02d", cents/100, cents%100)
				line := map[string]any{"PARTNAME": part, "PDES": partDes[part], "TQUANT": decimal(qty), "PRICE": decimal(price), "KLINE": float64(j + 1)}
				rec[3], rec[4], rec[5] = part, qty, price
				if r.Intn(3) == 0 {
					note := phrase("Line note", j+1, 40)
					rec[6] = note
					line["ORDERITEMSTEXT_SUBFORM"] = map[string]any{"TEXT": note}
					l.children++
				}
				lines = append(lines, line)
			}
			if j < nAtt {
				f := files[r.Intn(len(files))]
				title := phrase("Attachment", j+1, 40)
				rec[8], rec[9] = f.name, title
				atts = append(atts, map[string]any{"EXTFILEDES": title, "EXTFILENAME": f.uri, "EXTFILENUM": float64(j + 1)})
			}
			rows = append(rows, rec)
		}
		if len(lines) > 0 {
			order["ORDERITEMS_SUBFORM"] = lines
		}
		if len(atts) > 0 {
			order["EXTFILES_SUBFORM"] = atts
		}
		if remarks != "" {
			order["ORDERSTEXT_SUBFORM"] = map[string]any{"TEXT": remarks}
			l.children++
		}
		l.children += len(lines) + len(atts)
		l.want["ORDERS"] = append(l.want["ORDERS"], order)
	}
	writeCSV("orders.csv", rows)
	return l
}

// decimal is how a decimal reads back from a snapshot (a JSON number).
func decimal(s string) float64 {
	var f float64
	if _, err := fmt.Sscan(strings.TrimSpace(s), &f); err != nil {
		panic(fmt.Sprintf("decimal %q: %v", s, err))
	}
	return f
}
