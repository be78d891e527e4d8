//go:build unix

package bert

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps path read-only into memory and returns its bytes and the
// function that unmaps them. The pages come from the page cache, shared
// with every other process that maps the file.
func mapFile(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 || st.Size() != int64(int(st.Size())) {
		return nil, nil, fmt.Errorf("map %s: size %d", path, st.Size())
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}
