package config

import "flag"

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
