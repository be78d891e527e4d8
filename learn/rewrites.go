package learn

import (
	"slices"
	"strings"
	"time"
)

// RewriteRule is the version of the rewrite and affinity rules stored with
// each learned rewrite and affinity; rows of an older version stop being
// applied and are deleted on the promoter's next run. Version 2 (issue 27,
// item 2) wants a proof to share a term with the weak question, to be
// settled, and two proofs; rewrites of version 1 (one follow-up of any
// kind) stop being applied at once. Affinities, whose rule did not
// change, share the version and are learned again on the next run.
const RewriteRule = 2

// Tuning of proven rewrites and layer affinities (docs/learning.md).
const (
	// LikeJaccard is how close two questions' terms (Terms) must be for
	// one to count as "like" the other: the share of their distinct terms
	// that both hold. 0.75 takes the same terms, and the same terms with
	// one added or left out once a question has three or more.
	LikeJaccard = 0.75
	// MinRewriteProofs is how often a rewording must have been proven
	// before it is learned. A proof is a rewording that shares a content
	// word with a weak question (Shares), was answered, and was settled: it
	// was rated helpful, or the caller did not reword again within
	// RephraseWindow. Two, not one: one follow-up after a miss may be a new
	// question on another subject, and a rewrite learned from it would
	// bring that subject's passages to every question like the first
	// (issue 27, item 2). The cost: a rewrite is learned only once a
	// second rewording (by another caller, or the same caller later) shows
	// the same thing.
	MinRewriteProofs = 2
	// RewriteStale drops a rewrite that was neither proven nor used with
	// success for this long.
	RewriteStale = 14 * 24 * time.Hour
	// MaxRewrites bounds the learned rewrites one question gets.
	MaxRewrites = 2
	// AffinityMinScore and AffinityMinShare: affinity routes a question
	// only when the leading layer's score (Affinity) is at least
	// AffinityMinScore and at least AffinityMinShare of the question's
	// terms' count.
	AffinityMinScore = 2.0
	AffinityMinShare = 0.4
)

// Stem strips the commonest English endings ("payments" meets "payment",
// "routing" meets "rout"), no real stemmer but the same on both sides of
// every comparison the learning loop makes.
func Stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "es") && strings.ContainsAny(w[len(w)-3:len(w)-2], "sxz"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

// Terms returns what a question is about for rewrites and affinities: its
// content words (ContentWords), stemmed, sorted, each once.
func Terms(s string) []string {
	var out []string
	for _, w := range ContentWords(s) {
		out = append(out, Stem(w))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Like says whether two questions' terms (Terms, sorted) are close enough
// for a rewrite learned from one to serve the other: at least LikeJaccard
// of their distinct terms are shared.
func Like(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	shared := 0
	for _, t := range a {
		if _, ok := slices.BinarySearch(b, t); ok {
			shared++
		}
	}
	return float64(shared) >= LikeJaccard*float64(len(a)+len(b)-shared)
}

// Shares says whether two questions' terms (Terms, sorted) have at least
// one term in common: a rewording that shares none is another question,
// and teaches nothing.
func Shares(a, b []string) bool {
	for _, t := range a {
		if _, ok := slices.BinarySearch(b, t); ok {
			return true
		}
	}
	return false
}

// Weak says whether a recorded answer missed: strata_ask's not_found, or a
// low confidence (strata_search's too).
func Weak(status, confidence string) bool {
	return status == "not_found" || confidence == "low"
}

// Answered says whether a recorded answer found something: an answer that
// reached the medium mark, strata_ask's found or partly_found and a
// strata_search with medium or high confidence. (strata_ask's found alone
// counted while its high mark was 0.8; at the 0.85 or more chosen for issue 26 a
// reworded question answered in the documents' own words often stops at
// partly_found, and a proof that turns out wrong is dropped by its failed
// uses.)
func Answered(tool, status, confidence string) bool {
	if tool == "strata_search" {
		return confidence == "medium" || confidence == "high"
	}
	return status == "found" || status == "partly_found"
}

// Evidence is what the promoter learned of one term's layer.
type Evidence struct {
	Term, Layer string
	Count       int
}

// AffinityScores scores each layer for a question's terms: each term
// gives its evidence shared out over the layers it was seen with
// (evidence of the layer over all its evidence), so a term seen with one
// layer only gives that layer 1 and a term seen everywhere little to any.
func AffinityScores(terms []string, ev []Evidence) map[string]float64 {
	in := map[string]bool{}
	for _, t := range terms {
		in[t] = true
	}
	total := map[string]int{}
	for _, e := range ev {
		if in[e.Term] && e.Count > 0 {
			total[e.Term] += e.Count
		}
	}
	out := map[string]float64{}
	for _, e := range ev {
		if in[e.Term] && e.Count > 0 {
			out[e.Layer] += float64(e.Count) / float64(total[e.Term])
		}
	}
	return out
}
