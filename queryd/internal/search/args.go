package search

import (
	"fmt"

	"github.com/stratakb/stratakb/queryd/internal/toolargs"
)

// Args describes strata_search's arguments for its schema and decoder
// (package toolargs): the struct gives names and types, this gives the
// descriptions and the limits, from the constants above.
func (Request) Args() toolargs.Args {
	return toolargs.Args{
		"query": {
			Description: "What to look for: an exact term, code or identifier (pacs.008, AC04, an error message), or a short phrase in the documents' own words.",
			MinLength:   1,
			MaxLength:   MaxQuery,
		},
		"layers": {
			Description: "Names of the layers to search. Leave it out to let routing choose: when the routed layers give too little, every layer is searched and the response says so in routing_fallback. Layers named here are never widened.",
			Items:       &toolargs.Arg{MinLength: 1},
			Expect:      "an array of layer names (strings)",
		},
		"top_k": {
			Description: fmt.Sprintf("How many results to return, 1 to %d. Keep it small: every result fills the client's context.", MaxTopK),
			Min:         toolargs.Limit(1),
			Max:         toolargs.Limit(MaxTopK),
			Default:     DefaultTopK,
		},
		"metadata_filter": {
			Description: fmt.Sprintf("Exact matches on chunk metadata, values as strings, for example {\"page\": \"3\"}. Only chunks matching every entry are returned. "+
				"At most %d keys; keys up to %d characters, values up to %d.", MaxFilterKeys, MaxFilterKey, MaxFilterValue),
			MaxProperties: MaxFilterKeys,
			Values:        &toolargs.Arg{MaxLength: MaxFilterValue, Expect: `a string, such as "3"`},
			Expect:        `an object of metadata keys to string values, such as {"page": "3"}`,
		},
		"explain": {
			Description: "Also show, for each result, which search channels found it, at which ranks, and how fusion moved it.",
			Default:     false,
		},
	}
}
