// Package keyfile reads a secret key file, creating it once when it does
// not exist. Several processes that start at once (queryd behind a load
// balancer) all end up with the same key: the file is written under a
// temporary name and linked into place, so it is never seen half-written,
// and whoever links first wins.
package keyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadOrCreate returns the contents of path. When path does not exist, it
// creates it (mode 600, its folder 700) with what fresh returns; when
// another process created it meanwhile, that process's contents are
// returned instead.
func ReadOrCreate(path string, fresh func() ([]byte, error)) ([]byte, error) {
	b, err := os.ReadFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return b, err
	}
	b, err = fresh()
	if err != nil {
		return nil, fmt.Errorf("new key for %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(f.Name(), path)
	}
	if errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return b, nil
}
