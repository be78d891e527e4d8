package structure

import (
	"fmt"
	"strings"

	"github.com/stratakb/stratakb/schema"
)

// checkInvariants checks what every structure map must satisfy: spans in
// the body and in order, Start ≤ HeadingEnd ≤ End, parents before children
// and enclosing them, levels one below the parent, and paths built from the
// labels.
func checkInvariants(text string, bodyStart int, secs []schema.Section) error {
	if bodyStart < 0 {
		bodyStart = 0
	}
	if bodyStart > len(text) {
		bodyStart = len(text)
	}
	prevStart := -1
	for i, s := range secs {
		if s.Start < bodyStart || s.Start > s.HeadingEnd || s.HeadingEnd > s.End || s.End > len(text) {
			return fmt.Errorf("section %d %q: span %d/%d/%d out of order or bounds (body %d, text %d)", i, s.Path, s.Start, s.HeadingEnd, s.End, bodyStart, len(text))
		}
		if s.Start <= prevStart {
			return fmt.Errorf("section %d %q starts at %d, not after the previous one at %d", i, s.Path, s.Start, prevStart)
		}
		prevStart = s.Start
		if s.Parent >= i || s.Parent < -1 {
			return fmt.Errorf("section %d %q: parent %d does not precede it", i, s.Path, s.Parent)
		}
		if s.Parent == -1 {
			if s.Level != 1 || s.Path != s.Label() {
				return fmt.Errorf("section %d: top-level section has level %d, path %q", i, s.Level, s.Path)
			}
			continue
		}
		p := secs[s.Parent]
		if s.Start < p.HeadingEnd || s.End > p.End {
			return fmt.Errorf("section %d %q [%d,%d) is not inside its parent %q [%d,%d)", i, s.Path, s.Start, s.End, p.Path, p.Start, p.End)
		}
		if s.Level != p.Level+1 {
			return fmt.Errorf("section %d %q: level %d under a parent of level %d", i, s.Path, s.Level, p.Level)
		}
		if s.Path != p.Path+" > "+s.Label() {
			return fmt.Errorf("section %d: path %q is not the parent's path and the label %q", i, s.Path, s.Label())
		}
		if strings.Contains(s.Label(), "\n") {
			return fmt.Errorf("section %d: label %q spans lines", i, s.Label())
		}
	}
	return nil
}
