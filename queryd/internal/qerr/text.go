package qerr

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxEcho bounds how much of an argument an error message repeats.
const maxEcho = 80

// Clip shortens s for an error message.
func Clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// CheckText refuses a string PostgreSQL cannot take as text: bytes that are
// not UTF-8, or a NUL byte (PostgreSQL text cannot hold one: SQLSTATE
// 22021). what names the place, as in "entry 2".
func CheckText(arg, what, s string) error {
	if what != "" {
		what += " "
	}
	if !utf8.ValidString(s) {
		return Invalidf(arg, "%sis not valid UTF-8", what)
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return Invalidf(arg, "%sholds a NUL character (\\u0000) at byte %d; remove it", what, i)
	}
	return nil
}
