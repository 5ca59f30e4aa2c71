package analytics

import (
	"fmt"
	"io"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// Generate reads the histories as one (ComputeAll) and writes
// analytics.html to outPath, with opt's Source naming them; no history
// makes a page that says there is none yet. The histories are read as
// streams; the page replaces outPath atomically (a temporary file in the
// same directory, fsync, rename, fsync of the directory), so a reader sees
// the old page or the new one and a failure leaves the old one. It returns
// the page's numbers, nil for no history.
func Generate(srcs []Source, outPath string, opt RenderOptions) (*Metrics, error) {
	var m *Metrics
	if len(srcs) > 0 {
		var err error
		if m, err = ComputeAll(srcs); err != nil {
			return nil, err
		}
	}
	if opt.Generated.IsZero() {
		opt.Generated = time.Now()
	}
	if err := fsx.WriteFileFunc(outPath, 0o644, func(w io.Writer) error { return Render(w, m, opt) }); err != nil {
		return nil, fmt.Errorf("writing analytics: %w", err)
	}
	return m, nil
}
