package ask

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/internal/dbtest"
	"github.com/stratakb/stratakb/internal/ingesttest"
	"github.com/stratakb/stratakb/jobs"
	"github.com/stratakb/stratakb/queryd/internal/retrieve"
	"github.com/stratakb/stratakb/queryd/internal/store"
)

// The fixtures of issue 26's rules: documents a question names, sections
// that do not exist, and names that do not decide.

func pepText(num int, title, body string) string {
	return fmt.Sprintf("PEP: %d\nTitle: %s\nAuthor: Someone <someone@example.org>\nStatus: Final\nType: Standards Track\n"+
		"Created: 13-Feb-2009\n\n\nAbstract\n========\n\n%s\n", num, title, body)
}

// regulation has Articles 1 to 40 and no annexes; one article cites
// another act's Article 41.
func regulation() string {
	var b strings.Builder
	b.WriteString("# Data Portability Regulation\n\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "## Article %d\n\nThe controller shall keep record %d of the processing for the supervisory authority.\n\n", i, i)
	}
	b.WriteString("## Article 41\n\nNothing here.\n\n")
	s := b.String()
	// Drop the 41st heading again: the regulation ends at Article 40, and
	// its Article 12 cites another act's Article 41.
	s = s[:strings.LastIndex(s, "## Article 41")]
	return strings.Replace(s, "record 12 of the processing", "record 12 of the processing as Article 41 of the Cloud Act requires", 1)
}

func TestHonestStatuses(t *testing.T) {
	pool, url := dbtest.NewPool(t)
	peps := writeFolder(t, "peps", map[string]string{
		"pep-0380.rst": pepText(380, "Syntax for Delegating to a Subgenerator",
			"A syntax is proposed for a generator to delegate part of its operations to another generator: yield from."),
		"pep-0525.rst": pepText(525, "Asynchronous Generators",
			"PEP 380 introduced yield from; PEP 380 semantics are not supported in asynchronous generators, "+
				"and this proposal does not change what PEP 380 proposes for generators. "+
				"PEP 479 changed how StopIteration raised inside generators is handled."),
	})
	// A blog: one post of four is a release note ("go 1.24"), the others
	// mention versions that are no documents.
	blog := writeFolder(t, "blog", map[string]string{
		"go1.24.md":     "# Go 1.24 is released\n\nGo 1.24 brings generic type aliases.\n",
		"gomaxprocs.md": "# Container-aware GOMAXPROCS\n\nFrom Go 1.5 on, GOMAXPROCS defaulted to the number of CPU cores.\n",
		"modules.md":    "# Using modules\n\nA module is a collection of packages.\n",
		"testing.md":    "# Testing tips\n\nTable tests keep cases together.\n",
	})
	regs := writeFolder(t, "regs", map[string]string{"data-portability.md": regulation()})
	deals := writeFolder(t, "deals", map[string]string{
		"hosting-agreement.md": "# Hosting Agreement\n\n## 1 Services\n\nThe provider hosts the web site.\n\n" +
			"## Annex III\n\nAnnex III lists the supervisory contacts and the record of processing of the provider.\n",
	})
	var rows strings.Builder
	rows.WriteString("standard,code,currency\n")
	for i, c := range []string{"EUR,Euro", "USD,US Dollar", "JPY,Yen", "GBP,Pound Sterling", "CHF,Swiss Franc", "NOK,Norwegian Krone"} {
		fmt.Fprintf(&rows, "ISO 4217,%s\n", c)
		_ = i
	}
	codes := writeFolder(t, "codes", map[string]string{"currencies.csv": rows.String()})
	supply := writeFolder(t, "supply", map[string]string{
		"acme-beta.md": "# Supply agreement\n\nThis agreement is made between Acme Widgets Ltd and Beta Logistics GmbH.\n\n" +
			"## 1 Term\n\nIt runs for two years.\n\n## 2 Price\n\nThe price is fixed.\n\n## 3 Notice\n\nNotice is given in writing.\n",
		"gamma-delta.md": "# Supply agreement\n\nThis agreement is made between Gamma Foods Inc and Delta Freight Ltd.\n\n" +
			"## 1 Term\n\nIt runs for one year.\n\n## 9 Liability\n\nLiability for late delivery is capped at the freight paid.\n",
	})
	guides := writeFolder(t, "guides", map[string]string{
		"clearance.md": "# Security clearance\n\nHow to ask for a clearance upgrade: the upgrade process.\n\n" +
			"## 1. Request\n\nYour supervisor files the request.\n\n## 2. Review\n\nSecurity reviews it.\n\n## 3. Decision\n\nYou are told the outcome.\n",
		"awards.md": "# Awards\n\nHow an award is made.\n\n## 6. Evaluation\n\nThe panel scores the bids.\n\n" +
			"## 7. Award prep\n\nThe team prepares the award and its notice.\n",
	})
	countries := writeFolder(t, "countries", map[string]string{
		"countries.csv": "Country,Capital,Dial\nNorway,Oslo,47\nAntarctica,,672\nBouvet Island,,47\n",
		// A second table without a Dial column: a fund is a currency's
		// entity, in no row of the countries.
		"currencies.csv": "Entity,Currency,Alphabetic Code\nArab Monetary Fund,Arab Accounting Dinar,XAD\nNorway,Norwegian Krone,NOK\n",
	})
	// A page that says a percentage is withheld without saying which, and
	// one that gives a rate; a price only in a passage on other words.
	benefits := writeFolder(t, "benefits", map[string]string{
		"retirement.md": "# Retirement\n\n## Pension\n\nA percentage of each paycheck is withheld for the pension plan.\n\n" +
			"## Social security\n\nSocial security withholding takes 6.2 percent of each paycheck.\n",
		"tools.md": "# Tools\n\n## Video calls\n\nEach licensed video call account is bought by the team, one per user per year.\n\n" +
			"## Recruiting\n\nRecruiting participants for one video call averaged $125 each.\n",
	})
	web := writeFolder(t, "web", map[string]string{
		"h2push.md": "# HTTP/2 Server Push\n\nThe net/http package supports HTTP/2 server push through the Pusher interface; HTTP/1.1 has no push.\n",
	})
	// A notice shares the question's other words; only the coins page
	// names the Guilder, and matches the question poorly.
	money := writeFolder(t, "money", map[string]string{
		"notices.md": "# Notices\n\nThis proposal was withdrawn from circulation when its author left.\n",
		"coins.md":   "# Coins\n\nThe Guilder was a coin of the Netherlands.\n",
		"stamps.md":  "# Stamps\n\nStamps are printed each spring.\n",
	})
	// A code list whose rows share no word of four letters or more with
	// the question but the code itself.
	gateway := writeFolder(t, "gateway", map[string]string{
		"codes.md": "# Gateway codes\n\n## Warning codes\n\n| Code | Meaning |\n|---|---|\n" +
			"| 305 | Bank identifier unknown |\n| 318 | Remittance text too long |\n| 509 | Screening still running |\n\n" +
			"## Status codes\n\n| Code | Meaning |\n|---|---|\n| ACCP | Accepted for settlement |\n| RJCT | Rejected |\n",
		"intro.md": "# About the gateway\n\nWhat the gateway says to senders, and when it says it.\n",
	})
	opt := ingesttest.Options{Vectorizer: jobs.SingleVector(bow{})}
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "peps", Root: peps, RoutingPatterns: []string{"PEP"}}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "regs", Root: regs, RoutingPatterns: []string{"regulation"}}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "deals", Root: deals, RoutingPatterns: []string{"agreement"}}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "codes", Root: codes, RoutingPatterns: []string{"currency"}}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "supply", Root: supply}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "countries", Root: countries}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "guides", Root: guides}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "blog", Root: blog}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "benefits", Root: benefits}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "web", Root: web}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "money", Root: money}, opt)
	ingesttest.Ingest(t, pool, jobs.Layer{Name: "gateway", Root: gateway}, opt)
	ctx := context.Background()
	st, err := store.OpenCorpus(ctx, dbtest.QuerydURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	a := New(Options{Engine: retrieve.New(st, retrieve.Options{Embedder: bow{}, KeywordSlots: 1}), Docs: st,
		Reranker: Texts{overlap{}}})

	t.Run("DocumentNamedByNumber", func(t *testing.T) {
		// pep-0525 says "PEP 380" three times; pep-0380 only in its header.
		for _, layers := range [][]string{nil, {"peps"}} {
			r := ask(t, a, Request{Question: "What does PEP 380 propose?", Layers: layers, ResponseFormat: FormatDetailed})
			if len(r.Passages) == 0 || r.Passages[0].Citation.File != "pep-0380.rst" {
				t.Errorf("layers %v: passages %q, want pep-0380.rst first", layers, files(r))
			}
		}
		r := ask(t, a, Request{Question: "What does PEP 380 propose?", ResponseFormat: FormatDetailed})
		if len(r.Routing) == 0 || r.Routing[0].By != "document" || r.Routing[0].Layer != "peps" {
			t.Errorf("routing %+v, want the peps layer by document", r.Routing)
		}
	})
	t.Run("DocumentNamedByTitle", func(t *testing.T) {
		r := ask(t, a, Request{Question: "What are the semantics of Asynchronous Generators?", Layers: []string{"peps"}})
		if len(r.Passages) == 0 || r.Passages[0].Citation.File != "pep-0525.rst" {
			t.Errorf("passages %q, want pep-0525.rst first", files(r))
		}
	})
	t.Run("ArticlePastTheEnd", func(t *testing.T) {
		for _, layers := range [][]string{nil, {"regs"}, {"regs", "deals"}} {
			r := ask(t, a, Request{Question: "What does Article 41 of the Data Portability Regulation require?", Layers: layers})
			if r.Status != string(NotFound) {
				t.Errorf("layers %v: status %s, want not_found (passages %q)", layers, r.Status, files(r))
			}
			if !hasNote(r, "has no Article 41", "articles are 1–40") {
				t.Errorf("layers %v: notes %q, want what the regulation has", layers, r.Notes)
			}
		}
	})
	t.Run("AnnexItLacks", func(t *testing.T) {
		// Routed to the regulation, whose layer has no annexes, while the
		// hosting agreement has an Annex III: never the agreement's.
		for _, layers := range [][]string{nil, {"regs", "deals"}} {
			r := ask(t, a, Request{Question: "What does Annex III of the Data Portability Regulation list about the supervisory record of processing?", Layers: layers, ResponseFormat: FormatDetailed})
			if r.AnswerStatus != string(NotFound) {
				t.Errorf("layers %v: status %s, want not_found", layers, r.AnswerStatus)
			}
			for _, p := range r.Passages {
				if p.Match == "exact" {
					t.Errorf("layers %v: exact passage from %s", layers, p.Citation.File)
				}
			}
			if !hasNote(r, "has no Annex III", "no annexes") {
				t.Errorf("layers %v: notes %q", layers, r.Notes)
			}
		}
	})
	t.Run("SectionThatExists", func(t *testing.T) {
		r := ask(t, a, Request{Question: "What does Article 12 of the Data Portability Regulation require?"})
		if r.Status != string(Found) || len(r.Passages) == 0 || r.Passages[0].Match != "exact" ||
			!strings.Contains(r.Passages[0].Text, "record 12") {
			t.Errorf("status %s, passages %q, want Article 12 exact and found", r.Status, files(r))
		}
	})
	t.Run("DocumentTheLayersLack", func(t *testing.T) {
		// The peps layer holds PEP 380 and PEP 525; no passage mentions
		// PEP 484.
		r := ask(t, a, Request{Question: "What does PEP 484 propose for generators?", Layers: []string{"peps"}})
		if r.Status != string(NotFound) || !hasNote(r, "PEP 484, which is not among the documents searched", "PEP 380, PEP 525") {
			t.Errorf("status %s, notes %q", r.Status, r.Notes)
		}
		// PEP 479 is mentioned by PEP 525, yet the layer, all PEPs, does
		// not have it: the question is about a document that is not there.
		r = ask(t, a, Request{Question: "What does PEP 479 change about StopIteration in generators?", Layers: []string{"peps"}})
		if r.Status != string(NotFound) || !hasNote(r, "PEP 479, which is not among the documents searched", "only mention") {
			t.Errorf("a PEP only mentioned: status %s, notes %q", r.Status, r.Notes)
		}
		// PEP 380 is mentioned by PEP 525's text but is a document too:
		// no such note.
		ok := ask(t, a, Request{Question: "What does PEP 380 propose?", Layers: []string{"peps"}})
		if hasNote(ok, "not among the documents searched") {
			t.Errorf("a document the layer has: notes %q", ok.Notes)
		}
	})
	t.Run("VersionMentionedIsNoDocument", func(t *testing.T) {
		// One post of the blog's four is named "go 1.24"; Go 1.5 is no
		// document, and the post that mentions it answers.
		r := ask(t, a, Request{Question: "What did GOMAXPROCS default to from Go 1.5 on?", Layers: []string{"blog"}})
		if r.Status == string(NotFound) || hasNote(r, "not among the documents searched") {
			t.Errorf("status %s, notes %q, passages %q", r.Status, r.Notes, files(r))
		}
	})
	t.Run("SectionOfADocumentNamedByItsParties", func(t *testing.T) {
		r := ask(t, a, Request{Question: "What does section 9 of the Acme–Beta supply agreement say about liability?", Layers: []string{"supply"}})
		if r.Status != string(NotFound) || !hasNote(r, "acme-beta.md has no section 9") {
			t.Errorf("status %s, passages %q, notes %q: want not_found, not Gamma–Delta's section 9", r.Status, files(r), r.Notes)
		}
		ok := ask(t, a, Request{Question: "What does section 9 of the Gamma–Delta supply agreement say about liability?", Layers: []string{"supply"}})
		if ok.Status != string(Found) || len(ok.Passages) == 0 || ok.Passages[0].Citation.File != "gamma-delta.md" {
			t.Errorf("status %s, passages %q: want gamma-delta.md's section 9", ok.Status, files(ok))
		}
	})
	t.Run("SectionOfADocumentDescribed", func(t *testing.T) {
		// No title, number or party names clearance.md; the words the
		// question describes it with do, and it has no section 7: not the
		// award guide's section 7.
		r := ask(t, a, Request{Question: "What happens in section 7 of the clearance upgrade process?", Layers: []string{"guides"}})
		if r.Status != string(NotFound) || !hasNote(r, "clearance.md has no section 7", "1–3") {
			t.Errorf("status %s, passages %q, notes %q: want not_found, not awards.md's section 7", r.Status, files(r), r.Notes)
		}
		ok := ask(t, a, Request{Question: "What happens in section 7 of the award guide?", Layers: []string{"guides"}})
		if ok.Status != string(Found) || len(ok.Passages) == 0 || ok.Passages[0].Citation.File != "awards.md" {
			t.Errorf("status %s, passages %q: want awards.md's section 7", ok.Status, files(ok))
		}
	})
	t.Run("ATableRowWithoutTheColumnAsked", func(t *testing.T) {
		// Antarctica's row is there, its Capital is empty: not answered.
		r := ask(t, a, Request{Question: "What is the capital of Antarctica?", Layers: []string{"countries"}})
		if r.Status != string(NotFound) || !hasNote(r, `"antarctica"`, `"Capital"`, "countries.csv line 3") {
			t.Errorf("status %s, notes %q: want not_found, the row without a Capital named", r.Status, r.Notes)
		}
		ok := ask(t, a, Request{Question: "What is the capital of Norway?", Layers: []string{"countries"}})
		if ok.Status == string(NotFound) || hasNote(ok, "do not give it") {
			t.Errorf("a row with the value: status %s, notes %q", ok.Status, ok.Notes)
		}
	})
	t.Run("AColumnOnlyAnotherTableHas", func(t *testing.T) {
		// top_k 1: the countries' table does not come back; the rows that
		// do are all in a table without the column.
		r := ask(t, a, Request{Question: "Which dial does the Arab Monetary Fund use?", Layers: []string{"countries"}, TopK: 1})
		if r.Status != string(NotFound) || !hasNote(r, `"arab monetary fund"`, `without a "Dial" column`, "no row of countries.csv") {
			t.Errorf("status %s, notes %q, passages %q: want not_found, the fund's row is in a table without Dial", r.Status, r.Notes, files(r))
		}
		// Norway is a row of both tables: the countries' row gives it.
		ok := ask(t, a, Request{Question: "Which dial does Norway use?", Layers: []string{"countries"}, TopK: 1})
		if ok.Status == string(NotFound) || hasNote(ok, "do not give it") {
			t.Errorf("a row of the table with the column: status %s, notes %q, passages %q", ok.Status, ok.Notes, files(ok))
		}
	})
	t.Run("PartiesNoDocumentHoldsTogether", func(t *testing.T) {
		// Acme and Delta are each in a supply agreement, never in one.
		r := ask(t, a, Request{Question: "Does the supply agreement between Acme and Delta cap liability for late delivery?", Layers: []string{"supply"}})
		if r.Status != string(NotFound) || !hasNote(r, `holds the names "acme" and "delta" together`) {
			t.Errorf("status %s, notes %q: want not_found, no document holds both parties", r.Status, r.Notes)
		}
		ok := ask(t, a, Request{Question: "Does the supply agreement between Gamma and Delta cap liability for late delivery?", Layers: []string{"supply"}})
		if ok.Status == string(NotFound) || hasNote(ok, "together") {
			t.Errorf("parties of one agreement: status %s, notes %q", ok.Status, ok.Notes)
		}
	})
	t.Run("BasisOfANamedClauseAlone", func(t *testing.T) {
		// top_k 1: the named article fills it, nothing is left to rerank;
		// the basis is still the reranker's (issue 27, item 13).
		r := ask(t, a, Request{Question: "What does Article 12 of the Data Portability Regulation require?", TopK: 1,
			ResponseFormat: FormatDetailed})
		if len(r.Passages) != 1 || r.Passages[0].Match != "exact" || r.Confidence != "high" || r.Basis != "rerank" {
			t.Errorf("passages %q, confidence %s, basis %s; want the article, high, rerank", files(r), r.Confidence, r.Basis)
		}
	})
	t.Run("CommonNameDoesNotDecide", func(t *testing.T) {
		// Every row holds "ISO 4217"; the code XQZ is in none.
		r := ask(t, a, Request{Question: "Which currency has the ISO 4217 code XQZ?", Layers: []string{"codes"}})
		if r.Status != string(NotFound) {
			t.Errorf("status %s, want not_found; notes %q", r.Status, r.Notes)
		}
		if !hasNote(r, "XQZ") || hasNote(r, "ISO 4217, which") {
			t.Errorf("notes %q: want XQZ named as missing, not ISO 4217", r.Notes)
		}
		ok := ask(t, a, Request{Question: "Which currency has the ISO 4217 code NOK?", Layers: []string{"codes"}})
		if ok.Status == string(NotFound) {
			t.Errorf("a code in the list: status %s", ok.Status)
		}
	})
	t.Run("AValueNoPassageStates", func(t *testing.T) {
		r := ask(t, a, Request{Question: "What percentage of each paycheck is withheld for the pension plan?", Layers: []string{"benefits"}, TopK: 1})
		if r.Status != string(NotFound) || !hasNote(r, "asks for a percentage", "no returned passage states one") {
			t.Errorf("status %s, notes %q, passages %q: want not_found, the pension passage gives no percentage", r.Status, r.Notes, files(r))
		}
		ok := ask(t, a, Request{Question: "What percentage of each paycheck is withheld for social security?", Layers: []string{"benefits"}})
		if ok.Status == string(NotFound) || hasNote(ok, "asks for a percentage") {
			t.Errorf("a passage gives the rate: status %s, notes %q", ok.Status, ok.Notes)
		}
	})
	t.Run("AnotherVersionOnly", func(t *testing.T) {
		r := ask(t, a, Request{Question: "Does net/http support server push over HTTP/3?", Layers: []string{"web"}})
		if r.Status != string(NotFound) || !hasNote(r, "asks about HTTP/3", `give "http" only as 2, 1.1`) {
			t.Errorf("status %s, notes %q: want not_found, the passage is about HTTP/2", r.Status, r.Notes)
		}
		ok := ask(t, a, Request{Question: "Does net/http support server push over HTTP/2?", Layers: []string{"web"}})
		if ok.Status == string(NotFound) || hasNote(ok, "another version") {
			t.Errorf("the version the passage gives: status %s, notes %q", ok.Status, ok.Notes)
		}
	})
	t.Run("AValueOnlyAPoorPassageStates", func(t *testing.T) {
		// The video call passage matches the question best and gives no
		// price; the recruiting passage gives one and matches it poorly.
		r := ask(t, a, Request{Question: "How much does a licensed video call account cost per year?", Layers: []string{"benefits"}})
		if r.Status != string(NotFound) || !hasNote(r, "asks for an amount of money; the passages that state one score") {
			t.Errorf("status %s, notes %q, passages %q: want not_found by the recruiting passage's score", r.Status, r.Notes, files(r))
		}
	})
	t.Run("BestPassageOfADocumentWithoutTheName", func(t *testing.T) {
		r := ask(t, a, Request{Question: "When was the Guilder withdrawn from circulation?", Layers: []string{"money"}})
		if r.Status != string(NotFound) || !hasNote(r, `documents that hold "guilder" score`, "hold none of it") {
			t.Errorf("status %s, notes %q, passages %q: want not_found by the coins page's score", r.Status, r.Notes, files(r))
		}
	})
	t.Run("ARowTheQuestionNames", func(t *testing.T) {
		r := ask(t, a, Request{Question: "What does warning 318 say?", Layers: []string{"gateway"}})
		if r.Status != string(PartlyFound) || !hasNote(r, "holds the row of warning 318 the question names") {
			t.Errorf("status %s, notes %q, passages %q: want partly_found by the row", r.Status, r.Notes, files(r))
		}
		// An extractive answer quotes sentences, and a row is none: it is
		// left as it is.
		if r := ask(t, a, Request{Question: "What does warning 318 say?", Layers: []string{"gateway"}, Mode: ModeExtractive}); r.Status != string(NotFound) {
			t.Errorf("extractive: status %s, notes %q: want not_found", r.Status, r.Notes)
		}
		// A key no row has, and a row under another kind, change nothing.
		for _, q := range []string{"What does warning 999 say?", "What does status 318 say?"} {
			if r := ask(t, a, Request{Question: q, Layers: []string{"gateway"}}); r.Status != string(NotFound) {
				t.Errorf("%q: status %s, notes %q: want not_found", q, r.Status, r.Notes)
			}
		}
	})
}

// hasNote reports whether one note holds every part.
func hasNote(r *Response, parts ...string) bool {
	for _, n := range r.Notes {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(n, p)
		}
		if all {
			return true
		}
	}
	return false
}
