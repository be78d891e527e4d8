package answers

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
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
		if len(l.Include) > 0 && len(fs) != len(l.Include) {
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
	if q.Kind == KindUnanswerable {
		if len(q.Gold) > 0 {
			bad("an unanswerable question has gold passages")
		}
		errs = append(errs, s.checkAbsent(q, l)...)
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
	return errs
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

// SplitOf is the split a question gets: within its kind, questions ordered
// by the FNV-1a hash of their id (then the id) take test, train, test, …
// in turn, so each kind is halved (the odd one goes to test) and adding a
// question moves few others.
func SplitOf(qs []Question) map[string]string {
	byKind := map[string][]string{}
	for _, q := range qs {
		byKind[q.Kind] = append(byKind[q.Kind], q.ID)
	}
	out := map[string]string{}
	for _, ids := range byKind {
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

func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// CheckSet returns what is wrong with the set as a whole: repeated ids, too
// few questions or unanswerable ones, a kind missing, and splits that are
// not SplitOf's.
func CheckSet(qs []Question, minQuestions int, minUnanswerable float64) []error {
	var errs []error
	seen := map[string]bool{}
	count := map[string]int{}
	for _, q := range qs {
		if seen[q.ID] {
			errs = append(errs, fmt.Errorf("id %s is repeated", q.ID))
		}
		seen[q.ID] = true
		count[q.Kind]++
	}
	if len(qs) < minQuestions {
		errs = append(errs, fmt.Errorf("%d questions, at least %d wanted", len(qs), minQuestions))
	}
	if share := float64(count[KindUnanswerable]) / float64(max(1, len(qs))); share < minUnanswerable {
		errs = append(errs, fmt.Errorf("%.1f %% of the questions are unanswerable, at least %.0f %% wanted", 100*share, 100*minUnanswerable))
	}
	for _, k := range Kinds {
		if count[k] < 2 {
			errs = append(errs, fmt.Errorf("kind %s has %d questions: each kind needs some in both splits", k, count[k]))
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
