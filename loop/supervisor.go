package loop

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// RunLogFile is the file in a run's directory (runs/<run-id>/) where the
// run notes what a person should know of how it ran: that its commands
// ran without their supervisor.
const RunLogFile = "run.log"

// supervisorNoted is done once this process has said that its commands run
// without their supervisor: said once, for the first run directory.
var supervisorNoted sync.Once

// noteSupervisor says, once in this process, on the terminal (Notify) and
// in dir's run.log, that the commands this process starts cannot run under
// their supervisor, and why, when they cannot.
func (w Workspace) noteSupervisor(dir string) {
	problem := gate.SupervisorProblem()
	if problem == "" {
		return
	}
	supervisorNoted.Do(func() {
		if w.Notify != nil {
			w.Notify("warning: " + problem)
		}
		f, err := fsx.OpenFile(filepath.Join(dir, RunLogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return
		}
		f.WriteString("warning: " + problem + "\n")
		f.Close()
	})
}
