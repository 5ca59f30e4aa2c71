//go:build !unix

package gate

// orchestrate runs on Unix only (Linux, macOS, the BSDs): it runs each gate
// in a process group of its own and ends the whole group on a timeout or an
// interrupt (setpgid, kill(-pgid)), which Windows does not have. On Windows,
// use WSL. This line stops the build there with this message, first, as the
// file name sorts before the others:
var _ = orchestrate_is_Unix_only__it_runs_gates_in_process_groups__use_WSL_on_Windows
