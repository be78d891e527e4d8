package retrieve

import (
	"context"
	"fmt"
	"sync"

	"github.com/stratakb/stratakb/queryd/internal/store"
)

// memo keeps what every search reads and only an ingest or a settings
// change alters (the layers, which layers a model is complete for, the
// model's parameters) for the current data version, so a search reads them
// once per version instead of once per query.
type memo struct {
	mu  sync.Mutex
	cur *memoVersion
}

type memoVersion struct {
	version  string
	mu       sync.Mutex
	layers   []store.Layer
	complete map[string][]int64
	params   map[string]paramsEntry
	models   map[string]map[int64][]string
	numbers  map[string]store.NumberKeys
}

type paramsEntry struct {
	p  store.ModelParams
	ok bool
}

// at returns the memo of the version, starting a new one when the version
// changed.
func (m *memo) at(version string) *memoVersion {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil || m.cur.version != version {
		m.cur = &memoVersion{version: version, complete: map[string][]int64{}, params: map[string]paramsEntry{},
			models: map[string]map[int64][]string{}, numbers: map[string]store.NumberKeys{}}
	}
	return m.cur
}

func (v *memoVersion) getLayers(ctx context.Context, st Corpus) ([]store.Layer, error) {
	if v == nil {
		return st.Layers(ctx)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.layers == nil {
		ls, err := st.Layers(ctx)
		if err != nil {
			return nil, err
		}
		if ls == nil {
			ls = []store.Layer{}
		}
		v.layers = ls
	}
	return v.layers, nil
}

// remembered returns m[key], calling load and keeping its result under
// v's lock when m has none; a failed load is not kept.
func remembered[T any](v *memoVersion, m map[string]T, key string, load func() (T, error)) (T, error) {
	v.mu.Lock()
	x, ok := m[key]
	v.mu.Unlock()
	if ok {
		return x, nil
	}
	x, err := load()
	if err != nil {
		return x, err
	}
	v.mu.Lock()
	m[key] = x
	v.mu.Unlock()
	return x, nil
}

func (v *memoVersion) getComplete(ctx context.Context, st Corpus, model string, ids []int64) ([]int64, error) {
	load := func() ([]int64, error) { return st.CompleteLayers(ctx, model, ids) }
	if v == nil {
		return load()
	}
	return remembered(v, v.complete, fmt.Sprint(model, ids), load)
}

func (v *memoVersion) getParams(ctx context.Context, st Corpus, model string) (store.ModelParams, bool, error) {
	if v == nil {
		return st.ModelParams(ctx, model)
	}
	e, err := remembered(v, v.params, model, func() (paramsEntry, error) {
		p, found, err := st.ModelParams(ctx, model)
		return paramsEntry{p, found}, err
	})
	if err != nil {
		return e.p, false, err
	}
	return e.p, e.ok, nil
}

func (v *memoVersion) getLayerModels(ctx context.Context, st Corpus, ids []int64) (map[int64][]string, error) {
	load := func() (map[int64][]string, error) { return st.LayerModels(ctx, ids) }
	if v == nil {
		return load()
	}
	return remembered(v, v.models, fmt.Sprint(ids), load)
}

// getNumberKeys reads the number keys of the layers' documents once per
// version: a question naming a document by number is checked against them
// without reading every document again.
func (v *memoVersion) getNumberKeys(ctx context.Context, st Corpus, ids []int64) (store.NumberKeys, error) {
	load := func() (store.NumberKeys, error) { return st.NumberKeysOf(ctx, ids) }
	if v == nil {
		return load()
	}
	return remembered(v, v.numbers, fmt.Sprint(ids), load)
}
