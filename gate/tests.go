package gate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// maxReportFile is the largest report file read; a larger one is not, and
// the output is read instead.
const maxReportFile = 64 << 20

// testResults returns a command gate's test-level results: those of its
// report file when it names one that this run wrote and that reads as
// JUnit XML or go test -json, else those its whole output (which tests
// read as it streamed) gives. Why a report file was not read goes to the
// gate's log.
func testResults(g config.Gate, r *Result, tests *results.Reader, dir string, began time.Time, opt signature.Options) *results.Report {
	text := tests.Report(r.Failed())
	if g.Report == "" {
		return &text
	}
	rep, why := readReportFile(g.Name, filepath.Join(dir, g.Report), began, r.Failed(), opt)
	switch {
	case why != "":
		noteInLog(r.LogPath, fmt.Sprintf("orchestrate: the report %s was not read (%s): the test results are read from the output", g.Report, why))
		return &text
	case rep.Whole && r.Failed():
		return &text // the report lists no failure: the output may say more
	}
	return &rep
}

// readReportFile reads the report file path, which the gate's run that
// began at began must have written; why says why it could not.
func readReportFile(gate, path string, began time.Time, failed bool, opt signature.Options) (results.Report, string) {
	f, err := os.Open(path)
	if err != nil {
		return results.Report{}, "it could not be opened: " + err.Error()
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return results.Report{}, err.Error()
	case info.ModTime().Before(began.Add(-time.Second)):
		return results.Report{}, "this run did not write it: it is older than the run"
	case info.Size() > maxReportFile:
		return results.Report{}, fmt.Sprintf("it is larger than %d MiB", maxReportFile>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxReportFile))
	if err != nil {
		return results.Report{}, err.Error()
	}
	rep, err := results.ReadReport(gate, data, failed, opt)
	if err != nil {
		return results.Report{}, err.Error()
	}
	return rep, ""
}

// noteInLog adds a line to the end of a gate's log, when it has one.
func noteInLog(logPath, note string) {
	if logPath == "" {
		return
	}
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, note)
}
