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

func (v *memoVersion) getComplete(ctx context.Context, st Corpus, model string, ids []int64) ([]int64, error) {
	if v == nil {
		return st.CompleteLayers(ctx, model, ids)
	}
	key := fmt.Sprint(model, ids)
	v.mu.Lock()
	c, ok := v.complete[key]
	v.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := st.CompleteLayers(ctx, model, ids)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.complete[key] = c
	v.mu.Unlock()
	return c, nil
}

func (v *memoVersion) getParams(ctx context.Context, st Corpus, model string) (store.ModelParams, bool, error) {
	if v == nil {
		return st.ModelParams(ctx, model)
	}
	v.mu.Lock()
	e, ok := v.params[model]
	v.mu.Unlock()
	if ok {
		return e.p, e.ok, nil
	}
	p, found, err := st.ModelParams(ctx, model)
	if err != nil {
		return p, false, err
	}
	v.mu.Lock()
	v.params[model] = paramsEntry{p, found}
	v.mu.Unlock()
	return p, found, nil
}

func (v *memoVersion) getLayerModels(ctx context.Context, st Corpus, ids []int64) (map[int64][]string, error) {
	if v == nil {
		return st.LayerModels(ctx, ids)
	}
	key := fmt.Sprint(ids)
	v.mu.Lock()
	m, ok := v.models[key]
	v.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := st.LayerModels(ctx, ids)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.models[key] = m
	v.mu.Unlock()
	return m, nil
}

// getNumberKeys reads the number keys of the layers' documents once per
// version: a question naming a document by number is checked against them
// without reading every document again.
func (v *memoVersion) getNumberKeys(ctx context.Context, st Corpus, ids []int64) (store.NumberKeys, error) {
	if v == nil {
		return st.NumberKeysOf(ctx, ids)
	}
	key := fmt.Sprint(ids)
	v.mu.Lock()
	nk, ok := v.numbers[key]
	v.mu.Unlock()
	if ok {
		return nk, nil
	}
	nk, err := st.NumberKeysOf(ctx, ids)
	if err != nil {
		return nk, err
	}
	v.mu.Lock()
	v.numbers[key] = nk
	v.mu.Unlock()
	return nk, nil
}
