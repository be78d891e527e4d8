package retrieve

import "github.com/stratakb/stratakb/queryd/internal/store"

// Params are the tuning of one search. A search starts from
// DefaultParams, takes the measured fusion and confidence values of the
// embedding model from model_search_params, and a caller (the evaluation)
// may override any of them by passing its own Params in Query.Params.
// docs/retrieval.md gives the measurements behind every default.
type Params struct {
	// Fusion, from model_search_params: weighted reciprocal rank fusion
	// fused = LexicalWeight/(RRFK + lexical rank) + VectorWeight/(RRFK +
	// vector rank); EFSearch is HNSW's ef_search; vector hits under
	// MinSimilarity are dropped.
	RRFK          int
	LexicalWeight float64
	VectorWeight  float64
	EFSearch      int
	MinSimilarity float64
	// ContractsVectorWeight replaces VectorWeight for vector hits in a
	// layer of the contracts preset, whose questions name parties and
	// clauses in the documents' own words (model_search_params; a negative
	// value keeps VectorWeight).
	ContractsVectorWeight float64
	// ConfidenceHigh and ConfidenceMedium are the model's cosine marks that
	// strata_search judges confidence by.
	ConfidenceHigh   float64
	ConfidenceMedium float64

	// K1 and B are BM25's parameters: 1.2 and 0.4, the best of a grid on
	// SciFact's train queries. strata.postings_impact (migration 0006) uses
	// the same values, and a test checks they agree.
	K1, B float64
	// PhraseBoost: a chunk holding an exact term as written gets, on top of
	// its BM25 score, PhraseBoost times the idf of the term's lexemes, as if
	// the term occurred once more as one unit. ExactFirst instead ranks
	// chunks holding more exact terms first.
	PhraseBoost float64
	ExactFirst  bool
	// CodeBoost: a chunk holding an exact term that is a code (IsCode:
	// RJCT, AC04, 404, pacs.008) and not common in the layers gets
	// CodeBoost times a bound on what the query's other words can score
	// (Σ idf x (K1+1+PhraseBoost)): with 1 it ranks above every chunk
	// without the code, the question's generic words ordering the chunks
	// that hold it. 0 boosts a code like any exact term.
	CodeBoost float64
	// CommonTermShare: an exact term whose rarest lexeme is in more than
	// this share of the searched chunks (and in more than one) gets no
	// boost at all; 0 turns the rule off.
	CommonTermShare float64
	// DocTermDiscount and DocContext let a chunk's document speak in the
	// lexical channel (store.SearchBM25): a query lexeme that a document
	// concentrates (its share of the document's chunks well above its
	// share of the layers') weighs up to DocTermDiscount less in the chunk's
	// own score, and DocContext x that weight goes to every chunk of the
	// document instead. Names select the document, the rest of the question
	// the clause (issue 12, class 1). 0 and 0 score chunks alone; 1 and 1
	// (the weight moved whole from chunk to document) were the best of a
	// grid on the answer-quality evaluation's train split
	// (docs/retrieval.md).
	DocTermDiscount float64
	DocContext      float64
	// The documents of layers of the contracts preset bring that evidence;
	// a chunk of any other layer scores on its own and its document is not
	// read, unless DocEvidenceEverywhere. Made for contracts, it lifts on
	// SciFact as a user ingests it (2.7 chunks an abstract) every chunk of
	// an abstract holding the query's words, crowding other abstracts out
	// of the top 10 (issue 31, docs/retrieval.md, "Document evidence").
	DocEvidenceEverywhere bool
	// ClauseWords is the weight (a factor on idf) of the drafting words a
	// contract question's clause type adds to the lexical query when a
	// layer of the contracts preset is searched (ClauseWords,
	// clausewords.go); 0 adds none. 0.8 was the best of 0, 0.2, 0.3, 0.5,
	// 0.8, 1 and 1.5 on the answer-quality evaluation's train split
	// (docs/retrieval.md).
	ClauseWords float64
	// Synonyms is the weight (a factor on idf) of the synonyms the
	// thesaurus (Options.Thesaurus, WordNet) gives for the question's words,
	// added to the lexical query as clause words are (synonyms.go); 0, the
	// default, adds none. SynonymsAllSenses takes every sense's synonyms,
	// not only each part of speech's first. Issue 12, class 2: measured on
	// the answer-quality evaluation's train split (docs/retrieval.md).
	Synonyms          float64
	SynonymsAllSenses bool
	// LexicalByLayer scores a search over several layers layer by layer,
	// each with its own statistics, and merges the hits by score
	// (lexicalByLayer); false scores them as one collection.
	LexicalByLayer bool
	// With more than PruneMinChunks chunks, lexemes in more than
	// PruneFraction of them still score but do not select candidates on the
	// GIN path.
	PruneFraction  float64
	PruneMinChunks int64
	// CandidateBudget bounds the GIN path's candidates: lexemes select
	// rarest first while the sum of their document frequencies stays within
	// it. 0 turns the bound off.
	CandidateBudget int64
	// The impact-ordered path (strata.postings) reads ImpactPerTerm
	// postings per query lexeme and layer, scores the ImpactCandidates (at
	// least 4 x Depth) best sums exactly, and lets the GIN index add at most
	// ImpactPhraseLimit chunks for exact terms made of common words.
	// ImpactPerTerm 0 turns the path off.
	ImpactPerTerm     int
	ImpactCandidates  int
	ImpactPhraseLimit int

	// PerDocument: after fusion, a document's chunks beyond its first
	// PerDocument go behind every other document's (perDocument), so a
	// top list holds more documents; 0 turns it off.
	PerDocument int

	// Depth is how many candidates each channel hands to fusion; 0 means
	// max(50, 4 x top_k).
	Depth int
	// KeywordSlots is HYBRID_KEYWORD_SLOTS: how many of the best lexical
	// matches keep a place among the top_k (0 turns it off).
	KeywordSlots int
	// NoLexical and NoVector turn a channel off (the evaluation runs each
	// alone).
	NoLexical, NoVector bool
}

// defaultDepth is a channel's depth for a small top_k.
const defaultDepth = 50

// DefaultParams returns the defaults: the spec's provisional fusion and
// cosine marks for a model without measured parameters, and the lexical
// channel's measured settings.
func DefaultParams() Params {
	return Params{RRFK: 60, LexicalWeight: 1, VectorWeight: 1, ContractsVectorWeight: -1, EFSearch: 100,
		ConfidenceHigh: 0.6, ConfidenceMedium: 0.45, MinSimilarity: 0.25,
		K1: 1.2, B: 0.4, PhraseBoost: 0.5, CodeBoost: 1, CommonTermShare: 0.5,
		PruneFraction: 0.05, PruneMinChunks: 1000,
		ImpactPerTerm: 2000, ImpactCandidates: 300, ImpactPhraseLimit: 1000,
		DocTermDiscount: 1, DocContext: 1, ClauseWords: 0.8, LexicalByLayer: true,
		KeywordSlots: 1}
}

// WithModel returns p with the model's measured values from
// model_search_params.
func (p Params) WithModel(m store.ModelParams) Params {
	p.RRFK, p.LexicalWeight, p.VectorWeight, p.EFSearch = m.RRFK, m.LexicalWeight, m.VectorWeight, m.EFSearch
	p.ContractsVectorWeight = -1
	if m.ContractsVectorWeight != nil {
		p.ContractsVectorWeight = *m.ContractsVectorWeight
	}
	p.ConfidenceHigh, p.ConfidenceMedium, p.MinSimilarity = m.ConfidenceHigh, m.ConfidenceMedium, m.MinSimilarity
	return p
}

// vectorWeight is the fusion weight of a vector hit in the given layer:
// ContractsVectorWeight when the layer has the contracts preset (contracts
// holds their ids) and a weight of its own is set, else VectorWeight.
func (p Params) vectorWeight(layerID int64, contracts map[int64]bool) float64 {
	if p.ContractsVectorWeight >= 0 && contracts[layerID] {
		return p.ContractsVectorWeight
	}
	return p.VectorWeight
}

func (p Params) depth(topK int) int {
	if p.Depth > 0 {
		return p.Depth
	}
	return max(defaultDepth, 4*topK)
}
