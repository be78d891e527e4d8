// Package question parses a question once into what the stages of a search
// read: the clause references it names, the document numbers it writes and
// its words folded for matching titles. Routing, retrieval, the names check
// and the status rules read this value instead of parsing the text again.
package question

import "github.com/stratakb/stratakb/structure"

// Question is one question, parsed.
type Question struct {
	// Text is the question as written.
	Text string
	// References are the clause references it names ("clause 7.2",
	// "Article 41", a bare "4.3.2"), in order (structure.ParseReferences).
	References []structure.Reference
	// Numbers are the series numbers it writes that may name a document
	// ("PEP 572", "RFC 5321"; structure.NamedNumbers).
	Numbers []structure.NamedNumber
	// Folded is Text in lower case, runs of letters and digits one space
	// apart, with a space at each end; TitleKeys the runs of its words as
	// documents' title keys (structure.TitleKeys).
	Folded    string
	TitleKeys []string
	// Parties are the words of the proper names it writes, such as a
	// contract's parties ("Cano Petroleum", "Boyd"), folded to lower-case
	// letters and digits ("cano", "petroleum", "boyd"); see properNames.
	Parties []string
	// Described are the words of the phrase a section reference is "of"
	// ("ts", "sci", "clearance", "upgrade", "process" of "section 7 of the
	// TS/SCI clearance upgrade process"); see descriptor.
	Described []string
	// PartyGroups are its proper names outside quotes, one group of folded
	// words per name ("cisco" | "tech", "data" of "the Cisco–Tech Data
	// agreement"); see partyGroups.
	PartyGroups [][]string
	// Wants is the kind of value it asks for when its form can be told
	// in text (an amount of money, a percentage; see Wants).
	Wants Want
	// Versioned are the terms it writes with a number that picks a
	// version ("HTTP/3", "preview 2"; see VersionedTerms).
	Versioned []Versioned
	// Rows are the table rows it names by kind and key ("warning 318";
	// see RowKeys).
	Rows []RowKey
}

// Parse parses text.
func Parse(text string) *Question {
	return &Question{
		Text:        text,
		References:  structure.ParseReferences(text),
		Numbers:     structure.NamedNumbers(text),
		Folded:      " " + structure.FoldWords(text) + " ",
		TitleKeys:   structure.TitleKeys(text),
		Parties:     properNames(text),
		Described:   descriptor(text),
		PartyGroups: partyGroups(text),
		Wants:       Wants(text),
		Versioned:   VersionedTerms(text),
		Rows:        RowKeys(text),
	}
}

// Explicit reports whether the question names a section explicitly
// ("Article 41", "section 8.7"), not only by a bare number.
func (q *Question) Explicit() bool {
	for _, r := range q.References {
		if r.Explicit() {
			return true
		}
	}
	return false
}

// NumberKeys are the keys of Numbers ("pep 572"), in order.
func (q *Question) NumberKeys() []string {
	out := make([]string, len(q.Numbers))
	for i, n := range q.Numbers {
		out[i] = n.Key
	}
	return out
}

// NumberAsWritten is the number of key as the question writes it ("PEP
// 572" for "pep 572"); "" when it writes none.
func (q *Question) NumberAsWritten(key string) string {
	for _, n := range q.Numbers {
		if n.Key == key {
			return n.Raw
		}
	}
	return ""
}
