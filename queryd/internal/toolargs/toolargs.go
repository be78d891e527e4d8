// Package toolargs writes a tool's arguments once: as a Go struct whose
// json tags give the names (a field without omitempty is required), and an
// Args method giving each argument's description and limits from the Go
// constants. From that one definition it derives the JSON schema that MCP
// clients and the OpenAPI document show (Schema), and the decoder that
// every transport runs (Decode), which refuses exactly what the schema
// declares, naming the argument, before the struct's own Validate.
//
// It knows the kinds tools need today: strings, booleans, whole numbers,
// arrays of strings and objects of string values. Another kind is one more
// case in kindOf, Decode and the tests.
package toolargs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

// Arg is what a struct tag cannot say about one argument: its description,
// default and limits. Zero values mean no limit.
type Arg struct {
	Description string
	// Default is shown in the schema; the struct's Validate applies it.
	Default any
	// Min and Max bound a whole number (see Limit).
	Min, Max *int
	// MinLength and MaxLength bound a string, in characters.
	MinLength, MaxLength int
	// Enum lists a string's allowed values.
	Enum []string
	// MaxItems bounds an array; MaxProperties an object.
	MaxItems, MaxProperties int
	// Items are the limits of an array's entries, Values those of an
	// object's values.
	Items, Values *Arg
	// Expect completes "must be …" when the value has the wrong JSON type,
	// as in "an array of layer names (strings)". Empty says it in the
	// type's own words ("a string", "true or false").
	Expect string
}

// Limit returns a pointer to n, for Arg.Min and Arg.Max.
func Limit(n int) *int { return &n }

// Args maps each argument's JSON name to its Arg.
type Args map[string]Arg

// Described is a tool's argument struct.
type Described interface {
	Args() Args
}

// kind is the shape of one argument, from its Go type.
type kind int

const (
	kindString kind = iota + 1
	kindBool
	kindInt
	kindStrings   // []string
	kindStringMap // map[string]string
)

func kindOf(t reflect.Type) (kind, bool) {
	switch {
	case t.Kind() == reflect.String:
		return kindString, true
	case t.Kind() == reflect.Bool, t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Bool:
		// A *bool tells "not given" from false, for a default of true.
		return kindBool, true
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return kindInt, true
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return kindStrings, true
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String:
		return kindStringMap, true
	}
	return 0, false
}

// field is one argument of a struct.
type field struct {
	name     string
	index    int
	kind     kind
	required bool
	arg      Arg
}

// fields lists T's arguments in declaration order, and checks that the
// struct and its Args agree: every exported field has a JSON name, a kind
// Decode handles and an Arg with a description; every Arg names a field;
// limits suit the kind.
func fields[T Described]() ([]field, error) {
	t := reflect.TypeFor[T]()
	if c, ok := cache.Load(t); ok {
		c := c.(cached)
		return c.fields, c.err
	}
	fs, err := readFields[T](t)
	cache.Store(t, cached{fs, err})
	return fs, err
}

// cache holds each argument struct's fields: Decode runs on every call.
var cache sync.Map // reflect.Type → cached

type cached struct {
	fields []field
	err    error
}

func readFields[T Described](t reflect.Type) ([]field, error) {
	var zero T
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("toolargs: %s is not a struct", t)
	}
	specs := zero.Args()
	var out []field
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("toolargs: %s.%s has no json name", t, sf.Name)
		}
		k, ok := kindOf(sf.Type)
		if !ok {
			return nil, fmt.Errorf("toolargs: %s.%s: type %s is not one Decode handles", t, sf.Name, sf.Type)
		}
		a, ok := specs[name]
		if !ok || a.Description == "" {
			return nil, fmt.Errorf("toolargs: %s.Args() does not describe %q", t, name)
		}
		if err := checkArg(name, k, a); err != nil {
			return nil, fmt.Errorf("toolargs: %s: %w", t, err)
		}
		seen[name] = true
		optional := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out = append(out, field{name: name, index: i, kind: k, required: !optional, arg: a})
	}
	for name := range specs {
		if !seen[name] {
			return nil, fmt.Errorf("toolargs: %s.Args() describes %q, which is no field", t, name)
		}
	}
	return out, nil
}

// checkArg refuses limits that do not apply to the kind: they would be
// published but never enforced.
func checkArg(name string, k kind, a Arg) error {
	bad := func(what string) error { return fmt.Errorf("argument %s: %s does not apply to its type", name, what) }
	if k != kindInt && (a.Min != nil || a.Max != nil) {
		return bad("Min/Max")
	}
	if k != kindString && (a.MinLength != 0 || a.MaxLength != 0 || a.Enum != nil) {
		return bad("MinLength/MaxLength/Enum")
	}
	if k != kindStrings && (a.MaxItems != 0 || a.Items != nil) {
		return bad("MaxItems/Items")
	}
	if k != kindStringMap && (a.MaxProperties != 0 || a.Values != nil) {
		return bad("MaxProperties/Values")
	}
	for _, sub := range []*Arg{a.Items, a.Values} {
		if sub != nil && (sub.Min != nil || sub.Max != nil || sub.MaxItems != 0 || sub.MaxProperties != 0 || sub.Items != nil || sub.Values != nil) {
			return fmt.Errorf("argument %s: entries and values are strings: only MinLength, MaxLength, Enum and Expect apply", name)
		}
	}
	return nil
}

// Schema returns T's JSON schema: types, required names and property
// order derived from the struct by jsonschema-go, then descriptions,
// defaults and limits from T's Args. Unknown properties are refused
// (additionalProperties false).
func Schema[T Described]() (*jsonschema.Schema, error) {
	fs, err := fields[T]()
	if err != nil {
		return nil, err
	}
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("toolargs: schema of %s: %w", reflect.TypeFor[T](), err)
	}
	for _, f := range fs {
		p := s.Properties[f.name]
		if p == nil {
			return nil, fmt.Errorf("toolargs: jsonschema-go left out %q", f.name)
		}
		// A nil slice marshals as null: jsonschema-go says "null or
		// array". Decode takes null as left out for every argument, which
		// the tool descriptions say; the schema keeps one type.
		if len(p.Types) > 0 {
			p.Types = slices.DeleteFunc(p.Types, func(t string) bool { return t == "null" })
			if len(p.Types) == 1 {
				p.Type, p.Types = p.Types[0], nil
			}
		}
		if err := apply(p, f.arg); err != nil {
			return nil, fmt.Errorf("toolargs: argument %s: %w", f.name, err)
		}
		if f.arg.Items != nil {
			if err := apply(p.Items, *f.arg.Items); err != nil {
				return nil, fmt.Errorf("toolargs: argument %s: %w", f.name, err)
			}
		}
		if f.arg.Values != nil {
			if err := apply(p.AdditionalProperties, *f.arg.Values); err != nil {
				return nil, fmt.Errorf("toolargs: argument %s: %w", f.name, err)
			}
		}
	}
	return s, nil
}

// apply writes an Arg's description, default and limits into a schema.
func apply(p *jsonschema.Schema, a Arg) error {
	p.Description = a.Description
	if a.Default != nil {
		b, err := json.Marshal(a.Default)
		if err != nil {
			return fmt.Errorf("default: %w", err)
		}
		p.Default = b
	}
	if a.Min != nil {
		p.Minimum = jsonschema.Ptr(float64(*a.Min))
	}
	if a.Max != nil {
		p.Maximum = jsonschema.Ptr(float64(*a.Max))
	}
	if a.MinLength != 0 {
		p.MinLength = jsonschema.Ptr(a.MinLength)
	}
	if a.MaxLength != 0 {
		p.MaxLength = jsonschema.Ptr(a.MaxLength)
	}
	for _, e := range a.Enum {
		p.Enum = append(p.Enum, e)
	}
	if a.MaxItems != 0 {
		p.MaxItems = jsonschema.Ptr(a.MaxItems)
	}
	if a.MaxProperties != 0 {
		p.MaxProperties = jsonschema.Ptr(a.MaxProperties)
	}
	return nil
}

// Decode turns a tool call's arguments (a JSON object, or nothing or null
// for none) into T. Each argument's JSON type and declared limits are
// checked in the struct's order, and an argument given as null counts as
// left out; then T's Validate runs, when *T has one. A mistake is a
// qerr.Invalid error naming the argument. On error, the T returned holds
// what was decoded so far (the request log shows its query).
func Decode[T Described](raw json.RawMessage) (T, error) {
	var v T
	fs, err := fields[T]()
	if err != nil {
		return v, err
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	args, err := objectArgs(raw, names)
	if err != nil {
		return v, err
	}
	rv := reflect.ValueOf(&v).Elem()
	for _, f := range fs {
		val, ok := args[f.name]
		if !ok {
			if f.required {
				return v, qerr.Invalidf(f.name, "is required")
			}
			continue
		}
		if err := decodeField(rv.Field(f.index), f, val); err != nil {
			return v, err
		}
	}
	if vd, ok := any(&v).(interface{ Validate() error }); ok {
		if err := vd.Validate(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// objectArgs splits a JSON object of arguments, refusing names the tool
// does not take. Arguments given as null count as left out.
func objectArgs(raw json.RawMessage, known []string) (map[string]json.RawMessage, error) {
	args := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, qerr.Invalidf("arguments", "must be a JSON object")
	}
	if err := CheckUTF8(raw); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if string(bytes.TrimSpace(args[k])) == "null" {
			delete(args, k)
			continue
		}
		if !slices.Contains(known, k) {
			return nil, qerr.Invalidf(k, "is not an argument of this tool (it takes %s)", strings.Join(known, ", "))
		}
	}
	return args, nil
}

func decodeField(dst reflect.Value, f field, raw json.RawMessage) error {
	a := f.arg
	switch f.kind {
	case kindString:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return qerr.Invalidf(f.name, "must be %s", expect(a, "a string"))
		}
		dst.SetString(s)
		return checkString(f.name, "", a, s)
	case kindBool:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return qerr.Invalidf(f.name, "must be %s", expect(a, "true or false"))
		}
		if dst.Kind() == reflect.Pointer {
			dst.Set(reflect.ValueOf(&b))
			break
		}
		dst.SetBool(b)
	case kindInt:
		return decodeInt(dst, f.name, a, raw)
	case kindStrings:
		var ss []string
		if err := json.Unmarshal(raw, &ss); err != nil {
			return qerr.Invalidf(f.name, "must be %s", expect(a, "an array of strings"))
		}
		dst.Set(reflect.ValueOf(ss).Convert(dst.Type()))
		if a.MaxItems != 0 && len(ss) > a.MaxItems {
			return qerr.Invalidf(f.name, "has %d entries, at most %d are allowed", len(ss), a.MaxItems)
		}
		if a.Items != nil {
			for i, s := range ss {
				if err := checkString(f.name, fmt.Sprintf("entry %d ", i), *a.Items, s); err != nil {
					return err
				}
			}
		}
	case kindStringMap:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return qerr.Invalidf(f.name, "must be %s", expect(a, "an object of string values"))
		}
		if a.MaxProperties != 0 && len(m) > a.MaxProperties {
			return qerr.Invalidf(f.name, "has %d keys, at most %d are allowed", len(m), a.MaxProperties)
		}
		out := reflect.MakeMapWithSize(dst.Type(), len(m))
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var values Arg
		if a.Values != nil {
			values = *a.Values
		}
		for _, k := range keys {
			var s string
			if err := json.Unmarshal(m[k], &s); err != nil {
				return qerr.Invalidf(f.name, "the value of %q must be %s", k, expect(values, "a string"))
			}
			if err := checkString(f.name, fmt.Sprintf("the value of %q ", k), values, s); err != nil {
				return err
			}
			out.SetMapIndex(reflect.ValueOf(k).Convert(dst.Type().Key()), reflect.ValueOf(s).Convert(dst.Type().Elem()))
		}
		dst.Set(out)
	}
	return nil
}

// decodeInt reads a whole number: 5, and 5.0 or 5e0, which JSON schema
// counts as integers too. A string such as "5" is refused, as the schema's
// type says.
func decodeInt(dst reflect.Value, name string, a Arg, raw json.RawMessage) error {
	what := expect(a, "a whole number")
	if a.Expect == "" && a.Min != nil && a.Max != nil {
		what = fmt.Sprintf("a whole number from %d to %d", *a.Min, *a.Max)
	}
	raw = bytes.TrimSpace(raw)
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if len(raw) == 0 || raw[0] == '"' || d.Decode(&n) != nil {
		return qerr.Invalidf(name, "must be %s", what)
	}
	k, err := n.Int64()
	if err != nil {
		// JSON schema counts 5.0 and 5e0 as integers; so does Decode.
		// Whole numbers beyond int64 are refused, which no schema says.
		f, ferr := strconv.ParseFloat(n.String(), 64)
		if ferr != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return qerr.Invalidf(name, "must be %s, got %s", what, n)
		}
		k = int64(f)
	}
	if dst.OverflowInt(k) {
		return qerr.Invalidf(name, "must be %s, got %s", what, n)
	}
	switch {
	case a.Min != nil && a.Max != nil && (k < int64(*a.Min) || k > int64(*a.Max)):
		return qerr.Invalidf(name, "must be from %d to %d, got %d", *a.Min, *a.Max, k)
	case a.Min != nil && k < int64(*a.Min):
		return qerr.Invalidf(name, "must be at least %d, got %d", *a.Min, k)
	case a.Max != nil && k > int64(*a.Max):
		return qerr.Invalidf(name, "must be at most %d, got %d", *a.Max, k)
	}
	dst.SetInt(k)
	return nil
}

// checkString applies a string's declared limits; what names the place
// ("entry 2 ") or is empty for the argument itself. Lengths count
// characters, as JSON schema's do.
func checkString(name, what string, a Arg, s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case a.MinLength == 1 && n == 0:
		if what == "" {
			return qerr.Invalidf(name, "must not be empty")
		}
		return qerr.Invalidf(name, "%sis empty", what)
	case a.MinLength > 1 && n < a.MinLength:
		return qerr.Invalidf(name, "%sis shorter than %d characters", what, a.MinLength)
	case a.MaxLength != 0 && n > a.MaxLength:
		return qerr.Invalidf(name, "%sis longer than %d characters", what, a.MaxLength)
	case a.Enum != nil && !slices.Contains(a.Enum, s):
		return qerr.Invalidf(name, "%smust be one of %s, got %q", what, strings.Join(a.Enum, ", "), clip(s))
	}
	return nil
}

func expect(a Arg, def string) string {
	if a.Expect != "" {
		return a.Expect
	}
	return def
}

// clip shortens a value repeated in an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// CheckUTF8 refuses arguments whose strings are not valid UTF-8: raw bytes
// that are not UTF-8, or an escaped lone surrogate ("\ud800"). It reads the
// raw bytes, because encoding/json turns both into U+FFFD without a word,
// and a question, draft or rating would be served and stored altered. The
// error names the argument that holds them ("arguments" when raw is not an
// object).
func CheckUTF8(raw json.RawMessage) error {
	if badUTF8(raw) == "" {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) == nil {
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if why := badUTF8(args[k]); why != "" {
				if !utf8.ValidString(k) {
					k = "arguments"
				}
				return qerr.Invalidf(k, "%s; send text as UTF-8", why)
			}
		}
	}
	return qerr.Invalidf("arguments", "%s; send text as UTF-8", badUTF8(raw))
}

// badUTF8 says what is wrong with the text of a JSON value, or "" when
// nothing is. Outside strings JSON is ASCII, and a backslash occurs only
// inside a string, so the value need not be parsed.
func badUTF8(b []byte) string {
	if !utf8.Valid(b) {
		return "holds bytes that are not valid UTF-8"
	}
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 32)
		return rune(n), err == nil
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // an escaped character: skip it
			continue
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if lo, ok := hex4(i + 6); ok && lo >= 0xdc00 && lo < 0xe000 {
				i += 11
				continue
			}
			return "holds a lone surrogate escape (\\u" + string(b[i+2:i+6]) + "), which is not UTF-8"
		case r >= 0xdc00 && r < 0xe000:
			return "holds a lone surrogate escape (\\u" + string(b[i+2:i+6]) + "), which is not UTF-8"
		}
		i += 5
	}
	return ""
}
