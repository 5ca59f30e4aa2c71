package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/results"
)

// BaselineDir, under runs/, keeps the baselines: the gates' results on a
// commit some work started from, one file per tree and gates' config,
// <tree>-<gates>.json, with the gates' logs of it in <tree>-<gates>/.
const BaselineDir = "baseline"

// maxBaseline bounds a kept baseline read back.
const maxBaseline = 64 << 20

// BaseResults are the gates' results on the commit some work starts from:
// what an attempt at one issue is judged against (see results.Judge).
type BaseResults struct {
	Reports []results.Report
	// Taken is true when the gates ran for it now; false when it was kept
	// from before.
	Taken bool
}

// baselineKey names the baseline of tree under the gates of cfg: a change
// of the gates' config takes a new one.
func baselineKey(tree string, cfg *config.Config) string {
	data, _ := json.Marshal(cfg.Gates)
	sum := sha256.Sum256(data)
	return tree + "-" + hex.EncodeToString(sum[:8])
}

// KeptBaseline returns the baseline kept for the tree (a git tree's
// hash) under the workspace's gates, if there is one.
func (w Workspace) KeptBaseline(tree string) (*BaseResults, bool) {
	cfg, err := w.Config()
	if err != nil || tree == "" {
		return nil, false
	}
	data, _, err := fsx.ReadFileMax(filepath.Join(w.Path(RunsDir), BaselineDir, baselineKey(tree, cfg)+".json"), maxBaseline)
	if err != nil {
		return nil, false
	}
	var reports []results.Report
	if json.Unmarshal(data, &reports) != nil {
		return nil, false
	}
	return &BaseResults{Reports: reports}, true
}

// TakeBaseline returns the baseline of tree (a git tree's hash), checked
// out clean at dir: the one kept for it, or else its gates run there now
// and kept. The gates that run are the blocking ones that run a command,
// every one of them (fail_fast does not stop the others): a review's
// reviewers and a person's approval are not asked for a baseline.
func (w Workspace) TakeBaseline(ctx context.Context, now func() time.Time, tree, dir string) (*BaseResults, error) {
	if b, ok := w.KeptBaseline(tree); ok {
		return b, nil
	}
	cfg, err := w.Config()
	if err != nil {
		return nil, err
	}
	var gates []config.Gate
	for _, g := range cfg.Gates {
		if !g.IsHuman() && !g.IsReview() && (g.Enforcement == "" || g.Enforcement == config.Blocking) {
			g.FailFast = false
			gates = append(gates, g)
		}
	}
	key := baselineKey(tree, cfg)
	logs, err := w.RunDir(filepath.Join(BaselineDir, key))
	if err != nil {
		return nil, err
	}
	in := w.InTree(dir)
	ev, err := gate.Evaluate(ctx, gates, gate.Options{
		RepoRoot: dir, Roots: in.checkouts(), LogDir: logs, Output: cfg.Output,
		Parallelism: cfg.Parallelism, Now: now, DiffExclude: in.diffExclude(),
	})
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // gates cut short are no baseline
	}
	b := &BaseResults{Reports: reportsOf(ev), Taken: true}
	if cut := cutShort(ev); cut != "" {
		w.warn(fmt.Errorf("the baseline of tree %.12s is not kept: the gate %s", tree, cut))
		return b, nil
	}
	data, err := json.MarshalIndent(b.Reports, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := fsx.WriteFile(filepath.Join(w.Path(RunsDir), BaselineDir, key+".json"), data, 0o644); err != nil {
		return nil, fmt.Errorf("keeping the baseline: %w", err)
	}
	w.pruneBaselines(cfg.KeepRuns)
	return b, nil
}

// cutShort names the first blocking gate of ev that timed out or could
// not run, and why, or returns "": a baseline with one is used by the run
// that took it, not kept for the next, as its results are not the tree's.
func cutShort(ev *gate.Evaluation) string {
	for i := range ev.Results {
		r := &ev.Results[i]
		if r.Enforcement() == config.Blocking && (r.Outcome == gate.TimedOut || r.Outcome == gate.Errored) {
			return r.Name() + " " + r.Reason()
		}
	}
	return ""
}

// keepBaseline keeps the reports of ev as the baseline of tree, unless
// one is kept or a gate of ev was cut short (see cutShort).
func (w Workspace) keepBaseline(tree string, ev *gate.Evaluation, reports []results.Report) error {
	cfg, err := w.Config()
	if err != nil || tree == "" || cutShort(ev) != "" {
		return err
	}
	path := filepath.Join(w.Path(RunsDir), BaselineDir, baselineKey(tree, cfg)+".json")
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, err := w.RunDir(BaselineDir); err != nil {
		return err
	}
	data, err := json.MarshalIndent(reports, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFile(path, data, 0o644)
}
