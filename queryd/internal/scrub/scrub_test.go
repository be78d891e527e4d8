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
		if got := Find(c.in).Apply(c.in, 0); got != c.want {
			t.Errorf("Find(%q).Apply\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestApplyPart: a part of a text is scrubbed as it is within the whole,
// also where scrubbing the part alone would leave it.
func TestApplyPart(t *testing.T) {
	cases := []struct{ whole, part, want string }{
		// A group of an account number is not one on its own.
		{"Pay into account 1234-5678-90 by Friday.", "5678", "[ACCOUNT]"},
		{"Pay into account 1234-5678-90 by Friday.", "account 1234", "account [ACCOUNT]"},
		{"Pay into account 1234-5678-90 by Friday.", "-90 by", "[ACCOUNT] by"},
		// A BIC of letters only counts where the text speaks of BICs.
		{"Use BIC DEUTDEFF. The bank is DEUTDEFF.", "The bank is DEUTDEFF", "The bank is [BIC]"},
		{"IBAN DE89 3704 0044 0532 0130 00 (S1), notice 30 days.", "DE89 3704 0044 0532 0130 00", "[IBAN]"},
		{"IBAN DE89 3704 0044 0532 0130 00 (S1), notice 30 days.", "30 days", "30 days"},
		// Offsets after a placeholder map back to the text.
		{"DE89 3704 0044 0532 0130 00 and account 12345678 and BIC INGBNL2A", "12345678 and BIC INGBNL2A", "[ACCOUNT] and BIC [BIC]"},
	}
	for _, c := range cases {
		at := strings.Index(c.whole, c.part)
		if at < 0 {
			t.Fatalf("%q not in %q", c.part, c.whole)
		}
		if got := Find(c.whole).Apply(c.part, at); got != c.want {
			t.Errorf("%q in %q: got %q, want %q", c.part, c.whole, got, c.want)
		}
	}
	if got := Text("The bank is DEUTDEFF"); got != "The bank is DEUTDEFF" {
		t.Fatalf("the case above needs a part Text leaves alone, got %q", got)
	}
}

func FuzzText(f *testing.F) {
	f.Add("DE89 3704 0044 0532 0130 00")
	f.Add("BIC DEUTDEFF 123456789")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		cuts := Find(s)
		if got := cuts.Apply(s, 0); got != out {
			t.Fatalf("Find(%q).Apply = %q, Text = %q", s, got, out)
		}
		for i, c := range cuts {
			if c.Start < 0 || c.End > len(s) || c.Start >= c.End || i > 0 && c.Start < cuts[i-1].End {
				t.Fatalf("cuts of %q out of order or bounds: %+v", s, cuts)
			}
		}
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
