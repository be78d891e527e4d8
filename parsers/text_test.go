package parsers

import "testing"

func TestRFCTitle(t *testing.T) {
	cases := map[string]string{
		"Network Working Group                                    Y. Shafranovich\nRequest for Comments: 4180                SolidMatrix Technologies, Inc.\nCategory: Informational                                     October 2005\n\n\n   Common Format and MIME Type for Comma-Separated Values (CSV) Files\n\nStatus of This Memo\n": "Common Format and MIME Type for Comma-Separated Values (CSV) Files",
		"Network Working Group   J. Klensin\nRequest for Comments: 5321   October 2008\nObsoletes: 2821\n\n\n                     Simple Mail Transfer Protocol\n\nStatus of This Memo\n":                                                                                                                                                  "Simple Mail Transfer Protocol",
		"IETF   D. Eastlake\nRequest for Comments: 6066   Huawei\n\n    Transport Layer Security (TLS) Extensions:\n          Extension Definitions\n\nAbstract\n":                                                                                                                                                                         "Transport Layer Security (TLS) Extensions: Extension Definitions",
		"Meeting notes\n\n   Request for Comments: none\n": "",
		"Request for Comments: 1\n\nAbstract\n":            "",
	}
	for text, want := range cases {
		if got := rfcTitle(text); got != want {
			t.Errorf("rfcTitle(%.40q) = %q, want %q", text, got, want)
		}
	}
}
