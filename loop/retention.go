package loop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// pruneRuns keeps the keep newest runs in runs/ (by the time their
// directory last changed, current always kept) and removes the others. A
// keep of 0 keeps every run. A runs/ that is a symbolic link is left alone
// and reported. The caller holds the lock.
func (w Workspace) pruneRuns(keep int, current string) error {
	if keep <= 0 {
		return nil
	}
	runs := w.Path(RunsDir)
	if err := fsx.CheckDir(runs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	entries, err := os.ReadDir(runs)
	if err != nil {
		return err
	}
	type run struct {
		name string
		mod  int64
	}
	var all []run
	for _, e := range entries {
		if e.Name() == current || e.Name() == BaselineDir {
			continue // the baselines are kept by tree, not by run
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		all = append(all, run{e.Name(), info.ModTime().UnixNano()})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].mod != all[j].mod {
			return all[i].mod > all[j].mod
		}
		return all[i].name > all[j].name
	})
	keep-- // the current run's place, made now or soon
	var first error
	for i := max(keep, 0); i < len(all); i++ {
		// RemoveAll removes a symbolic link, never what it points at.
		if err := os.RemoveAll(filepath.Join(runs, all[i].name)); err != nil && first == nil {
			first = fmt.Errorf("removing an old run: %w", err)
		}
	}
	return first
}
