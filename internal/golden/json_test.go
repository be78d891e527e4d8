package golden

import "testing"

func TestJSONClose(t *testing.T) {
	cases := []struct {
		want, got string
		ok        bool
	}{
		{`{"a":0.6204,"b":[1,"x"]}`, `{"a":0.6203,"b":[1,"x"]}`, true},
		{`{"a":0.6204}`, `{"a":0.6224}`, false},
		{`{"a":0.6204}`, `{"a":"0.6204"}`, false},
		{`{"a":1,"b":2}`, `{"a":1}`, false},
		{`{"a":1}`, `{"a":1,"c":null}`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`{"s":"x"}`, `{"s":"y"}`, false},
		{`{"n":null}`, `{"n":null}`, true},
		{`{"t":true}`, `{"t":false}`, false},
		{`not json`, `not json`, false},
	}
	for _, c := range cases {
		if got := JSONClose([]byte(c.want), []byte(c.got), 0.0015); got != c.ok {
			t.Errorf("JSONClose(%s, %s) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}
