package ask

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
	"github.com/stratakb/stratakb/queryd/internal/toolargs"
	"github.com/stratakb/stratakb/schema"
)

// Limits and defaults of strata_ask's arguments.
const (
	DefaultTopK = 10
	MaxTopK     = 50
	MaxQuestion = 2000 // characters
)

// Response formats and answer modes a caller may ask for.
const (
	FormatConcise  = "concise"
	FormatDetailed = "detailed"
	ModeGrounded   = string(schema.AnswerGrounded)
	ModeExtractive = string(schema.AnswerExtractive)
)

// Request is strata_ask's arguments.
type Request struct {
	Question string   `json:"question"`
	Layers   []string `json:"layers,omitempty"`
	// IncludeSources, when false, leaves the detailed response's sources
	// list out (the passages keep their citations); nil means true.
	IncludeSources *bool  `json:"include_sources,omitempty"`
	TopK           int    `json:"top_k,omitempty"`
	ResponseFormat string `json:"response_format,omitempty"`
	Mode           string `json:"mode,omitempty"`
}

// Args describes strata_ask's arguments for its schema and decoder.
func (Request) Args() toolargs.Args {
	return toolargs.Args{
		"question": {
			Description: "The question, in plain language, as the user asked it.",
			MinLength:   1,
			MaxLength:   MaxQuestion,
		},
		"layers": {
			Description: "Names of the layers to search. Leave it out to let routing choose; layers named here are never widened.",
			Items:       &toolargs.Arg{MinLength: 1},
			Expect:      "an array of layer names (strings)",
		},
		"include_sources": {
			Description: "With response_format detailed, also list the sources with their relevance scores. Passages always carry their citations.",
			Default:     true,
		},
		"top_k": {
			Description: fmt.Sprintf("How many results each search keeps and the merged list holds, 1 to %d; the token budget then decides how many passages come back.", MaxTopK),
			Min:         toolargs.Limit(1),
			Max:         toolargs.Limit(MaxTopK),
			Default:     DefaultTopK,
		},
		"response_format": {
			Description: "concise (the default): status and passages with citations. detailed: also confidence, the query variants, the retrieved chunks with their scores, and sources.",
			Enum:        []string{FormatConcise, FormatDetailed},
			Default:     FormatConcise,
		},
		"mode": {
			Description: "extractive asks for the documents' own sentences; grounded cannot loosen an answer holding a passage from an extractive layer. Leave it out to let the layers decide.",
			Enum:        []string{ModeExtractive, ModeGrounded},
		},
	}
}

// Validate checks and normalises the arguments; errors name the argument.
func (r *Request) Validate() error {
	if err := qerr.CheckText("question", "", r.Question); err != nil {
		return err
	}
	r.Question = strings.TrimSpace(r.Question)
	if r.Question == "" {
		return qerr.Invalidf("question", "must not be empty")
	}
	if n := len([]rune(r.Question)); n > MaxQuestion {
		return qerr.Invalidf("question", "is longer than %d characters", MaxQuestion)
	}
	if r.TopK == 0 {
		r.TopK = DefaultTopK
	}
	if r.TopK < 1 || r.TopK > MaxTopK {
		return qerr.Invalidf("top_k", "must be from 1 to %d, got %d", MaxTopK, r.TopK)
	}
	switch r.ResponseFormat {
	case "":
		r.ResponseFormat = FormatConcise
	case FormatConcise, FormatDetailed:
	default:
		return qerr.Invalidf("response_format", "must be %q or %q, got %q", FormatConcise, FormatDetailed, qerr.Clip(r.ResponseFormat))
	}
	switch r.Mode {
	case "", ModeGrounded, ModeExtractive:
	default:
		return qerr.Invalidf("mode", "must be %q or %q, got %q", ModeExtractive, ModeGrounded, qerr.Clip(r.Mode))
	}
	var layers []string
	for i, l := range r.Layers {
		if err := qerr.CheckText("layers", fmt.Sprintf("entry %d", i), l); err != nil {
			return err
		}
		l = strings.TrimSpace(l)
		if l == "" {
			return qerr.Invalidf("layers", "entry %d is empty", i)
		}
		if !slices.Contains(layers, l) {
			layers = append(layers, l)
		}
	}
	if r.Layers != nil {
		r.Layers = layers
	}
	return nil
}

// sources reports whether the detailed response lists its sources.
func (r Request) sources() bool { return r.IncludeSources == nil || *r.IncludeSources }
