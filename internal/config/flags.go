package config

import (
	"flag"
	"fmt"
	"io"
)

// ParseInterleaved parses flags that may come before or after positional
// arguments (ingestd add DIR --layer NAME) and returns the positionals in
// order. Errors are the flag package's, flag.ErrHelp included.
func ParseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// Usage is a verb's synopsis and what it does.
type Usage = [2]string

// NewFlagSet returns the flag set of prog's verb: it reports errors instead
// of exiting, and its -h prints the verb's synopsis (usage[verb]; "prog verb
// [flags]" when it has none), what it does and its flags.
func NewFlagSet(prog, verb string, usage map[string]Usage, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(prog+" "+verb, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		u, ok := usage[verb]
		if !ok {
			u = Usage{prog + " " + verb + " [flags]", ""}
		}
		fmt.Fprintf(out, "Usage: %s\n", u[0])
		if u[1] != "" {
			fmt.Fprintf(out, "\n%s\n", u[1])
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(out, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}
