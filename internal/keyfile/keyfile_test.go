package keyfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestConcurrentCreateAgrees starts many creators of one missing file at
// once: every one must read back the same complete contents, the one that
// was linked first.
func TestConcurrentCreateAgrees(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "keys", "k.key")
		const n = 16
		got := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i], errs[i] = ReadOrCreate(path, func() ([]byte, error) {
					return bytes.Repeat([]byte(fmt.Sprintf("%02d", i)), 32), nil
				})
			}()
		}
		close(start)
		wg.Wait()
		disk, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(disk) != 64 {
			t.Fatalf("round %d: file holds %d bytes, want 64", round, len(disk))
		}
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d creator %d: %v", round, i, errs[i])
			}
			if !bytes.Equal(got[i], disk) {
				t.Fatalf("round %d creator %d read %q, the file holds %q", round, i, got[i], disk)
			}
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 600", st.Mode().Perm())
		}
		left, _ := os.ReadDir(filepath.Dir(path))
		if len(left) != 1 {
			t.Errorf("round %d: %d entries in the folder, want only the key", round, len(left))
		}
	}
}

func TestExistingFileIsRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(path, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := ReadOrCreate(path, func() ([]byte, error) { t.Fatal("fresh called for an existing file"); return nil, nil })
	if err != nil || string(b) != "abc\n" {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestFreshErrorIsReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	_, err := ReadOrCreate(path, func() ([]byte, error) { return nil, fmt.Errorf("no entropy") })
	if err == nil {
		t.Fatal("no error")
	}
	if _, serr := os.Stat(path); serr == nil {
		t.Error("file created after fresh failed")
	}
}
