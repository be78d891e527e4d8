package answers

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/stratakb/stratakb/structure"
)

// Set is the question set with what the checks need: the layers, their
// files and the parsed documents.
type Set struct {
	Layers    map[string]Layer
	Questions []Question
	evalDir   string
	corpora   string
	docs      *Docs
	files     map[string]map[string]bool // layer → its files
	windows   map[string]*layerIndex     // layer → stem positions
}

// NewSet prepares the checks of questions over layers; evalDir is this
// folder, corporaDir the shared corpora folder.
func NewSet(layers []Layer, qs []Question, evalDir, corporaDir string) (*Set, error) {
	s := &Set{Layers: map[string]Layer{}, Questions: qs, evalDir: evalDir, corpora: corporaDir, docs: NewDocs(),
		files: map[string]map[string]bool{}, windows: map[string]*layerIndex{}}
	for _, l := range layers {
		if _, dup := s.Layers[l.Name]; dup {
			return nil, fmt.Errorf("layer %s is defined twice", l.Name)
		}
		s.Layers[l.Name] = l
		fs, err := l.Files(evalDir, corporaDir)
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("layer %s has no files", l.Name)
		}
		s.files[l.Name] = map[string]bool{}
		for _, f := range fs {
			s.files[l.Name][f] = true
		}
		if literal(l.Include) && len(fs) != len(l.Include) {
			return nil, fmt.Errorf("layer %s: %d include entries but %d files found", l.Name, len(l.Include), len(fs))
		}
	}
	return s, nil
}

// Doc is the parsed file of a layer.
func (s *Set) Doc(layer, file string) (*Doc, error) {
	l := s.Layers[layer]
	return s.docs.Get(l.RootDir(s.evalDir, s.corpora) + "/" + file)
}

// CheckEntry returns what is wrong with one question, nil when nothing is.
func (s *Set) CheckEntry(q Question) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{q.ID}, a...)...))
	}
	if q.ID == "" {
		bad("no id")
	}
	if !slices.Contains(Kinds, q.Kind) {
		bad("unknown kind %q", q.Kind)
	}
	if q.Split != "train" && q.Split != "test" {
		bad("split %q is neither train nor test", q.Split)
	}
	if strings.TrimSpace(q.Question) == "" {
		bad("no question text")
	}
	l, ok := s.Layers[q.Layer]
	if !ok {
		bad("unknown layer %q", q.Layer)
		return errs
	}
	if (q.SectionRef != "" || q.Doc != "") && q.Kind != KindMissingSection {
		bad("section_ref and doc belong to missing_section questions only")
	}
	if q.Unanswerable() {
		if len(q.Gold) > 0 {
			bad("an unanswerable question has gold passages")
		}
		switch q.Kind {
		case KindUnanswerable:
			errs = append(errs, s.checkAbsent(q, l)...)
		case KindNearMiss:
			errs = append(errs, s.checkNearMiss(q, l)...)
		case KindMissingSection:
			errs = append(errs, s.checkMissingSection(q, l)...)
		}
		return errs
	}
	if len(q.Gold) == 0 {
		bad("no gold passage")
	}
	for _, g := range q.Gold {
		if !s.files[q.Layer][g.File] {
			bad("gold file %q is not in layer %s", g.File, q.Layer)
			continue
		}
		doc, err := s.Doc(q.Layer, g.File)
		if err != nil {
			bad("%v", err)
			continue
		}
		if strings.TrimSpace(g.Quote) == "" {
			bad("empty quote in %s", g.File)
			continue
		}
		at := strings.Index(doc.Text, g.Quote)
		if at < 0 {
			bad("quote %q is not an exact substring of %s", clip(g.Quote), g.File)
			continue
		}
		if g.Section != "" {
			if got := doc.SectionAt(at, at+len(g.Quote)); got != g.Section {
				bad("section %q, but the structure map puts the quote in %q", g.Section, got)
			}
		}
	}
	if q.Kind == KindParaphrase {
		errs = append(errs, s.checkParaphrase(q)...)
	}
	if q.Kind == KindNamesDoc {
		errs = append(errs, s.checkNamesDoc(q, l)...)
	}
	return errs
}

// literal reports whether an include list names files only (no glob), so
// that each entry must match one file.
func literal(include []string) bool {
	if len(include) == 0 {
		return false
	}
	for _, g := range include {
		if strings.ContainsAny(g, "*?[{") {
			return false
		}
	}
	return true
}

// checkParaphrase: the question's key terms (Terms) must each occur in a
// gold quote, and the question must share no content stem with them.
func (s *Set) checkParaphrase(q Question) []error {
	var errs []error
	if len(q.Terms) < 3 {
		return []error{fmt.Errorf("%s: a paraphrase lists at least 3 key terms of its gold passage, has %d", q.ID, len(q.Terms))}
	}
	quoteStems := map[string]bool{}
	for _, g := range q.Gold {
		for st := range StemSet(g.Quote) {
			quoteStems[st] = true
		}
	}
	qStems := StemSet(q.Question)
	for _, term := range q.Terms {
		for _, st := range ContentStems(term, nil) {
			if !quoteStems[st] {
				errs = append(errs, fmt.Errorf("%s: key term %q is not in the gold passage", q.ID, term))
			}
			if qStems[st] {
				errs = append(errs, fmt.Errorf("%s: the paraphrase shares the stem %q (key term %q) with its gold passage", q.ID, st, term))
			}
		}
	}
	return errs
}

// checkAbsent: an unanswerable question names 2 to 5 key words (Terms); no
// window of the layer's chunk size, in any file of the layer, holds the
// stems of all of them. Each key word must occur in the question (stemmed)
// and must not be one of the layer's generic words.
func (s *Set) checkAbsent(q Question, l Layer) []error {
	generic := map[string]bool{}
	for _, g := range l.Generic {
		generic[Stem(g)] = true
	}
	if len(q.Terms) < 2 || len(q.Terms) > 5 {
		return []error{fmt.Errorf("%s: an unanswerable question lists 2 to 5 key words, has %d", q.ID, len(q.Terms))}
	}
	qStems := StemSet(q.Question)
	var keys []string
	for _, t := range q.Terms {
		st := ContentStems(t, nil)
		if len(st) != 1 {
			return []error{fmt.Errorf("%s: key word %q is not one content word", q.ID, t)}
		}
		if !qStems[st[0]] {
			return []error{fmt.Errorf("%s: key word %q is not in the question", q.ID, t)}
		}
		if generic[st[0]] {
			return []error{fmt.Errorf("%s: key word %q is one of layer %s's generic words", q.ID, t, l.Name)}
		}
		keys = append(keys, st[0])
	}
	idx, err := s.index(l)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", q.ID, err)}
	}
	if file, ok := idx.together(keys, l.ChunkSize()); ok {
		return []error{fmt.Errorf("%s: the key words %v occur together within %d bytes in %s", q.ID, q.Terms, l.ChunkSize(), file)}
	}
	return nil
}

// layerIndex holds, per file of a layer, each stem's byte offsets.
type layerIndex struct {
	files []string
	pos   []map[string][]int
}

func (s *Set) index(l Layer) (*layerIndex, error) {
	if idx, ok := s.windows[l.Name]; ok {
		return idx, nil
	}
	idx := &layerIndex{}
	files := make([]string, 0, len(s.files[l.Name]))
	for f := range s.files[l.Name] {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		doc, err := s.Doc(l.Name, f)
		if err != nil {
			return nil, err
		}
		idx.files = append(idx.files, f)
		idx.pos = append(idx.pos, stemOffsets(doc.Text))
	}
	s.windows[l.Name] = idx
	return idx, nil
}

func stemOffsets(text string) map[string][]int {
	m := map[string][]int{}
	i := 0
	for _, w := range Tokens(text) {
		j := strings.Index(text[i:], w)
		if j < 0 {
			continue
		}
		off := i + j
		i = off + len(w)
		st := Stem(w)
		m[st] = append(m[st], off)
	}
	return m
}

// together reports the first file where every key occurs within one window
// of size bytes.
func (idx *layerIndex) together(keys []string, size int) (string, bool) {
	for fi, pos := range idx.pos {
		lists := make([][]int, len(keys))
		missing := false
		for k, key := range keys {
			if lists[k] = pos[key]; len(lists[k]) == 0 {
				missing = true
				break
			}
		}
		if missing {
			continue
		}
		// Each occurrence of the first key anchors windows [o-size, o] …
		// [o, o+size]; it suffices that each other key has an occurrence
		// within size of o and all of them fit one window: check the span
		// of the nearest occurrences.
		for _, o := range lists[0] {
			lo, hi, ok := o, o, true
			for _, l := range lists[1:] {
				best := -1
				for _, p := range l {
					if abs(p-o) <= size && (best < 0 || abs(p-o) < abs(best-o)) {
						best = p
					}
				}
				if best < 0 {
					ok = false
					break
				}
				lo, hi = min(lo, best), max(hi, best)
			}
			if ok && hi-lo <= size {
				return idx.files[fi], true
			}
		}
	}
	return "", false
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// SplitOf is the split a question gets. Questions are grouped by
// SplitGroup: the original questions (ids "<kind>-NNN") by kind, every
// later one (ids "<layer>-<kind>-NNN") by layer and kind, so that a question
// added later never moves an original one and every layer has each of its
// new kinds in both splits. Within a group, questions ordered by the FNV-1a
// hash of their id (then the id) take test, train, test, … in turn, so
// each group is halved (the odd one goes to test).
func SplitOf(qs []Question) map[string]string {
	groups := map[string][]string{}
	for _, q := range qs {
		g := SplitGroup(q)
		groups[g] = append(groups[g], q.ID)
	}
	out := map[string]string{}
	for _, ids := range groups {
		sort.Slice(ids, func(i, j int) bool {
			hi, hj := hash(ids[i]), hash(ids[j])
			if hi != hj {
				return hi < hj
			}
			return ids[i] < ids[j]
		})
		for i, id := range ids {
			out[id] = []string{"test", "train"}[i%2]
		}
	}
	return out
}

// SplitGroup is the group SplitOf halves a question in: its kind for an
// original question, "layer/kind" for one whose id starts with its layer's
// name (every question added after the first 273).
func SplitGroup(q Question) string {
	if q.Layer != "" && strings.HasPrefix(q.ID, q.Layer+"-") {
		return q.Layer + "/" + q.Kind
	}
	return q.Kind
}

func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// CheckSet returns what is wrong with the set as a whole: repeated ids, too
// few questions or unanswerable ones (the three unanswerable kinds
// together), a kind missing, a group of later questions too small to be
// in both splits, and splits that are not SplitOf's.
func CheckSet(qs []Question, minQuestions int, minUnanswerable float64) []error {
	var errs []error
	seen := map[string]bool{}
	count := map[string]int{}
	groups := map[string]int{}
	unanswerable := 0
	for _, q := range qs {
		if seen[q.ID] {
			errs = append(errs, fmt.Errorf("id %s is repeated", q.ID))
		}
		seen[q.ID] = true
		count[q.Kind]++
		groups[SplitGroup(q)]++
		if q.Unanswerable() {
			unanswerable++
		}
	}
	if len(qs) < minQuestions {
		errs = append(errs, fmt.Errorf("%d questions, at least %d wanted", len(qs), minQuestions))
	}
	if share := float64(unanswerable) / float64(max(1, len(qs))); share < minUnanswerable {
		errs = append(errs, fmt.Errorf("%.1f %% of the questions are unanswerable, at least %.0f %% wanted", 100*share, 100*minUnanswerable))
	}
	for _, k := range Kinds {
		if count[k] < 2 {
			errs = append(errs, fmt.Errorf("kind %s has %d questions: each kind needs some in both splits", k, count[k]))
		}
	}
	gs := make([]string, 0, len(groups))
	for g := range groups {
		gs = append(gs, g)
	}
	sort.Strings(gs)
	for _, g := range gs {
		if strings.Contains(g, "/") && groups[g] < 2 {
			errs = append(errs, fmt.Errorf("group %s has %d question: each needs some in both splits", g, groups[g]))
		}
	}
	want := SplitOf(qs)
	for _, q := range qs {
		if q.Split != want[q.ID] {
			errs = append(errs, fmt.Errorf("%s: split %q, but the fixed assignment (SplitOf) gives %q", q.ID, q.Split, want[q.ID]))
		}
	}
	return errs
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// checkNearMiss: a near miss says why no document answers it (note), and
// every content word of the question occurs somewhere in the layer
// (stemmed), so no absent word gives it away.
func (s *Set) checkNearMiss(q Question, l Layer) []error {
	var errs []error
	if strings.TrimSpace(q.Note) == "" {
		errs = append(errs, fmt.Errorf("%s: a near_miss needs a note saying why no document answers it", q.ID))
	}
	idx, err := s.index(l)
	if err != nil {
		return append(errs, fmt.Errorf("%s: %w", q.ID, err))
	}
	words := map[string]string{}
	for _, w := range Tokens(q.Question) {
		if st := Stem(w); words[st] == "" {
			words[st] = w
		}
	}
	stems := ContentStems(q.Question, nil)
	if len(stems) == 0 {
		errs = append(errs, fmt.Errorf("%s: the near_miss has no content word", q.ID))
	}
	for _, st := range stems {
		if !idx.has(st) {
			errs = append(errs, fmt.Errorf("%s: the word %q (stem %q) occurs nowhere in layer %s: a near miss must use the layer's words", q.ID, words[st], st, l.Name))
		}
	}
	return errs
}

// has reports whether any file of the layer holds the stem.
func (idx *layerIndex) has(stem string) bool {
	for _, pos := range idx.pos {
		if len(pos[stem]) > 0 {
			return true
		}
	}
	return false
}

// checkMissingSection: the question names SectionRef (one reference, as
// structure.ParseReferences reads it) and Doc, when given, is a file of the
// layer; no section of Doc's structure map (of every file's, when Doc is
// empty) has that number or letter, and no line of the text starts with it
// as a heading or a table of contents would ("8.7  Title", "Appendix F."),
// in case the structure map missed one.
func (s *Set) checkMissingSection(q Question, l Layer) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{q.ID}, a...)...))
	}
	if strings.TrimSpace(q.Note) == "" {
		bad("a missing_section question needs a note")
	}
	if strings.TrimSpace(q.SectionRef) == "" {
		bad("a missing_section question needs section_ref")
		return errs
	}
	if !strings.Contains(strings.ToLower(normalise(q.Question)), strings.ToLower(normalise(q.SectionRef))) {
		bad("section_ref %q is not in the question", q.SectionRef)
	}
	refs := structure.ParseReferences(q.SectionRef)
	if len(refs) != 1 || refs[0].Number == "" {
		bad("section_ref %q is not one section reference (read as %d)", q.SectionRef, len(refs))
		return errs
	}
	num := refs[0].Number
	var files []string
	if q.Doc != "" {
		if !s.files[q.Layer][q.Doc] {
			bad("doc %q is not a file of layer %s", q.Doc, q.Layer)
			return errs
		}
		files = []string{q.Doc}
	} else {
		for f := range s.files[q.Layer] {
			files = append(files, f)
		}
		sort.Strings(files)
	}
	heading := headingRe(num)
	for _, f := range files {
		doc, err := s.Doc(q.Layer, f)
		if err != nil {
			bad("%v", err)
			continue
		}
		for _, sec := range doc.Sections {
			if sec.Number != "" && sameNumber(sec.Number, num) {
				bad("%s has section %s (%s)", f, sec.Number, sec.Path)
				break
			}
		}
		if m := heading.FindString(doc.Text); m != "" {
			bad("%s has a line that starts with %s as a heading would: %q", f, num, strings.TrimSpace(m))
		}
	}
	return errs
}

func sameNumber(a, b string) bool {
	norm := func(s string) string {
		return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), "")), ".")
	}
	return norm(a) == norm(b)
}

// headingRe finds a line that starts with the number as a heading or a
// table of contents entry does: after a keyword ("Appendix F", "Section
// 8.7"), or alone followed by a title ("8.7.  Title", "F.  Title"; a lone
// letter needs its full stop).
func headingRe(num string) *regexp.Regexp {
	n := regexp.QuoteMeta(num)
	bare := n + `\.?[ \t]+\S`
	if len([]rune(num)) == 1 && unicode.IsLetter([]rune(num)[0]) {
		bare = n + `\.[ \t]+\S`
	}
	return regexp.MustCompile(`(?m)^[ \t#*>]*(?:(?i:appendix|annex|section|clause|article|schedule|part)[ \t]+` + n +
		`\.?(?:[ \t:]|$)|` + bare + `)`)
}

// checkNamesDoc: the question names its gold document by number (the digits
// of the file name: "pep-0380.rst" is 380, "rfc4180.txt" 4180) or by title
// (a PEP's Title field, a Markdown file's front-matter title or first
// heading, an RFC's title line; also the title without its bracketed parts
// and the part before a colon or dash), case-insensitively.
func (s *Set) checkNamesDoc(q Question, l Layer) []error {
	if len(q.Gold) == 0 {
		return nil
	}
	file := q.Gold[0].File
	for _, g := range q.Gold[1:] {
		if g.File != file {
			return []error{fmt.Errorf("%s: a names_doc question's gold lies in one document, not %s and %s", q.ID, file, g.File)}
		}
	}
	data, err := os.ReadFile(filepath.Join(l.RootDir(s.evalDir, s.corpora), file))
	if err != nil {
		return []error{fmt.Errorf("%s: %w", q.ID, err)}
	}
	nums, titles := DocNames(file, string(data))
	question := strings.ToLower(normalise(q.Question))
	for _, n := range nums {
		if regexp.MustCompile(`(?:^|[^0-9])0*` + n + `(?:[^0-9]|$)`).MatchString(question) {
			return nil
		}
	}
	for _, t := range titles {
		if strings.Contains(question, t) {
			return nil
		}
	}
	return []error{fmt.Errorf("%s: the question names %s neither by number %v nor by title %q", q.ID, file, nums, titles)}
}

var (
	digitsRe  = regexp.MustCompile(`[0-9]+`)
	tagRe     = regexp.MustCompile(`<[^>]*>`)
	bracketRe = regexp.MustCompile(`\s*\([^)]*\)`)
	titleCut  = regexp.MustCompile(`:\s|\s[-–—]\s`)
)

// DocNames are the numbers (without leading zeros) and titles (lower case,
// whitespace folded, longest first) a question may name a document by.
func DocNames(file, text string) (nums, titles []string) {
	base := filepath.Base(file)
	for _, d := range digitsRe.FindAllString(strings.TrimSuffix(base, filepath.Ext(base)), -1) {
		if d = strings.TrimLeft(d, "0"); d != "" {
			nums = append(nums, d)
		}
	}
	title := docTitle(file, text)
	if title == "" {
		return nums, nil
	}
	add := func(t string, whole bool) {
		t = strings.ToLower(normalise(strings.Trim(t, ` "'`)))
		if t == "" || (!whole && len(strings.Fields(t)) < 2) || slices.Contains(titles, t) {
			return
		}
		titles = append(titles, t)
	}
	add(title, true)
	noBrackets := bracketRe.ReplaceAllString(title, "")
	add(noBrackets, false)
	for _, t := range []string{title, noBrackets} {
		if loc := titleCut.FindStringIndex(t); loc != nil {
			add(t[:loc[0]], false)
		}
	}
	return nums, titles
}

// docTitle is a document's title as its format gives it.
func docTitle(file, text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	switch strings.ToLower(filepath.Ext(file)) {
	case ".rst":
		for i, ln := range lines {
			if ln == "" {
				break
			}
			if t, ok := strings.CutPrefix(ln, "Title:"); ok {
				for _, more := range lines[i+1:] {
					if more == "" || (more[0] != ' ' && more[0] != '\t') {
						break
					}
					t += " " + more
				}
				return strings.TrimSpace(t)
			}
		}
	case ".md", ".markdown":
		if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
			for _, ln := range lines[1:] {
				if strings.TrimSpace(ln) == "---" {
					break
				}
				if t, ok := strings.CutPrefix(ln, "title:"); ok {
					return tagRe.ReplaceAllString(strings.TrimSpace(t), "")
				}
			}
		}
		for _, ln := range lines {
			if t, ok := strings.CutPrefix(ln, "# "); ok {
				return tagRe.ReplaceAllString(strings.TrimSpace(t), "")
			}
		}
	case ".txt":
		// An RFC: the header block (from the first line to the first blank
		// line after "Request for Comments:"), then the title's lines.
		head := min(len(lines), 40)
		rfc := -1
		for i, ln := range lines[:head] {
			if strings.HasPrefix(ln, "Request for Comments:") {
				rfc = i
				break
			}
		}
		if rfc < 0 {
			return ""
		}
		i := rfc
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			i++
		}
		for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
			i++
		}
		var t []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			t = append(t, strings.TrimSpace(lines[i]))
		}
		return strings.Join(t, " ")
	}
	return ""
}
