// Package schema holds the domain types shared by both daemons and the
// database schema: the SQL migrations of the product, embedded in the binary
// and applied together with River's own migrations.
//
// Offsets. Every span in StrataKB (a page, a section, a chunk, a ref such as
// d42:1830-1905) is a pair of byte offsets into the document's stored text,
// which is UTF-8. Start is inclusive and End exclusive, so text[Start:End]
// reads the span back exactly. Line numbers are 1-based lines of the stored
// text, which for Markdown, plain text, CSV and TSV are the file's own line
// numbers.
package schema
