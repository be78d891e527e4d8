package retrieve

import (
	"reflect"
	"testing"
)

// Class 3 of issue 12: letters-only and numeric codes are exact terms, and
// IsCode tells codes from names and hyphenated words.
func TestExactTermsCodes(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"What does RJCT mean for a credit transfer?":    {"RJCT"},
		"reason codes NARR and AC04":                    {"NARR", "AC04"},
		"What does status code 404 mean?":               {"404"},
		"a 299 warning on the response.":                {"299"},
		"HTTP 404 after a redirect":                     {"HTTP", "404"},
		"error 500, then a retry":                       {"500"},
		"WHAT DOES THE CODE MEAN":                       nil,     // shouting, not codes
		"code 7.2 of the agreement":                     {"7.2"}, // an exact term, but no code
		"EUR 300 million reason":                        {"EUR 300"},
		"about 250 patients, reason 250.5 of the trial": {"250.5"},
		"the amounts were 120 and 130":                  nil,
	} {
		if got := ExactTerms(q); !reflect.DeepEqual(got, want) {
			t.Errorf("ExactTerms(%q) = %q, want %q", q, got, want)
		}
	}
	for term, want := range map[string]bool{
		"RJCT": true, "AC04": true, "W123": true, "404": true, "pacs.008": true, "7.2": false, "EUR 300": false,
		"p53": false, "Cache-Control": false, "PEP 8": false, "RFC 2119": false, "ISO 20022": false,
		"long-term": false,
	} {
		if got := IsCode(term); got != want {
			t.Errorf("IsCode(%q) = %v, want %v", term, got, want)
		}
	}
}
