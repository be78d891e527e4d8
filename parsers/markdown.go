package parsers

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"

	"github.com/stratakb/stratakb/schema"
)

// maxFrontMatter bounds the front matter handed to the YAML decoder. Real
// front matter is a few hundred bytes; the bound (with yaml.v2's own limit on
// alias expansion) keeps a hostile block from costing much time or memory.
const maxFrontMatter = 64 << 10

var utf8BOM = []byte("\xef\xbb\xbf")

// captureFormats make adrg/frontmatter find the YAML block and hand its raw
// bytes back undecoded; decodeFrontMatter decodes them with guards.
var captureFormats = []*frontmatter.Format{
	frontmatter.NewFormat("---", "---", captureRaw),
	frontmatter.NewFormat("---yaml", "---", captureRaw),
}

func captureRaw(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte{}, data...)
	return nil
}

// parseMarkdown keeps the whole file as Text, so cited line numbers are the
// file's own, and reads the YAML front matter for the title, the date,
// supersedes and Meta. Malformed front matter never loses the file: the
// whole file becomes the body and a warning says why.
func parseMarkdown(data []byte, modTime time.Time) (*schema.ParsedDoc, error) {
	if len(data) == 0 {
		return emptyDoc(schema.FormatMarkdown, modTime), nil
	}
	if err := checkText(data); err != nil {
		return nil, err
	}
	doc := &schema.ParsedDoc{Text: string(data), Format: schema.FormatMarkdown, Meta: map[string]string{}}

	fm, bodyStart, warn := splitFrontMatter(data)
	if warn != "" {
		doc.Warnings = append(doc.Warnings, warn)
	}
	if fm != nil {
		if m, err := decodeFrontMatter(fm); err != nil {
			doc.Warnings = append(doc.Warnings, "front matter ignored, the whole file is indexed as body: "+err.Error())
		} else {
			doc.BodyStart = bodyStart
			applyFrontMatter(doc, m)
		}
	}
	if doc.Title == "" {
		doc.Title = markdownTitle(doc.Text[doc.BodyStart:])
	}
	if doc.Date == "" {
		doc.Date, doc.DateSource = fileDate(modTime)
	}
	return doc, nil
}

// splitFrontMatter finds a YAML front matter block with adrg/frontmatter. It
// returns the block's raw YAML (nil when there is none) and where the body
// starts, or a warning for a block that is opened but never closed.
func splitFrontMatter(data []byte) (fm []byte, bodyStart int, warning string) {
	off := 0
	if bytes.HasPrefix(data, utf8BOM) {
		off = len(utf8BOM)
	}
	var raw []byte
	rest, err := frontmatter.Parse(bytes.NewReader(data[off:]), &raw, captureFormats...)
	if err != nil {
		return nil, 0, "front matter unreadable, the whole file is indexed as body: " + err.Error()
	}
	if raw == nil {
		if first := firstNonBlankLine(data[off:]); first == "---" || first == "---yaml" {
			return nil, 0, "front matter opened with " + first + " is never closed; the whole file is indexed as body"
		}
		return nil, 0, ""
	}
	return raw, len(data) - len(rest), ""
}

func firstNonBlankLine(data []byte) string {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if s := strings.TrimSpace(string(line)); s != "" {
			return s
		}
	}
	return ""
}

// decodeFrontMatter decodes a YAML mapping, refusing oversized blocks,
// non-mappings, and documents yaml.v2 rejects (it stops excessive alias
// expansion, the "billion laughs" attack). A decoder panic becomes an error.
func decodeFrontMatter(raw []byte) (m map[any]any, err error) {
	if len(raw) > maxFrontMatter {
		return nil, fmt.Errorf("front matter is %d bytes, over the %d-byte limit", len(raw), maxFrontMatter)
	}
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("yaml decoder failed: %v", r)
		}
	}()
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	switch x := v.(type) {
	case nil:
		return map[any]any{}, nil
	case map[any]any:
		return x, nil
	default:
		return nil, errors.New("front matter is not a mapping of keys to values")
	}
}

// applyFrontMatter reads title, updated/date, supersedes and scalar keys.
func applyFrontMatter(doc *schema.ParsedDoc, m map[any]any) {
	keys := make([]string, 0, len(m))
	vals := make(map[string]any, len(m))
	for k, v := range m {
		ks := fmt.Sprint(k)
		keys = append(keys, ks)
		vals[ks] = v
	}
	sort.Strings(keys)
	lookup := func(name string) (any, bool) {
		for _, k := range keys {
			if strings.EqualFold(k, name) {
				return vals[k], true
			}
		}
		return nil, false
	}
	for _, k := range keys {
		if s, ok := scalarString(vals[k]); ok {
			doc.Meta[k] = s
		}
	}
	if v, ok := lookup("title"); ok {
		if s, ok := scalarString(v); ok {
			doc.Title = strings.TrimSpace(s)
		}
	}
	for _, key := range []string{"updated", "date"} {
		v, ok := lookup(key)
		if !ok || v == nil {
			continue
		}
		if d, ok := dateValue(v); ok {
			doc.Date, doc.DateSource = d, schema.DateSourceFrontMatter
			break
		}
		s, _ := scalarString(v)
		doc.Warnings = append(doc.Warnings, fmt.Sprintf("front matter %s: %s is not a date", key, quoteShort(s)))
	}
	if v, ok := lookup("supersedes"); ok {
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		default:
			items = []any{x}
		}
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				doc.Warnings = append(doc.Warnings, fmt.Sprintf("front matter supersedes: %v is not a path", it))
				continue
			}
			p, err := cleanRelPath(s)
			if err != nil {
				doc.Warnings = append(doc.Warnings, "front matter supersedes: "+err.Error())
				continue
			}
			doc.Supersedes = append(doc.Supersedes, p)
		}
	}
}

// cleanRelPath cleans a path relative to the layer root and rejects absolute
// paths and paths that climb out of the root.
func cleanRelPath(s string) (string, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, `\`, "/"))
	if s == "" {
		return "", errors.New("empty path")
	}
	if path.IsAbs(s) || (len(s) >= 2 && s[1] == ':') {
		return "", fmt.Errorf("%s is absolute; give a path relative to the layer root", quoteShort(s))
	}
	p := path.Clean(s)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%s leaves the layer root", quoteShort(s))
	}
	return p, nil
}

// scalarString formats a scalar YAML value; lists, mappings and nulls are
// not scalars.
func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case time.Time:
		return x.Format(time.RFC3339), true
	}
	return "", false
}

// markdownTitle returns the text of the first level-1 heading (ATX "# T" or
// setext "T\n==="), ignoring fenced code blocks.
func markdownTitle(body string) string {
	lines := strings.Split(body, "\n")
	fence := ""
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r")
		trim := strings.TrimLeft(line, " ")
		if len(line)-len(trim) > 3 {
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~") {
			fence = trim[:3]
			continue
		}
		if strings.HasPrefix(trim, "# ") || trim == "#" {
			t := strings.TrimSpace(strings.TrimPrefix(trim, "#"))
			t = strings.TrimSpace(strings.TrimRight(t, "#"))
			if t != "" {
				return t
			}
		}
		if i+1 < len(lines) && strings.TrimSpace(trim) != "" {
			next := strings.TrimSpace(lines[i+1])
			if len(next) >= 3 && strings.Count(next, "=") == len(next) {
				return strings.TrimSpace(trim)
			}
		}
	}
	return ""
}
