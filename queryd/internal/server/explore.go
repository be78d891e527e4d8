package server

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// Explorer reads what the explorer's pages show (GET /v1/layers and the
// routes below it, GET /v1/documents/{id}); *store.Corpus is one. The
// routes are left out when Deps.Explorer is nil.
type Explorer interface {
	ExploreLayers(ctx context.Context, p store.Page) ([]store.LayerSummary, int, error)
	LayerFiles(ctx context.Context, layer string, problemsOnly bool, p store.Page) (store.LayerFiles, error)
	LayerDocuments(ctx context.Context, layer string, p store.Page) ([]store.DocumentSummary, int, error)
	Document(ctx context.Context, id int64) (store.DocumentText, error)
}

var _ Explorer = (*store.Corpus)(nil)

// The bounds of every list the explorer's routes answer.
const (
	defaultPageLimit = 50
	maxPageLimit     = 500
	maxPageOffset    = 1_000_000
)

// layerNameRe is the database's check on a layer's name.
var layerNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// explorePaths are the explorer's read-only routes, all GET, as
// openapi_base.json describes them.
var explorePaths = []string{"/v1/layers", "/v1/layers/{name}/files", "/v1/layers/{name}/documents", "/v1/documents/{id}"}

// exploreRoutes registers the explorer's read-only routes on mux, behind
// authenticate like every API route.
func (s *Server) exploreRoutes(mux *http.ServeMux) {
	if s.deps.Explorer == nil {
		return
	}
	reads := []func(context.Context, *http.Request) (any, error){s.layersList, s.layerFiles, s.layerDocuments, s.document}
	for i, path := range explorePaths {
		mux.Handle("GET "+path, s.authenticate(s.explore(reads[i])))
	}
}

// explore runs one read under QUERYD_REQUEST_TIMEOUT and answers its value
// as JSON, or its error through the error-kind table.
func (s *Server) explore(read func(ctx context.Context, r *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
		defer cancel()
		v, err := read(ctx, r)
		if err != nil {
			if qerr.KindOf(err) == qerr.Internal {
				if ctx.Err() != nil {
					err = qerr.Unavailablef(err, "the request took longer than %s or was cancelled", s.cfg.RequestTimeout)
				} else {
					s.log.Error("explorer read", "path", r.URL.Path, logError, err.Error())
				}
			}
			writeError(w, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, v)
	})
}

// pageParams reads limit and offset from the query string.
func pageParams(r *http.Request) (store.Page, error) {
	p := store.Page{Limit: defaultPageLimit}
	q := r.URL.Query()
	for _, arg := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"limit", &p.Limit, 1, maxPageLimit}, {"offset", &p.Offset, 0, maxPageOffset}} {
		v := q.Get(arg.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < arg.min || n > arg.max {
			return p, qerr.Invalidf(arg.name, "must be a whole number from %d to %d", arg.min, arg.max)
		}
		*arg.dst = n
	}
	return p, nil
}

// layerName reads and checks the {name} path parameter.
func layerName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if !layerNameRe.MatchString(name) {
		return "", qerr.Invalidf("name", "is not a layer name (letters, digits, '_', '.', '-'; at most 64)")
	}
	return name, nil
}

// LayersPage is the body of GET /v1/layers.
type LayersPage struct {
	Layers []store.LayerSummary `json:"layers"`
	Total  int                  `json:"total"`
	Limit  int                  `json:"limit"`
	Offset int                  `json:"offset"`
}

func (s *Server) layersList(ctx context.Context, r *http.Request) (any, error) {
	p, err := pageParams(r)
	if err != nil {
		return nil, err
	}
	layers, total, err := s.deps.Explorer.ExploreLayers(ctx, p)
	if err != nil {
		return nil, err
	}
	if layers == nil {
		layers = []store.LayerSummary{}
	}
	return LayersPage{Layers: layers, Total: total, Limit: p.Limit, Offset: p.Offset}, nil
}

// LayerFilesPage is the body of GET /v1/layers/{name}/files: a page of the
// layer's stored files (failed ones with their error, any with warnings),
// and the files its last run skipped, with the reasons.
type LayerFilesPage struct {
	Layer string `json:"layer"`
	store.LayerFiles
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

func (s *Server) layerFiles(ctx context.Context, r *http.Request) (any, error) {
	name, err := layerName(r)
	if err != nil {
		return nil, err
	}
	p, err := pageParams(r)
	if err != nil {
		return nil, err
	}
	problems := false
	switch v := r.URL.Query().Get("failed"); v {
	case "", "false":
	case "true":
		problems = true
	default:
		return nil, qerr.Invalidf("failed", "must be true or false")
	}
	files, err := s.deps.Explorer.LayerFiles(ctx, name, problems, p)
	if err != nil {
		return nil, err
	}
	return LayerFilesPage{Layer: name, LayerFiles: files, Limit: p.Limit, Offset: p.Offset}, nil
}

// LayerDocumentsPage is the body of GET /v1/layers/{name}/documents.
type LayerDocumentsPage struct {
	Layer     string                  `json:"layer"`
	Documents []store.DocumentSummary `json:"documents"`
	Total     int                     `json:"total"`
	Limit     int                     `json:"limit"`
	Offset    int                     `json:"offset"`
}

func (s *Server) layerDocuments(ctx context.Context, r *http.Request) (any, error) {
	name, err := layerName(r)
	if err != nil {
		return nil, err
	}
	p, err := pageParams(r)
	if err != nil {
		return nil, err
	}
	docs, total, err := s.deps.Explorer.LayerDocuments(ctx, name, p)
	if err != nil {
		return nil, err
	}
	if docs == nil {
		docs = []store.DocumentSummary{}
	}
	return LayerDocumentsPage{Layer: name, Documents: docs, Total: total, Limit: p.Limit, Offset: p.Offset}, nil
}

func (s *Server) document(ctx context.Context, r *http.Request) (any, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(strings.TrimPrefix(raw, "d"), 10, 64)
	if err != nil || id <= 0 {
		return nil, qerr.Invalidf("id", "is not a document id (a positive whole number, as in the ref d42:10-20)")
	}
	d, err := s.deps.Explorer.Document(ctx, id)
	if err != nil {
		var e *qerr.Error
		if errors.As(err, &e) && e.Kind == qerr.NotFound {
			return nil, qerr.NotFoundf("no document %d (it may have been deleted or re-ingested under another id)", id)
		}
		return nil, err
	}
	return documentView(d), nil
}
