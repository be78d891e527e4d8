package embed

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fixedEmbedder returns a vector of dims ones per text.
type fixedEmbedder struct {
	info   ModelInfo
	closed atomic.Bool
}

func (f *fixedEmbedder) Model() ModelInfo { return f.info }

func (f *fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, f.info.Dims)
	}
	return out, nil
}

func (f *fixedEmbedder) Close() error { f.closed.Store(true); return nil }

func TestLazyLoadsOnceOnFirstEmbed(t *testing.T) {
	info := ModelInfo{Name: "m@1", Dims: 4}
	var loads atomic.Int32
	inner := &fixedEmbedder{info: info}
	release := make(chan struct{})
	l := NewLazy(info, func() (Embedder, error) {
		loads.Add(1)
		<-release // hold the load so that every caller arrives during it
		return inner, nil
	}, nil)
	if l.Model() != info || loads.Load() != 0 {
		t.Fatalf("Model() loaded the model or changed its info: %+v, %d loads", l.Model(), loads.Load())
	}
	if st, err := l.State(); st != NotLoaded || err != nil {
		t.Fatalf("state before any Embed: %v %v", st, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			v, err := l.Embed(context.Background(), []string{"a", "b"})
			if err == nil && (len(v) != 2 || len(v[0]) != 4) {
				err = errors.New("wrong vectors")
			}
			errs <- err
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for st, _ := l.State(); st != Loading; st, _ = l.State() {
		if time.Now().After(deadline) {
			t.Fatal("no load started")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("loaded %d times, want once", n)
	}
	if st, err := l.State(); st != Loaded || err != nil {
		t.Fatalf("state after Embed: %v %v", st, err)
	}
	if err := l.Close(); err != nil || !inner.closed.Load() {
		t.Fatalf("Close did not close the loaded model (%v)", err)
	}
	if _, err := l.Embed(context.Background(), []string{"a"}); err == nil {
		t.Fatal("Embed after Close succeeded")
	}
}

func TestLazyRemembersTheLoadError(t *testing.T) {
	info := ModelInfo{Name: "m@1", Dims: 4}
	var loads, fails atomic.Int32
	cause := fs.ErrNotExist
	l := NewLazy(info, func() (Embedder, error) {
		loads.Add(1)
		return nil, cause
	}, func(error) { fails.Add(1) })
	for range 3 {
		_, err := l.Embed(context.Background(), []string{"a"})
		if !errors.Is(err, cause) || !errors.Is(err, ErrLoad) || !errors.Is(err, ErrPermanent) {
			t.Fatalf("error %v does not match the cause, ErrLoad and ErrPermanent", err)
		}
	}
	if loads.Load() != 1 || fails.Load() != 1 {
		t.Fatalf("%d loads and %d failure reports, want one each", loads.Load(), fails.Load())
	}
	if st, err := l.State(); st != Failed || !errors.Is(err, cause) {
		t.Fatalf("state after a failed load: %v %v", st, err)
	}
}

func TestLazyRefusesAnotherModel(t *testing.T) {
	other := &fixedEmbedder{info: ModelInfo{Name: "other@1", Dims: 4}}
	l := NewLazy(ModelInfo{Name: "m@1", Dims: 4}, func() (Embedder, error) { return other, nil }, nil)
	if _, err := l.Embed(context.Background(), []string{"a"}); !errors.Is(err, ErrLoad) {
		t.Fatalf("a loader returning another model gave %v", err)
	}
	if !other.closed.Load() {
		t.Error("the wrong model was not closed")
	}
}

func TestLazyWaitIsBoundedByContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	l := NewLazy(ModelInfo{Name: "m@1", Dims: 4}, func() (Embedder, error) {
		<-release
		return &fixedEmbedder{info: ModelInfo{Name: "m@1", Dims: 4}}, nil
	}, nil)
	go func() { _, _ = l.Get(context.Background()) }()
	for st, _ := l.State(); st != Loading; st, _ = l.State() {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l.Embed(ctx, []string{"a"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for a load past the deadline gave %v", err)
	}
}
