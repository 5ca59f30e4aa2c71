package loop

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

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

// pruneLoops removes, from dir, a directory that gathers the gate logs of
// loop after loop (runs/norun/: the gates run outside any session), the
// logs of loops older than the keep newest, next being the loop about to
// be written: runs/ keeps keep runs, and this keeps keep of its loops. A
// keep of 0 keeps every loop. Only regular files named as orchestrate
// names a loop's log go.
func pruneLoops(dir string, next, keep int) {
	if keep <= 0 || next <= keep {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := loopOfLog(e.Name()); n > 0 && n <= next-keep && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// loopOfLog is the loop a gate log's name says it is of: N for
// "<gate>.loopN.log", 1 for "<gate>.log", 0 for a name that is no log.
func loopOfLog(name string) int {
	base, ok := strings.CutSuffix(name, ".log")
	if !ok || base == "" {
		return 0
	}
	if i := strings.LastIndex(base, ".loop"); i >= 0 {
		if n, err := strconv.Atoi(base[i+len(".loop"):]); err == nil && n > 1 {
			return n
		}
	}
	return 1
}

// pruneBaselines keeps the keep newest baselines in runs/baseline/ (each
// a <key>.json and its logs' directory <key>/), by the time they were
// taken, and removes the others: one is taken for each commit the work
// starts from, so they would gather without end. A keep of 0 keeps every
// one.
func (w Workspace) pruneBaselines(keep int) {
	dir := filepath.Join(w.Path(RunsDir), BaselineDir)
	if keep <= 0 || fsx.CheckDir(dir) != nil {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type taken struct {
		key string
		mod int64
	}
	var all []taken
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if info, err := e.Info(); ok && err == nil && e.Type().IsRegular() {
			all = append(all, taken{key, info.ModTime().UnixNano()})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].mod != all[j].mod {
			return all[i].mod > all[j].mod
		}
		return all[i].key > all[j].key
	})
	for _, t := range all[min(keep, len(all)):] {
		os.Remove(filepath.Join(dir, t.key+".json"))
		os.RemoveAll(filepath.Join(dir, t.key))
	}
}
