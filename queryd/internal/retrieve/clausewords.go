package retrieve

import (
	"regexp"
	"strings"
)

// Contract questions and contract clauses rarely share their words: people
// ask "which law governs the agreement?", the clause says "shall be
// construed in accordance with the laws of the State of New York"; they ask
// "can it be ended early without a breach?", the clause says "either party
// may terminate upon thirty days' prior written notice for any reason". No
// local embedding model bridges that gap (issue 12, class 1: the right
// clause sat in the named contract's top 10 but not first). clauseTopics is
// a small built-in thesaurus of how agreements word the clauses people ask
// about: when a question asks about one (its trigger), the words such
// clauses are drafted in are added to the lexical query at a low weight
// (Params.ClauseWords), so that among the named contract's chunks the one
// drafted like that clause comes first. It was written from the common
// drafting of commercial agreements, not from the evaluation's passages;
// the weight was chosen on the evaluation's train split
// (docs/retrieval.md).
//
// A learned synonym or rewrite (the learning loop) covers the wording of
// one deployment; this covers the clause types every contract has.
type clauseTopic struct {
	name    string
	trigger *regexp.Regexp
	words   string
}

var clauseTopics = []clauseTopic{
	{"governing law", regexp.MustCompile(`\b(?:govern(?:s|ed|ing)?\b.*\blaws?|laws?\b.*\b(?:govern|appl(?:y|ies))|jurisdiction|choice of law|applicable law)`),
		"governed construed interpreted accordance laws state conflict principles"},
	{"termination for convenience", regexp.MustCompile(`\b(?:convenience|without (?:a )?(?:cause|breach|reason)|for any reason|end it early|terminate early)`),
		"terminate termination convenience reason cause prior written notice days"},
	{"assignment", regexp.MustCompile(`\bassign(?:s|ed|ing|ment)?\b|\btransfer`),
		"assign assignment transfer delegate consent prior written successors"},
	{"term and expiry", regexp.MustCompile(`\b(?:expir(?:e|es|y|ation)|initial term|how long|duration|when does .* end)\b`),
		"term commence effective date continue until expire expiration years period"},
	{"renewal", regexp.MustCompile(`\brenew`),
		"renew renewal automatically successive additional extend term unless notice"},
	{"liability cap", regexp.MustCompile(`\b(?:cap|liab(?:le|ility)|damages)\b`),
		"liability limitation aggregate exceed amount paid event liable damages"},
	{"audit", regexp.MustCompile(`\b(?:audit|inspect)`),
		"audit books records inspect examine accounts access"},
	{"licence grant", regexp.MustCompile(`\blicen[cs]e\b.*\bgrant|\bgrant.*\blicen[cs]e`),
		"grants license right exclusive nonexclusive royalty perpetual worldwide use"},
	{"insurance", regexp.MustCompile(`\binsur`),
		"insurance policy coverage maintain insured liability"},
	{"exclusivity", regexp.MustCompile(`\bexclusiv`),
		"exclusive exclusively sole solely"},
	{"non-compete", regexp.MustCompile(`\b(?:non-?compet|compete|competing|competition)`),
		"compete competitive competing engage business similar"},
	{"minimum commitment", regexp.MustCompile(`\b(?:minimum|volume commitment|at least)\b`),
		"minimum least purchase order quantity volume"},
	{"revenue sharing", regexp.MustCompile(`\b(?:revenues?|profits?|royalt)`),
		"revenue share percent net profits royalty receipts"},
	{"survival", regexp.MustCompile(`\b(?:after .* ends|after termination|continue after|survive|post-termination)`),
		"survive survival termination expiration continue obligations"},
	{"change of control", regexp.MustCompile(`\b(?:change of control|merger|acquir|acquisition)`),
		"control merger acquisition change assets"},
	{"non-solicitation", regexp.MustCompile(`\b(?:solicit|hire)`),
		"solicit hire employ employees induce"},
	{"warranty", regexp.MustCompile(`\bwarrant`),
		"warranty warrants period months defects"},
}

// ClauseWords returns the drafting words of the clause types the question
// asks about, "" when it asks about none.
func ClauseWords(question string) string {
	q := strings.ToLower(question)
	var out []string
	for _, t := range clauseTopics {
		if t.trigger.MatchString(q) {
			out = append(out, t.words)
		}
	}
	return strings.Join(out, " ")
}
