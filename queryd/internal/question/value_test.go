package question

import "testing"

func TestWants(t *testing.T) {
	for _, c := range []struct {
		q    string
		want Value
	}{
		{"What percentage of each paycheck does GSA withhold for FERS?", ValuePercent},
		{"What share of FEHB premiums does GSA contribute?", ValuePercent},
		{"What is this year's annual TSP contribution limit in dollars?", ValueMoney},
		{"How much does a licensed Zoom user account cost per year?", ValueMoney},
		{"What is the base fee for sending a parcel to North America?", ValueMoney},
		{"What does a parcel within the same country cost as a base fee?", ValueMoney},
		{"What carrier frequency does V.29 modulation use?", ValueFrequency},
		{"What is the maximum transmission speed of a Group 4 terminal?", ValueRate},
		{"How much faster is the Green Tea garbage collector?", ValueRatio},
		// Forms that ask for something else, or for a value whose form
		// cannot be told in text.
		{"How often are performance reviews held?", ValueNone},
		{"What frequency of backups is required?", ValueNone},
		{"How much notice must be given to stop the renewal?", ValueNone},
		{"How long before leave banked in place of extra wages is forfeited?", ValueNone},
		{"How many transit days does a parcel to Asia take?", ValueNone},
		{"Can someone at the maximum salary receive overtime?", ValueNone},
		{"What is the rate limit of the API?", ValueNone},
		{"What CMVP certificate number was the module awarded?", ValueNumbered},
		{"What port does an IMAP server listen on?", ValueNumbered},
		{"What number of retries is allowed?", ValueNone},
		{"What is the maximum number of fields a CSV record may have?", ValueCount},
	} {
		if got := Wants(c.q).Value; got != c.want {
			t.Errorf("Wants(%q) = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestStates(t *testing.T) {
	for _, c := range []struct {
		v    Value
		text string
		want bool
	}{
		{ValueMoney, "The maximum salary is $191,900 as of 2024.", true},
		{ValueMoney, "zone: Z1 | base_fee_eur: 4.20 | transit_days: 1", true},
		{ValueMoney, "The fee is 25 euros per badge.", true},
		{ValueMoney, "Training is free of charge for staff.", true},
		{ValueMoney, "A percentage of each paycheck is withheld by GSA and put into FERS.", false},
		{ValueMoney, "Feel free to ask; the 2024 handbook applies.", false},
		{ValuePercent, "It takes 6.2 percent of each paycheck.", true},
		{ValuePercent, "Overhead fell by 30%.", true},
		{ValuePercent, "A percentage of each paycheck is withheld.", false},
		{ValueFrequency, "The carrier is 1700 Hz.", true},
		{ValueFrequency, "Group 3 terminals use V.29 modulation.", false},
		{ValueRate, "limited to 9600 bit/s and 7200 bit/s", true},
		{ValueRate, "a rate of 64 kbit/s over ISDN", true},
		{ValueRate, "The rate is negotiated in phase B.", false},
		{ValueRatio, "GC overhead is reduced by 10-40%.", true},
		{ValueRatio, "It is twice as fast.", true},
		{ValueRatio, "Green Tea is a new garbage collector.", false},
		{ValueNone, "anything", true},
	} {
		if got := States(c.v, c.text); got != c.want {
			t.Errorf("States(%v, %q) = %v, want %v", c.v, c.text, got, c.want)
		}
	}
}

func TestWantNumbered(t *testing.T) {
	w := Wants("What certificate number was the Go Cryptographic Module awarded?")
	if w.Noun != "certificate" || w.Issuer != "" || w.String() != "a certificate number" {
		t.Fatalf("Wants = %+v (%s)", w, w)
	}
	for text, want := range map[string]bool{
		"The module was awarded certificate #4816.":          true,
		"It holds CAVP certificate A6650.":                   true,
		"The certificate number is 4816.":                    true,
		"The module is awaiting its CMVP certificate.":       false,
		"Version 1.0.0 of the module is in the certificate.": false,
	} {
		if got := w.StatedIn(text); got != want {
			t.Errorf("StatedIn(%q) = %v, want %v", text, got, want)
		}
	}
	// The body that issues the number is part of what is asked.
	w = Wants("What CMVP certificate number was the Go Cryptographic Module awarded?")
	if w.Issuer != "cmvp" {
		t.Fatalf("Wants = %+v", w)
	}
	for text, want := range map[string]bool{
		"It holds CMVP certificate #4816.":                                   true,
		"It was awarded (CAVP) certificate A6650 and submitted to the CMVP.": false,
	} {
		if got := w.StatedIn(text); got != want {
			t.Errorf("StatedIn(%q) = %v, want %v", text, got, want)
		}
	}
	p := Wants("What port does an IMAP server listen on for TLS?")
	if !p.StatedIn("an IMAP4rev1 server listens on port 143.") || p.StatedIn("The server listens on a port.") {
		t.Errorf("port: %+v", p)
	}
}

func TestWantCount(t *testing.T) {
	w := Wants("What is the maximum number of fields a CSV record may have?")
	if w.Value != ValueCount || w.Noun != "fields" {
		t.Fatalf("Wants = %+v", w)
	}
	for text, want := range map[string]bool{
		"Each line should contain the same number of fields throughout the file.": false,
		"A record may have at most 64 fields.":                                    true,
		"There is no limit on fields.":                                            true,
		"Fields are separated by commas. The file has 3 lines.":                   false,
	} {
		if got := w.StatedIn(text); got != want {
			t.Errorf("StatedIn(%q) = %v, want %v", text, got, want)
		}
	}
	d := Wants("What is the maximum number of days a parcel to Asia is in transit?")
	if !d.StatedIn("zone: Z6 | region: Asia and Oceania | transit_days: 9") {
		t.Errorf("a table cell: %+v", d)
	}
}
