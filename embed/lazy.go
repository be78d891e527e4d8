package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// LoadState says where a lazily loaded model stands.
type LoadState int

// The states of a Lazy embedder.
const (
	NotLoaded LoadState = iota // nothing has needed a vector yet
	Loading                    // the first load is under way
	Loaded                     // the model is loaded and embeds
	Failed                     // the load failed; Err says why
)

func (s LoadState) String() string {
	switch s {
	case NotLoaded:
		return "not loaded yet"
	case Loading:
		return "loading"
	case Loaded:
		return "loaded"
	case Failed:
		return "failed"
	}
	return fmt.Sprintf("LoadState(%d)", int(s))
}

// ErrLoad is matched (with errors.Is) by the error of a model that could not
// be loaded. It also matches ErrPermanent: the process does not try again,
// so a job that gets it stops rather than retries.
var ErrLoad = errors.New("embedding model not loaded")

// loadError is a remembered load failure: it matches ErrLoad, ErrPermanent
// and the cause.
type loadError struct{ err error }

func (e *loadError) Error() string   { return e.err.Error() }
func (e *loadError) Unwrap() []error { return []error{e.err, ErrLoad, ErrPermanent} }

// Lazy is an Embedder that loads its model the first time a vector is
// needed, not when it is built: loading the local model takes about half a
// second and 200-280 MB, which a command that finds nothing to embed (a
// re-ingest of an unchanged folder) should not pay. The load runs once; calls
// that arrive while it runs wait for it. A failed load is remembered and
// returned by every later call, wrapped so that it matches ErrLoad and
// ErrPermanent. Its methods are safe for concurrent use.
type Lazy struct {
	info   ModelInfo
	load   func() (Embedder, error)
	onFail func(error) // called once when the load fails; may be nil

	mu    sync.Mutex
	state LoadState
	done  chan struct{} // closed when the load in progress ends
	emb   Embedder
	err   error
}

var (
	_ Embedder  = (*Lazy)(nil)
	_ io.Closer = (*Lazy)(nil)
)

// NewLazy returns an Embedder for the model info describes (its name and
// dimensions must be known without loading it) that calls load on first
// use. onFail, when not nil, is called once with the error of a failed load
// (to log it); it runs before any caller sees the error.
func NewLazy(info ModelInfo, load func() (Embedder, error), onFail func(error)) *Lazy {
	return &Lazy{info: info, load: load, onFail: onFail}
}

// Model returns the model's name and dimensions without loading it.
func (l *Lazy) Model() ModelInfo { return l.info }

// State reports whether the model is loaded, and the load error when it
// failed.
func (l *Lazy) State() (LoadState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state, l.err
}

// Warm starts loading the model in the background, so that the first
// caller does not wait for it.
func (l *Lazy) Warm() {
	go func() { _, _ = l.Get(context.Background()) }()
}

// Get loads the model if no call has yet, waits for a load in progress, and
// returns the loaded embedder or the load error. ctx bounds only the wait:
// a load once started runs to its end, for the next caller.
func (l *Lazy) Get(ctx context.Context) (Embedder, error) {
	l.mu.Lock()
	switch l.state {
	case Loaded:
		e := l.emb
		l.mu.Unlock()
		return e, nil
	case Failed:
		err := l.err
		l.mu.Unlock()
		return nil, err
	case Loading:
		done := l.done
		l.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the embedding model to load: %w", ctx.Err())
		}
		return l.Get(ctx)
	}
	l.state, l.done = Loading, make(chan struct{})
	done := l.done
	l.mu.Unlock()

	emb, err := l.load()
	if err == nil && emb == nil {
		err = errors.New("the loader returned no model")
	}
	if err == nil && emb.Model() != l.info {
		err = fmt.Errorf("the loaded model is %s (%d dimensions), not the expected %s (%d)",
			emb.Model().Name, emb.Model().Dims, l.info.Name, l.info.Dims)
		_ = Close(emb)
		emb = nil
	}
	if err != nil {
		err = &loadError{err}
		if l.onFail != nil {
			l.onFail(err)
		}
	}
	l.mu.Lock()
	if err != nil {
		l.state, l.err = Failed, err
	} else {
		l.state, l.emb = Loaded, emb
	}
	l.mu.Unlock()
	close(done)
	return emb, err
}

// Embed loads the model on first use and embeds texts with it.
func (l *Lazy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return e.Embed(ctx, texts)
}

// EmbedPassages embeds whole passages when the loaded model can (see
// jobs.SingleVector), and falls back to Embed otherwise.
func (l *Lazy) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := l.Get(ctx)
	if err != nil {
		return nil, err
	}
	if p, ok := e.(interface {
		EmbedPassages(context.Context, []string) ([][]float32, error)
	}); ok {
		return p.EmbedPassages(ctx, texts)
	}
	return e.Embed(ctx, texts)
}

// Close releases the model if it was loaded, and waits for a load in
// progress to end first. A later Embed returns an error.
func (l *Lazy) Close() error {
	l.mu.Lock()
	if l.state == Loading {
		done := l.done
		l.mu.Unlock()
		<-done
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	e := l.emb
	l.emb = nil
	if l.state != Failed {
		l.state, l.err = Failed, &loadError{errors.New("the embedding model is closed")}
	}
	if e != nil {
		return Close(e)
	}
	return nil
}
