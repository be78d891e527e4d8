package route

import (
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Named returns the layers the caller named, in the order named, each
// once. A name no layer has is the caller's mistake: the error names the
// argument and lists the known layers.
func Named(all []store.Layer, names []string) ([]store.Layer, error) {
	byName := make(map[string]store.Layer, len(all))
	known := make([]string, 0, len(all))
	for _, l := range all {
		byName[l.Name] = l
		known = append(known, l.Name)
	}
	var out []store.Layer
	seen := map[string]bool{}
	for _, n := range names {
		l, ok := byName[n]
		if !ok {
			list := strings.Join(known, ", ")
			if list == "" {
				list = "none yet"
			}
			return nil, qerr.Invalidf("layers", "no layer named %q (known: %s)", qerr.Clip(n), list)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, l)
		}
	}
	return out, nil
}
