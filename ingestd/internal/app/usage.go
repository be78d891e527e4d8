package app

import (
	"errors"
	"flag"
	"io"

	"github.com/stratakb/stratakb/internal/config"
	"github.com/stratakb/stratakb/jobs"
)

// verbUsage is each verb's synopsis and what it does, printed by
// 'ingestd VERB -h' above its flags.
var verbUsage = map[string]config.Usage{
	"add": {"ingestd add DIR --layer NAME [flags] [--wait]",
		"Registers the folder DIR as the layer NAME (or changes the layer's folder and\nsettings) and ingests it."},
	"ingest": {"ingestd ingest [--layer NAME] [--allow-deletes] [--wait]",
		"Re-ingests one layer, or every layer that is not pushed from elsewhere."},
	"reembed": {"ingestd reembed --layer NAME --model MODEL [--wait]",
		"Embeds a layer with another model; queries use the old vectors until every\nchunk has a new one."},
	"status": {"ingestd status [--layer NAME] [--failed]",
		"Shows each layer's counts and last run, and with --layer or --failed each\nfile's state, warnings and errors."},
	"layers": {"ingestd layers [--layer NAME]",
		"Lists each layer's settings: folder, description, routes, preset and answer\nmode, globs, embedding model, counts and last run."},
	"set": {"ingestd set --layer NAME [--description TEXT] [--route PATTERN]... [--archived GLOB]... [flags]",
		"Changes a layer's settings without ingesting it again. A list flag replaces\nthe whole list; give it as \"\" (--route \"\") to empty it."},
	"remove": {"ingestd remove --layer NAME [--yes]",
		"Deletes a layer: its documents, chunks, vectors and ingest records, in one\ntransaction. What queryd recorded (questions, feedback, receipts) stays.\nWithout --yes it asks first, and refuses when stdin is not a terminal."},
	"serve": {"ingestd serve",
		"Runs the River workers (and INGEST_SCHEDULE's re-ingests) until SIGINT or\nSIGTERM. It takes no arguments."},
	"migrate": {"ingestd migrate",
		"Applies River's and StrataKB's database migrations. It takes no arguments."},
}

// newFlagSet returns verb's flag set (config.NewFlagSet): -h prints its
// usage.
func newFlagSet(name string, out io.Writer) *flag.FlagSet {
	return config.NewFlagSet("ingestd", name, verbUsage, out)
}

// layerFlag defines --layer NAME on fs, and --layers as another spelling
// of it, as queryd's verbs take both.
func layerFlag(fs *flag.FlagSet, help string) *string {
	name := fs.String("layer", "", help)
	fs.StringVar(name, "layers", "", "the same as --layer")
	return name
}

// checkLayerName turns a layer name the database would refuse into a usage
// error naming the allowed ones.
func checkLayerName(verb, name string) error {
	if name == "" {
		return nil
	}
	if err := jobs.CheckLayerName(name); err != nil {
		return usagef("%s: --layer: %v", verb, err)
	}
	return nil
}

// asUsage makes a bad layer name found further down a usage error.
func asUsage(verb string, err error) error {
	if errors.Is(err, jobs.ErrBadLayerName) {
		return usagef("%s: --layer: %v", verb, err)
	}
	return err
}
