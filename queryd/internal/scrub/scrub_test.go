package scrub

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Why was the transfer to DE89 3704 0044 0532 0130 00 rejected?", "Why was the transfer to [IBAN] rejected?"},
		{"refund to GB29NWBK60161331926819 please", "refund to [IBAN] please"},
		{"IBAN DE89 3704 0044 0532 0130 00 is blocked", "IBAN [IBAN] is blocked"},
		{"send it to INGBNL2A today", "send it to [BIC] today"},
		{"BIC DEUTDEFF for the SEPA credit", "BIC [BIC] for the SEPA credit"},
		{"swift code DEUTDEFFXXX", "swift code [BIC]"},
		{"account 123456789 was closed", "account [ACCOUNT] was closed"},
		{"account 1234-5678-90 was closed", "account [ACCOUNT] was closed"},
		// Things that must stay readable.
		{"What does reason code AC04 mean in pacs.008?", "What does reason code AC04 mean in pacs.008?"},
		{"Which HEALTHCHECK interval does the image use?", "Which HEALTHCHECK interval does the image use?"},
		{"Notice given on 2026-11-04 under clause 7.2", "Notice given on 2026-11-04 under clause 7.2"},
		{"How many unused leave days can be carried over?", "How many unused leave days can be carried over?"},
		// A mistyped IBAN is not an IBAN, but its digits still go.
		{"A wrong check digit: DE00 3704 0044 0532 0130 00", "A wrong check digit: DE00 [ACCOUNT]"},
		{"EUR 1.000,00 within 30 days", "EUR 1.000,00 within 30 days"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("DE89 3704 0044 0532 0130 00")
	f.Add("BIC DEUTDEFF 123456789")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		// Scrubbing is idempotent and never lets a valid IBAN through.
		if Text(out) != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, Text(out))
		}
		for _, w := range strings.Fields(out) {
			if len(w) >= 15 && validIBAN(w) {
				t.Fatalf("IBAN %q left in %q", w, out)
			}
		}
	})
}
