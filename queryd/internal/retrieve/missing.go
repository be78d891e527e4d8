package retrieve

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/store"
	"github.com/stratakb/stratakb/schema"
)

// separateKind are the kinds numbered apart from a document's body: a
// document may have none of them.
var separateKind = map[string]bool{schema.KindAnnex: true, schema.KindAppendix: true, schema.KindSchedule: true}

// kindPlural names a kind of section in a note, in the plural.
var kindPlural = map[string]string{
	schema.KindClause: "clauses", schema.KindSection: "sections", schema.KindArticle: "articles",
	schema.KindAnnex: "annexes", schema.KindAppendix: "appendices", schema.KindSchedule: "schedules",
	schema.KindPara: "paragraphs",
}

// missingNotes says, for each explicit reference that matched no section
// (missing, as written, with the kind each names), where it was looked
// for and what is there: "RFC 5321 (rfc5321.txt) has no section 8.7: its
// sections are 1–7, its appendices A–F." Without a named document, it says
// that no document of the searched layers has it. decided is false when
// the place looked in has no numbered section at all (a document without a
// structure map): then nothing can be said to be missing, and the notes
// say that the number could not be looked up.
func (r *Run) missingNotes(ctx context.Context, missing []string, kinds []string, named []NamedDoc, layers []store.Layer) (notes []string, decided bool, err error) {
	if len(missing) == 0 {
		return nil, false, nil
	}
	if len(named) == 0 {
		ok, err := r.e.store.HasNumberedSections(ctx, store.LayerIDs(layers))
		if err != nil {
			return nil, false, err
		}
		for _, ref := range missing {
			if ok {
				notes = append(notes, fmt.Sprintf("No document of the searched layers (%s) has %s.", strings.Join(store.LayerNames(layers), ", "), ref))
			} else {
				notes = append(notes, fmt.Sprintf("The searched layers (%s) have no numbered sections, so %s could not be looked up by its number.", strings.Join(store.LayerNames(layers), ", "), ref))
			}
		}
		return notes, ok, nil
	}
	outline, err := r.e.store.DocumentOutlines(ctx, namedIDs(named))
	if err != nil {
		return nil, false, err
	}
	decided = true
	for i, ref := range missing {
		for _, d := range named {
			if !hasOutline(outline, d.DocumentID) {
				decided = false
				notes = append(notes, fmt.Sprintf("%s has no numbered sections, so %s could not be looked up by its number.", docLabel(d), ref))
				continue
			}
			notes = append(notes, fmt.Sprintf("%s has no %s: %s.", docLabel(d), ref, describeOutline(outline, d.DocumentID, kinds[i])))
		}
	}
	return notes, decided, nil
}

func hasOutline(outline []store.OutlineEntry, doc int64) bool {
	for _, e := range outline {
		if e.DocumentID == doc {
			return true
		}
	}
	return false
}

func docLabel(d NamedDoc) string {
	if d.By != "" && d.By != d.File && d.By != byParties && d.By != byDescription {
		return fmt.Sprintf("%s (%s)", d.By, d.File)
	}
	return d.File
}

// describeOutline writes what numbered parts document doc has, kind by
// kind in the order they first come ("its clauses are 1–7, its annexes
// A–H, J–M"), and says when it has none of the kind asked for.
func describeOutline(outline []store.OutlineEntry, doc int64, asked string) string {
	var kinds []string
	nums := map[string][]string{}
	for _, e := range outline {
		if e.DocumentID != doc {
			continue
		}
		if _, ok := nums[e.Kind]; !ok {
			kinds = append(kinds, e.Kind)
		}
		nums[e.Kind] = append(nums[e.Kind], e.Number)
	}
	if len(kinds) == 0 {
		return "it has no numbered sections"
	}
	var parts []string
	for _, k := range kinds {
		name := kindPlural[k]
		if name == "" {
			name = "numbered " + k + "s"
		}
		parts = append(parts, fmt.Sprintf("its %s are %s", name, compactRuns(nums[k])))
	}
	s := strings.Join(parts, ", ")
	// "no annexes" says something; "no sections" of a document whose
	// clauses are numbered would not (a section number is looked up
	// among its clauses too).
	if _, has := nums[asked]; !has && separateKind[asked] {
		s += " and it has no " + kindPlural[asked]
	}
	return s
}

// compactRuns writes a list of section numbers with runs of consecutive
// numbers or letters as ranges: 1, 2, 3, 5 → "1–3, 5"; A … H, J … M →
// "A–H, J–M".
func compactRuns(nums []string) string {
	var out []string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && next(nums[j], nums[j+1]) {
			j++
		}
		switch {
		case j == i:
			out = append(out, nums[i])
		case j == i+1:
			out = append(out, nums[i], nums[j])
		default:
			out = append(out, nums[i]+"–"+nums[j])
		}
		i = j + 1
	}
	if len(out) > 12 {
		out = append(out[:12], "…")
	}
	return strings.Join(out, ", ")
}

// next reports whether b follows a: 7 then 8, or C then D.
func next(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return y == x+1
	}
	return len(a) == 1 && len(b) == 1 && b[0] == a[0]+1 && (a[0] >= 'A' && a[0] < 'Z' || a[0] >= 'a' && a[0] < 'z')
}
