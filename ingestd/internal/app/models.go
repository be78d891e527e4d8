package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/stratakb/stratakb/embed"
	"github.com/stratakb/stratakb/internal/embedding"
	"github.com/stratakb/stratakb/jobs"
)

// modelsFor returns how workers reach the models layers were embedded with
// besides the configured one (def, nil when it failed to load).
func (e *env) modelsFor(def embed.Embedder) func(string) (jobs.Vectorizer, error) {
	e.models = embedding.NewSet(e.cfg.Embed, e.logger, def)
	return func(name string) (jobs.Vectorizer, error) {
		emb, err := e.models.ByName(name)
		if err != nil {
			return nil, err
		}
		return jobs.SingleVector(emb), nil
	}
}

// layerModel decides the embedding model of a layer being added: the one
// --model names, else the one it has, else (a new layer) the configured
// one, which it then keeps when the default changes. changed reports a
// layer moving to another model than the one it had.
func (e *env) layerModel(l jobs.Layer, flagModel string) (model string, changed bool, err error) {
	if flagModel != "" {
		model, err = embedding.ResolveName(e.cfg.Embed, flagModel)
		if err != nil {
			return "", false, usagef("--model: %v", err)
		}
		return model, l.ID != 0 && model != l.EmbeddingModel, nil
	}
	if l.EmbeddingModel != "" {
		return l.EmbeddingModel, false, nil
	}
	model, err = embedding.ConfiguredName(e.cfg.Embed)
	if err != nil {
		// No model can be named now: the layer follows the configured one.
		return "", false, nil
	}
	return model, false, nil
}

// reembed moves a layer to another embedding model: the new vectors are
// made by the workers (here with --wait, else by 'ingestd serve'), and
// queries keep using the old ones until every chunk has a new one.
func (e *env) reembed(ctx context.Context, args []string) error {
	fs := newFlagSet("reembed", e.stderr)
	name := layerFlag(fs, "layer to re-embed")
	model := fs.String("model", "", "model to embed it with: "+embed.LocalModelNames())
	wait := fs.Bool("wait", false, "embed in this process, showing progress, until every chunk has a vector")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *name == "" || *model == "" {
		return usagef("reembed needs --layer NAME and --model MODEL, and nothing else")
	}
	if err := checkLayerName("reembed", *name); err != nil {
		return err
	}
	if err := e.connect(ctx); err != nil {
		return err
	}
	defer e.close()
	l, err := jobs.GetLayer(ctx, e.pool, *name)
	if errors.Is(err, jobs.ErrLayerNotFound) {
		return usagef("reembed: no layer named %q ('ingestd status' lists them)", *name)
	}
	if err != nil {
		return err
	}
	target, _, err := e.layerModel(l, *model)
	if err != nil {
		return err
	}
	old := l.EmbeddingModel
	if err := jobs.SetLayerModel(ctx, e.pool, l.ID, target); err != nil {
		return err
	}
	l.EmbeddingModel = target
	fmt.Fprintf(e.stdout, "layer %s: embedding with %s", l.Name, target)
	if old != "" && old != target {
		fmt.Fprintf(e.stdout, "; queries use the vectors of %s until every chunk has one of %s", old, target)
	}
	fmt.Fprintln(e.stdout)
	return e.embedLayer(ctx, l, target, *wait)
}

// embedLayer queues a sweep of the layer for model and, with wait, works
// it in this process while showing progress.
func (e *env) embedLayer(ctx context.Context, l jobs.Layer, model string, wait bool) error {
	workers := 0
	if wait {
		workers = e.cfg.Workers
	}
	cc := e.clientConfig(ctx, workers)
	if wait {
		p, err := jobs.Register(ctx, e.pool, quietLogger(e.logger))
		if err != nil {
			return err
		}
		defer p.Close(ctx)
		cc.ID = p.ClientID
	}
	client, err := jobs.NewClient(e.pool, cc)
	if err != nil {
		return err
	}
	if _, err := client.Insert(ctx, jobs.EmbedArgs{LayerID: l.ID, Model: model}, nil); err != nil {
		return fmt.Errorf("enqueue embedding of layer %s with %s: %w", l.Name, model, err)
	}
	if !wait {
		fmt.Fprintf(e.stdout, "layer %s: embedding with %s queued; 'ingestd serve' works it, 'ingestd status --layer %s' shows it\n", l.Name, model, l.Name)
		return nil
	}
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	defer stopClient(client)
	return e.waitVectors(ctx, client, l, model)
}
