package bert_test

import (
	"context"
	"fmt"
	"log"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/embed/bert"
)

// A *bert.Model is what embed.Adapt turns into an Embedder.
var _ embed.Model = (*bert.Model)(nil)

// Load a model with its Known spec, embed passages at ingest and a query at
// search time: both get the prefixes the model was trained with.
func Example() {
	m, err := bert.Load(bert.Config{
		ModelDir:    "var/models/bge-small-en-v1.5",
		LibraryPath: "var/lib/libonnxruntime.so.1",
		Spec:        bert.Known["bge-small-en-v1.5"],
	})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	passages, err := m.EmbedPassages(context.Background(), []string{"Unused leave days can be carried over for one year."})
	if err != nil {
		log.Fatal(err)
	}
	query, err := m.Embed(context.Background(), []string{"can I carry over leave?"})
	if err != nil {
		log.Fatal(err)
	}
	var dot float32
	for i := range query[0] {
		dot += query[0][i] * passages[0][i]
	}
	fmt.Printf("%s: cosine %.2f\n", m.Name(), dot)
}
