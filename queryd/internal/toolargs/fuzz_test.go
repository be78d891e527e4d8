package toolargs

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzDecodeAgreesWithSchema: Decode never panics, and for any JSON object
// it accepts what the schema accepts and refuses what the schema refuses
// (sample's Validate refuses one more name, "bad").
func FuzzDecodeAgreesWithSchema(f *testing.F) {
	for _, s := range []string{`{"name":"a"}`, `{"name":"ab","tags":["x"],"size":9,"low":2,"mode":"b","attrs":{"k":"v"},"on":true}`,
		`{"name":"abcd"}`, `{"name":"a","size":0}`, `{"name":"a","size":2.5}`, `{"name":"a","tags":["x",""]}`, `{"name":"é"}`,
		`{"name":"a","attrs":{"a":"","b":"","c":""}}`, `{"name":"a","zz":1}`, `[]`, `null`, `{"name":"a","size":1e30}`, `{"name":"\u0000"}`} {
		f.Add([]byte(s))
	}
	s, err := Schema[sample]()
	if err != nil {
		f.Fatal(err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode[sample](data)
		var inst map[string]any
		if json.Unmarshal(data, &inst) != nil || inst == nil {
			if err == nil && json.Valid(data) && string(data) != "null" {
				t.Fatalf("%q is no object, Decode accepted it", data)
			}
			return
		}
		for k, x := range inst {
			if x == nil {
				delete(inst, k) // null counts as left out
			}
		}
		if v.Name == "bad" {
			return
		}
		for _, k := range []string{"size", "low"} {
			if f, ok := inst[k].(float64); ok && (f <= math.MinInt64 || f >= math.MaxInt64) {
				return // beyond int64: refused, which no schema says
			}
		}
		if ok := validate(resolved, inst) == nil; ok != (err == nil) {
			t.Fatalf("%s: the schema says %v (%v), Decode says %v", data, ok, validate(resolved, inst), err)
		}
	})
}

func validate(r *jsonschema.Resolved, inst map[string]any) error { return r.Validate(inst) }
