package embedding

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/bert"
	"github.com/stratakb/stratakb/embed/uselite"
)

// ErrNoSuchModel is returned by Set.ByName for vectors of a model that
// cannot run here: a remote model other than the configured one, or a name
// no local model has.
var ErrNoSuchModel = errors.New("no embedding model of that name can run here")

// Set is the configured embedder and, loaded lazily when first asked for,
// the other local models whose vectors the database may hold: a layer
// embedded with the previous default keeps being searched with the model
// that made its vectors. It is safe for concurrent use.
type Set struct {
	cfg    embed.Config
	logger *slog.Logger
	def    embed.Embedder // nil when the configured model is unavailable

	mu     sync.Mutex
	others map[string]embed.Embedder
}

// NewSet returns a set around def, the configured embedder (may be nil).
// Other local models are loaded with cfg's library, threads and batch size.
func NewSet(cfg embed.Config, logger *slog.Logger, def embed.Embedder) *Set {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Set{cfg: cfg, logger: logger, def: def, others: map[string]embed.Embedder{}}
}

// LocalNameOf returns the local model (an EMBEDDING_MODEL value) whose
// vectors are stored under vectorName, and false for any other name.
func LocalNameOf(vectorName string) (string, bool) {
	if vectorName == uselite.ModelName {
		return embed.USELiteModel, true
	}
	for name, spec := range bert.Known {
		if spec.Name == vectorName {
			return name, true
		}
	}
	return "", false
}

// VectorNameOf returns the name stored with the vectors of a local model
// (an EMBEDDING_MODEL value), and false for an unknown one.
func VectorNameOf(localName string) (string, bool) {
	if localName == embed.USELiteModel {
		return uselite.ModelName, true
	}
	spec, ok := bert.Known[localName]
	return spec.Name, ok
}

// ByName returns the embedder that makes the vectors named vectorName:
// the configured one, or a known local model, loaded lazily the first time.
func (s *Set) ByName(vectorName string) (embed.Embedder, error) {
	if s.def != nil && s.def.Model().Name == vectorName {
		return s.def, nil
	}
	local, ok := LocalNameOf(vectorName)
	if !ok {
		return nil, fmt.Errorf("vectors of %s: %w", vectorName, ErrNoSuchModel)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.others[vectorName]; ok {
		return e, nil
	}
	cfg := s.cfg
	cfg.Provider, cfg.ModelName, cfg.ModelDir = embed.ProviderLocal, local, s.siblingDir(local)
	if cfg.BatchSize < 1 || cfg.BatchSize > embed.MaxLocalBatchSize {
		cfg.BatchSize = embed.DefaultLocalBatchSize
	}
	e, err := Lazy(cfg, s.logger, func(err error) {
		s.logger.Warn("embedding model unavailable", slog.String("model", vectorName), slog.String("error", err.Error()))
	})
	if err != nil {
		return nil, fmt.Errorf("vectors of %s: %w", vectorName, err)
	}
	e = ForQueries(cfg, s.logger, e)
	s.others[vectorName] = e
	return e, nil
}

// siblingDir is where another local model's folder is: beside the
// configured local model's folder when it is there (models live side by
// side under var/models), else under ModelsDir.
func (s *Set) siblingDir(local string) string {
	if s.cfg.Provider == embed.ProviderLocal {
		_, dir := s.cfg.LocalModel()
		if d := filepath.Join(filepath.Dir(dir), local); fileExists(d) {
			return d
		}
	}
	return filepath.Join(embed.ModelsDir, local)
}

// Close releases every model the set loaded, the configured one included.
func (s *Set) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.others {
		_ = embed.Close(e)
	}
	s.others = map[string]embed.Embedder{}
	if s.def != nil {
		_ = embed.Close(s.def)
	}
}

// ConfiguredName returns the name stored with the vectors of the model cfg
// configures, without loading it.
func ConfiguredName(cfg embed.Config) (string, error) {
	if cfg.Provider != embed.ProviderLocal {
		e, err := Load(cfg, nil)
		if err != nil {
			return "", err
		}
		defer embed.Close(e) //nolint:errcheck
		return e.Model().Name, nil
	}
	lm, err := resolveLocal(cfg)
	if err != nil {
		return "", err
	}
	return lm.vectorName(), nil
}

// ResolveName turns what a user names a model by into the name stored with
// its vectors: a local model (e5-small-v2), or a vector name already
// (e5-small-v2@1, use-lite-512@1, or the configured remote model's).
func ResolveName(cfg embed.Config, given string) (string, error) {
	if v, ok := VectorNameOf(given); ok {
		return v, nil
	}
	if _, ok := LocalNameOf(given); ok {
		return given, nil
	}
	if def, err := ConfiguredName(cfg); err == nil && def == given {
		return given, nil
	}
	return "", fmt.Errorf("unknown embedding model %q: want one of %s (or the configured model's name)", given, embed.LocalModelNames())
}
