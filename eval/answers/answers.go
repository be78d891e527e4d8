// Package answers is the answer-quality evaluation's question set: its
// layers (layers.json), its questions (questions.jsonl), the checks every
// entry must pass (check_test.go runs them in `make test`, without a
// database) and the judgment of a search result against a question's gold
// passages, which the evaluation under STRATA_EVAL=1
// (queryd/internal/search/answers_eval_test.go) uses. README.md says how the
// set was written.
package answers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/parsers"
	"github.com/stratakb/stratakb/schema"
)

// Kinds of question.
const (
	KindExact        = "exact"
	KindLexical      = "lexical"
	KindParaphrase   = "paraphrase"
	KindCode         = "code"
	KindContract     = "contract"
	KindTable        = "table"
	KindUnanswerable = "unanswerable"
	// KindNamesDoc names one document of the layer by its number ("PEP
	// 380", "RFC 4180") or its title and asks what that document answers.
	KindNamesDoc = "names_doc"
	// KindNearMiss is unanswerable, written in the layer's own words: every
	// content word of the question occurs somewhere in the layer.
	KindNearMiss = "near_miss"
	// KindMissingSection is unanswerable: it names a section, clause,
	// annex or appendix that the document it names (or, naming none, every
	// document of the layer) does not have.
	KindMissingSection = "missing_section"
)

// Kinds lists the kinds in the order reports print them.
var Kinds = []string{KindExact, KindLexical, KindParaphrase, KindCode, KindContract, KindTable, KindNamesDoc,
	KindUnanswerable, KindNearMiss, KindMissingSection}

// Unanswerable reports whether no document of the layer answers the
// question: the kinds unanswerable, near_miss and missing_section.
func (q Question) Unanswerable() bool {
	switch q.Kind {
	case KindUnanswerable, KindNearMiss, KindMissingSection:
		return true
	}
	return false
}

// Gold is one passage that answers a question.
type Gold struct {
	// File is relative to the layer's root.
	File string `json:"file"`
	// Quote is an exact substring of the file's stored (parsed) text.
	Quote string `json:"quote"`
	// Section, when given, is the clause path of the innermost section of
	// the structure map that holds the quote.
	Section string `json:"section,omitempty"`
}

// Question is one entry of questions.jsonl.
type Question struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Split    string `json:"split"` // train or test
	Layer    string `json:"layer"`
	Question string `json:"question"`
	Gold     []Gold `json:"gold"`
	// Terms, for a paraphrase, are the gold passage's key terms the
	// question must not share (stemmed); for an unanswerable question, the
	// key words that must not occur together in one window of the layer.
	// Empty means: every content word of the question.
	Terms []string `json:"terms,omitempty"`
	Note  string   `json:"note,omitempty"`
	// SectionRef, for a missing_section question, is the section as the
	// question writes it ("section 8.7", "Appendix F"); Doc is the file the
	// question names, relative to the layer's root (empty when it names
	// only the layer).
	SectionRef string `json:"section_ref,omitempty"`
	Doc        string `json:"doc,omitempty"`
}

// Layer is one entry of layers.json: a layer as a user would add it.
type Layer struct {
	Name string `json:"name"`
	// Base is "corpora" (Root is relative to the shared corpora folder) or
	// "eval" (relative to this folder).
	Base            string   `json:"base"`
	Root            string   `json:"root"`
	Include         []string `json:"include,omitempty"`
	Description     string   `json:"description"`
	RoutingPatterns []string `json:"routing_patterns,omitempty"`
	Preset          string   `json:"preset,omitempty"`
	// Generic are words found all over the layer that an unanswerable
	// question may share with it (its subject: "agreement", "PEP").
	Generic []string `json:"generic,omitempty"`
}

// Presets as ingestd's --preset sets them (ingestd/internal/app).
var presets = map[string]struct {
	answerMode string
	chunkSize  int
}{
	"docs":      {"grounded", 800},
	"contracts": {"extractive", 1200},
}

// JobsLayer is the layer as ingestd add would register it; evalDir is this
// folder, corporaDir the shared corpora folder.
func (l Layer) JobsLayer(evalDir, corporaDir string) (jobs.Layer, error) {
	p := presets[l.Preset]
	if l.Preset == "" {
		p = presets["docs"]
	} else if p.chunkSize == 0 {
		return jobs.Layer{}, fmt.Errorf("layer %s: unknown preset %q", l.Name, l.Preset)
	}
	return jobs.Layer{Name: l.Name, Root: l.RootDir(evalDir, corporaDir), Include: l.Include,
		Description: l.Description, RoutingPatterns: l.RoutingPatterns, Preset: l.Preset,
		AnswerMode: schema.AnswerMode(p.answerMode), ChunkSize: p.chunkSize}, nil
}

// ChunkSize is the layer's chunk size in bytes.
func (l Layer) ChunkSize() int {
	if p, ok := presets[l.Preset]; ok {
		return p.chunkSize
	}
	return presets["docs"].chunkSize
}

// RootDir is the layer's folder.
func (l Layer) RootDir(evalDir, corporaDir string) string {
	if l.Base == "eval" {
		return filepath.Join(evalDir, l.Root)
	}
	return filepath.Join(corporaDir, l.Root)
}

// Files lists the layer's files relative to its root: the include list when
// it names files, else every supported file under the root.
func (l Layer) Files(evalDir, corporaDir string) ([]string, error) {
	root := l.RootDir(evalDir, corporaDir)
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !parsers.Supported(p) || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if len(l.Include) > 0 && !included(l.Include, rel) {
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", l.Name, err)
	}
	return out, nil
}

// included matches rel against the include globs as ingestd does
// (doublestar: "pages/**/*.md").
func included(globs []string, rel string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
	}
	return false
}

// LoadLayers reads layers.json.
func LoadLayers(path string) ([]Layer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read layers: %w", err)
	}
	var ls []Layer
	if err := json.Unmarshal(data, &ls); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return ls, nil
}

// LoadQuestions reads questions.jsonl (unknown fields are an error, so a
// misspelt key does not pass silently).
func LoadQuestions(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read questions: %w", err)
	}
	defer f.Close()
	var qs []Question
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var q Question
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return qs, nil
}

// Doc is a file as the ingest pipeline stores it: its text and structure.
type Doc struct {
	Text     string
	Sections []schema.Section
}

// Docs parses files with ingestd's standard pipeline (no OCR), caching
// them.
type Docs struct {
	pipe  jobs.Pipeline
	cache map[string]*Doc
}

// NewDocs returns an empty cache.
func NewDocs() *Docs {
	return &Docs{pipe: jobs.StandardPipeline(parsers.Options{NoOCR: true}), cache: map[string]*Doc{}}
}

// Get parses the file at path.
func (d *Docs) Get(path string) (*Doc, error) {
	if doc, ok := d.cache[path]; ok {
		return doc, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	pd, err := d.pipe.Parse(context.Background(), path, data, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	doc := &Doc{Text: pd.Text, Sections: d.pipe.Structure(pd)}
	d.cache[path] = doc
	return doc, nil
}

// SectionAt is the clause path of the innermost section holding the byte
// range [start, end); empty when none does.
func (d *Doc) SectionAt(start, end int) string {
	best, depth := "", -1
	for _, s := range d.Sections {
		if s.Start <= start && end <= s.End && s.Level > depth {
			best, depth = s.Path, s.Level
		}
	}
	return best
}
