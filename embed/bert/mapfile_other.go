//go:build !unix

package bert

import "errors"

// mapFile cannot map files here: the cached graph is opened from its path.
func mapFile(string) ([]byte, func() error, error) {
	return nil, nil, errors.New("files are not mapped on this system")
}
