package analytics

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Generate reads the history at historyPath and writes analytics.html to outPath.
// The history is read as a stream; the page replaces outPath atomically (a temporary
// file in the same directory, fsync, rename, fsync of the directory), so a reader sees
// the old page or the new one and a failure leaves the old one. A missing history
// gives a page that says there is no history yet.
func Generate(historyPath, outPath string) error {
	m, err := computeFile(historyPath)
	if err != nil {
		return err
	}
	opt := RenderOptions{Source: historyPath, Generated: time.Now()}
	return writeAtomic(outPath, func(w *bufio.Writer) error { return Render(w, m, opt) })
}

// computeFile is Compute on a file; a missing file gives nil Metrics.
func computeFile(path string) (*Metrics, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading history: %w", err)
	}
	defer f.Close()
	m, err := Compute(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func writeAtomic(path string, write func(*bufio.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 256<<10)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	return nil
}
