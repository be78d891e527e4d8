package retrieve

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// sameLexical says how two lexical results differ ("" when they do not):
// the same hits in the same order, scores within 1e-9, the same exact-term
// indexes, terms, boosts, path, words and unseen words.
func sameLexical(a, b Lexical) string {
	var d []string
	if !slices.Equal(a.Terms, b.Terms) {
		d = append(d, fmt.Sprintf("terms %q / %q", a.Terms, b.Terms))
	}
	if !slices.EqualFunc(a.Boosts, b.Boosts, func(x, y float64) bool { return math.Abs(x-y) <= 1e-9 }) {
		d = append(d, fmt.Sprintf("boosts %v / %v", a.Boosts, b.Boosts))
	}
	if a.Path != b.Path {
		d = append(d, fmt.Sprintf("path %+v / %+v", a.Path, b.Path))
	}
	if !slices.Equal(a.Words, b.Words) || !slices.Equal(a.Unseen, b.Unseen) {
		d = append(d, fmt.Sprintf("words %q %q / %q %q", a.Words, a.Unseen, b.Words, b.Unseen))
	}
	if len(a.Hits) != len(b.Hits) {
		d = append(d, fmt.Sprintf("%d hits / %d", len(a.Hits), len(b.Hits)))
	}
	for i := range min(len(a.Hits), len(b.Hits)) {
		x, y := a.Hits[i], b.Hits[i]
		if x.ChunkID != y.ChunkID || math.Abs(x.Score-y.Score) > 1e-9 || !slices.Equal(x.Exact, y.Exact) {
			d = append(d, fmt.Sprintf("hit %d: %d %.12g %v / %d %.12g %v", i, x.ChunkID, x.Score, x.Exact, y.ChunkID, y.Score, y.Exact))
			break
		}
	}
	return strings.Join(d, "; ")
}

// scoreDiff is the largest difference between the scores of the hits a
// and b hold at the same place for the same chunk.
func scoreDiff(a, b Lexical) float64 {
	d := 0.0
	for i := range min(len(a.Hits), len(b.Hits)) {
		if a.Hits[i].ChunkID == b.Hits[i].ChunkID {
			d = max(d, math.Abs(a.Hits[i].Score-b.Hits[i].Score))
		}
	}
	return d
}

// compareByLayer runs the lexical channel of one query over the layers
// both ways: each scope of the one statement (lexicalScopes) against
// Lexical over that scope alone, and the merged result against 1+N calls
// of Lexical (lexicalByLayerSeparate). It returns the differences, the
// largest score difference (scoreDiff) and the merged result.
func compareByLayer(ctx context.Context, one, sep *Engine, q Query, layers []store.Layer, depth int) ([]string, float64, Lexical, error) {
	ids := layerIDs(layers)
	var diffs []string
	worst := 0.0
	outs, _, err := one.Query(q).lexicalScopes(ctx, layers, ids, depth)
	if err != nil {
		return nil, 0, Lexical{}, err
	}
	for i, o := range outs {
		sc, contracts, name := ids, anyContracts(layers), "all layers"
		if i < len(layers) {
			sc, contracts, name = []int64{layers[i].ID}, layers[i].Preset == "contracts", layers[i].Name
		}
		want, err := sep.Query(q).Lexical(ctx, sc, depth, contracts)
		if err != nil {
			return nil, 0, Lexical{}, err
		}
		worst = max(worst, scoreDiff(o, want))
		if d := sameLexical(o, want); d != "" {
			diffs = append(diffs, fmt.Sprintf("%q over %s: %s", q.Text, name, d))
		}
	}
	got, err := one.Query(q).lexicalByLayer(ctx, layers, ids, depth)
	if err != nil {
		return nil, 0, Lexical{}, err
	}
	want, err := sep.Query(q).lexicalByLayer(ctx, layers, ids, depth)
	if err != nil {
		return nil, 0, Lexical{}, err
	}
	worst = max(worst, scoreDiff(got, want))
	if d := sameLexical(got, want); d != "" {
		diffs = append(diffs, fmt.Sprintf("%q merged: %s", q.Text, d))
	}
	return diffs, worst, got, nil
}

// engines returns an engine running lexicalByLayer as one statement and
// one running it as 1+N searches, over the same store.
func engines(st Corpus, opt Options) (one, sep *Engine) {
	one, sep = New(st, opt), New(st, opt)
	sep.byLayer = byLayerSeparate
	return one, sep
}
