//go:build !unix

package fsx

// orchestrate runs on Unix only (Linux, macOS, the BSDs): its files are
// opened without following links and locked with flock, which Windows does
// not have. On Windows, use WSL. This line stops the build there with this
// message, first, as the file name sorts before the others:
var _ = orchestrate_is_Unix_only__it_runs_gates_in_process_groups__use_WSL_on_Windows
