package verify

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A single sub-form other than a text (a ship-to address) is compared
// field by field with what the run wrote to it, not as a text: a field the
// server holds otherwise is named with both values, a sub-form the entity
// no longer holds is gone, and one as written is no finding.
func TestCheckRecordOfAShipTo(t *testing.T) {
	t.Parallel()
	wrote := map[string]any{"ADDRESS": "5 Harbour Rd", "STATE": "Haifa"}
	match, _ := json.Marshal(wrote)
	w := Want{Fields: map[string]any{"CUSTNAME": "C1"}, Kids: map[string][]wantKid{
		"SHIPTO2_SUBFORM": {{Path: "0", Left: wrote, Sent: wrote, Match: match}}}}
	for _, c := range []struct {
		name, body string
		want       []RecordFinding
	}{
		{"as written", `{"CUSTNAME":"C1","SHIPTO2_SUBFORM":{"ADDRESS":"5 Harbour Rd","STATE":"Haifa","ZIP":"1"}}`, nil},
		{"a field changed", `{"CUSTNAME":"C1","SHIPTO2_SUBFORM":{"ADDRESS":"9 Old Rd","STATE":"Haifa"}}`,
			[]RecordFinding{{URL: "/SHIPTO2_SUBFORM", Field: "ADDRESS", Problem: Differs, Sent: "5 Harbour Rd", Found: "9 Old Rd", Single: true}}},
		{"gone", `{"CUSTNAME":"C1","SHIPTO2_SUBFORM":null}`,
			[]RecordFinding{{URL: "/SHIPTO2_SUBFORM", Problem: Gone, Single: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := CheckRecord(nil, nil, w, []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Findings, c.want) {
				t.Errorf("findings %+v, want %+v", got.Findings, c.want)
			}
		})
	}
}
