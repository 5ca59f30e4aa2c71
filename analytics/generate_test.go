package analytics

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

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

// generate makes the page of the history at historyPath, as the command
// does: a missing history is none.
func generate(historyPath, outPath string) error {
	var srcs []Source
	f, err := fsx.OpenFile(historyPath, os.O_RDONLY, 0)
	switch {
	case err == nil:
		defer f.Close()
		srcs = append(srcs, Source{Name: historyPath, R: bufio.NewReaderSize(f, 256<<10)})
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("reading history: %w", err)
	}
	_, err = Generate(srcs, outPath, RenderOptions{Source: historyPath, Generated: time.Now()})
	return err
}
