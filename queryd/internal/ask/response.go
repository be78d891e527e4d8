package ask

import "github.com/stratakb/stratakb/queryd/internal/route"

// Citation is where a passage comes from. replaced_by and archived appear
// only when they apply; date and date_source are null when the document has
// no date.
type Citation struct {
	File       string  `json:"file"`
	Page       *int    `json:"page"`
	Lines      string  `json:"lines"`
	ClausePath string  `json:"clause_path"`
	Layer      string  `json:"layer"`
	Date       *string `json:"date"`
	DateSource *string `json:"date_source"`
	ReplacedBy string  `json:"replaced_by,omitempty"`
	Archived   bool    `json:"archived,omitempty"`
}

// Passage is one passage handed back: the document's own text, the span
// ref names, and its citation.
type Passage struct {
	ID       string   `json:"id"`
	Ref      string   `json:"ref"`
	Text     string   `json:"text"`
	Citation Citation `json:"citation"`
	// Match is "exact" for a section the question names, MatchNames for
	// the part of a returned passage's document that holds names the
	// question gives and the other passages lack.
	Match string `json:"match,omitempty"`
	// Cut marks a named clause handed back from its start only.
	Cut bool `json:"cut,omitempty"`
	// OutsideRouting marks a passage that came in only through a routing
	// fallback, from a layer routing had not chosen.
	OutsideRouting bool `json:"outside_routing,omitempty"`
}

// RoutingFallback says that the routed layers gave too little and every
// layer was searched.
type RoutingFallback struct {
	Reason         string `json:"reason"`
	SearchedLayers string `json:"searched_layers"`
}

// RetrievedChunk is one candidate of the merged list, in a detailed
// response.
type RetrievedChunk struct {
	ChunkID int64  `json:"chunk_id"`
	Ref     string `json:"ref"`
	Layer   string `json:"layer"`
	File    string `json:"file"`
	// Score is the merged rank score, the best at 1.0; RerankScore the
	// reranker's probability (absent without reranking); Similarity the
	// cosine to the question.
	Score       float64  `json:"score"`
	RerankScore *float64 `json:"rerank_score,omitempty"`
	Similarity  float64  `json:"similarity"`
	// Returned says whether it came back as a passage (its id), or why not.
	Passage string `json:"passage,omitempty"`
	Explain string `json:"explain"`
}

// SourceScore is one returned passage's file with the score confidence was
// judged on (rerank_score with reranking, the similarity without).
type SourceScore struct {
	Passage        string  `json:"passage"`
	File           string  `json:"file"`
	Layer          string  `json:"layer"`
	RelevanceScore float64 `json:"relevance_score"`
}

// Marks are the status marks a detailed response judged its passages on.
type Marks struct {
	High   float64 `json:"high"`
	Medium float64 `json:"medium"`
}

// Response is strata_ask's answer. A concise one has the answer's status in
// Status; a detailed one has status "ok", the answer's status in
// AnswerStatus and everything below Detailed.
type Response struct {
	Status       string    `json:"status"`
	AnswerStatus string    `json:"answer_status,omitempty"`
	Mode         string    `json:"mode"`
	Passages     []Passage `json:"passages"`
	Notes        []string  `json:"notes,omitempty"`
	NextStep     string    `json:"next_step,omitempty"`
	Warning      string    `json:"warning,omitempty"`
	// InteractionID identifies this answer for strata_feedback; absent
	// with learning off.
	InteractionID string `json:"interaction_id,omitempty"`
	// Answer is an extractive answer's sentences and ReceiptID its receipt,
	// both absent when no sentence is returned (see extractive.go).
	Answer    []AnswerSentence `json:"answer,omitempty"`
	ReceiptID string           `json:"receipt_id,omitempty"`

	// Detailed only.
	Confidence      string           `json:"confidence,omitempty"`
	Basis           string           `json:"basis,omitempty"`
	Marks           *Marks           `json:"marks,omitempty"` // on Basis's scale; absent with basis none
	QueryVariants   []string         `json:"query_variants,omitempty"`
	SearchedLayers  []string         `json:"searched_layers,omitempty"`
	RoutingFallback *RoutingFallback `json:"routing_fallback,omitempty"`
	// Routing says, when routing chose the layers (the question named
	// none), what chose each: a pattern, a learned affinity or the
	// description.
	Routing         []route.Why      `json:"routing,omitempty"`
	RetrievedChunks []RetrievedChunk `json:"retrieved_chunks,omitempty"`
	Sources         []SourceScore    `json:"sources,omitempty"`
	// Degraded says what did not run as configured (no reranker, no query
	// vector) and what that changed.
	Degraded []string `json:"degraded,omitempty"`
}
