package chunker

import (
	"strings"
	"testing"

	"github.com/stratakb/stratakb/schema"
	"github.com/stratakb/stratakb/structure"
)

// TestSubsectionFirstSentence is issue 12 class 9: a chunk that starts in one
// section and runs into the next must not end inside it, or the next
// section's first sentences are chunked under the section before.
func TestSubsectionFirstSentence(t *testing.T) {
	long := strings.Repeat("The provider keeps the service running at all hours of the day. ", 12)
	for name, text := range map[string]string{
		"text": "1 Scope\n\nThis agreement covers hosting.\n\n2 Service\n\n2.1 Hours\n\nSupport is open on weekdays.\n\n" +
			"2.2 Availability\n\nThe service is available every day of the year. " + long + "\n\n2.3 Credits\n\nCredits are paid monthly.\n",
		"markdown": "# Agreement\n\n## 1 Scope\n\nThis agreement covers hosting.\n\n## 2 Service\n\n### 2.1 Hours\n\nSupport is open on weekdays.\n\n" +
			"### 2.2 Availability\n\nThe service is available every day of the year. " + long + "\n\n### 2.3 Credits\n\nCredits are paid monthly.\n",
	} {
		format := schema.FormatText
		if name == "markdown" {
			format = schema.FormatMarkdown
		}
		doc := &schema.ParsedDoc{Text: text, Format: format}
		secs := structure.Parse(text, 0, format)
		chunks := Chunk(doc, secs, Options{Size: 400})
		first := strings.Index(text, "The service is available")
		for _, c := range chunks {
			if c.Start <= first && first < c.End && !strings.HasSuffix(c.ClausePath, "2.2 Availability") {
				t.Errorf("%s: the first sentence of 2.2 is in a chunk with clause path %q: %q", name, c.ClausePath, c.Text)
			}
			// No chunk ends inside a section that starts inside it.
			for _, s := range secs {
				lead := c.Start + len(c.Text) - len(strings.TrimLeft(c.Text, " \n"))
				if s.Start > lead && s.Start < c.End && s.End > c.End && strings.TrimSpace(text[c.End:s.End]) != "" {
					t.Errorf("%s: chunk %d (%q) ends inside %q, which starts inside it", name, c.Ordinal, c.ClausePath, s.Path)
				}
			}
		}
	}
}
