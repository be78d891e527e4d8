package parsers

import (
	"bytes"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stratakb/stratakb/schema"
)

// checkText rejects bytes that are not a text file: a NUL byte (binary
// content) or invalid UTF-8. The message names the first offending byte.
func checkText(data []byte) error {
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return permanentf("UTF-16 text (byte order mark at the start); convert the file to UTF-8")
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return permanentf("binary content: NUL byte at offset %d (line %d); not a text file", i, bytes.Count(data[:i], []byte("\n"))+1)
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return permanentf("invalid UTF-8 at offset %d (line %d); convert the file to UTF-8", i, bytes.Count(data[:i], []byte("\n"))+1)
	}
	return nil
}

// emptyDoc is what a zero-byte text file becomes: an empty document with a
// warning, so that the file is known but contributes nothing.
func emptyDoc(format string, modTime time.Time) *schema.ParsedDoc {
	d := &schema.ParsedDoc{Format: format, Meta: map[string]string{}, Warnings: []string{"empty file: nothing to index"}}
	d.Date, d.DateSource = fileDate(modTime)
	return d
}

// parseText stores a .txt or .rst file as is. For reStructuredText, a
// PEP-style RFC 822 header at the top ("PEP: 8", "Title: …", "Created:
// 05-Jul-2001") gives the title, the date and Meta, and the body starts after
// it; otherwise an underlined title gives the title.
func parseText(data []byte, modTime time.Time, rst bool) (*schema.ParsedDoc, error) {
	if len(data) == 0 {
		return emptyDoc(schema.FormatText, modTime), nil
	}
	if err := checkText(data); err != nil {
		return nil, err
	}
	text := string(data)
	doc := &schema.ParsedDoc{Text: text, Format: schema.FormatText, Meta: map[string]string{}}
	if rst {
		if fields, end, ok := rfc822Header(text); ok {
			doc.BodyStart = end
			for _, f := range fields {
				doc.Meta[f[0]] = f[1]
			}
			doc.Title = headerValue(fields, "title")
			if c := headerValue(fields, "created"); c != "" {
				if d, ok := parseDate(c); ok {
					doc.Date, doc.DateSource = d, schema.DateSourceFrontMatter
				} else {
					doc.Warnings = append(doc.Warnings, "header Created: "+quoteShort(c)+" is not a date; using the file's modification time")
				}
			}
		}
		if doc.Title == "" {
			doc.Title = rstTitle(text[doc.BodyStart:])
		}
	}
	if doc.Title == "" {
		doc.Title = rfcTitle(text)
	}
	if doc.Date == "" {
		doc.Date, doc.DateSource = fileDate(modTime)
	}
	return doc, nil
}

var headerLine = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*):[ \t]*(.*)$`)

// rfc822Header reads "Key: value" lines (with indented continuation lines)
// from the top of text up to the first blank line. It needs at least two
// fields, so a first line like "Note: …" is not mistaken for a header.
func rfc822Header(text string) (fields [][2]string, end int, ok bool) {
	off := 0
	for off < len(text) {
		nl := strings.IndexByte(text[off:], '\n')
		lineEnd := len(text)
		next := len(text)
		if nl >= 0 {
			lineEnd = off + nl
			next = lineEnd + 1
		}
		line := strings.TrimRight(text[off:lineEnd], "\r")
		switch {
		case strings.TrimSpace(line) == "":
			return fields, next, len(fields) >= 2
		case (line[0] == ' ' || line[0] == '\t') && len(fields) > 0:
			fields[len(fields)-1][1] += " " + strings.TrimSpace(line)
		default:
			m := headerLine.FindStringSubmatch(line)
			if m == nil {
				return nil, 0, false
			}
			fields = append(fields, [2]string{m[1], strings.TrimSpace(m[2])})
		}
		off = next
	}
	return fields, len(text), len(fields) >= 2
}

func headerValue(fields [][2]string, key string) string {
	for _, f := range fields {
		if strings.EqualFold(f[0], key) {
			return f[1]
		}
	}
	return ""
}

// rstTitle returns the first reStructuredText section title: a line
// underlined (and optionally overlined) by a run of one punctuation character
// at least as long as the title. It looks at the first 100 lines only.
func rstTitle(body string) string {
	lines := strings.SplitN(body, "\n", 101)
	for i := 0; i+1 < len(lines) && i < 100; i++ {
		title := strings.TrimSpace(strings.TrimRight(lines[i], "\r"))
		under := strings.TrimRight(lines[i+1], "\r \t")
		if title == "" || len(under) < 3 || utf8.RuneCountInString(under) < utf8.RuneCountInString(title) {
			continue
		}
		if isAdornment(title) {
			continue
		}
		if isAdornment(under) {
			return title
		}
	}
	return ""
}

func isAdornment(s string) bool {
	if s == "" || !strings.ContainsRune("=-~*^#+`'\":._", rune(s[0])) {
		return false
	}
	return strings.Count(s, s[:1]) == len(s)
}

// quoteShort quotes s for a warning, cut to 60 bytes.
func quoteShort(s string) string {
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return `"` + s + `"`
}

var rfcNumberLine = regexp.MustCompile(`(?m)^Request for Comments:[ \t]*[0-9]+`)

// rfcTitle returns the title of an IETF RFC in its original plain text: the
// indented line or lines after the front page's header block (the one
// holding "Request for Comments: N"), before "Status of this Memo" or
// "Abstract". "" for any other text.
func rfcTitle(text string) string {
	head := text[:min(len(text), 4000)]
	loc := rfcNumberLine.FindStringIndex(head)
	if loc == nil {
		return ""
	}
	lines := strings.Split(head[loc[0]:], "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
		i++ // the header block's two columns
	}
	var title []string
	for ; i < len(lines) && len(title) < 3; i++ {
		line := strings.TrimRight(lines[i], "\r \t")
		t := strings.TrimSpace(line)
		switch {
		case t == "" && len(title) > 0:
			return strings.Join(title, " ")
		case t == "":
			continue
		case line == t || strings.Contains(t, "   "):
			// Flush left ("Status of this Memo", "Abstract") or two
			// columns: not a title.
			return strings.Join(title, " ")
		}
		title = append(title, t)
	}
	return strings.Join(title, " ")
}
