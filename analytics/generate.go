package analytics

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
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
	if err := fsx.WriteFileFunc(outPath, 0o644, func(w io.Writer) error { return Render(w, m, opt) }); err != nil {
		return fmt.Errorf("writing analytics: %w", err)
	}
	return nil
}

// computeFile is Compute on a file; a missing file gives nil Metrics.
func computeFile(path string) (*Metrics, error) {
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
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
