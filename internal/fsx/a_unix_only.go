//go:build !unix

package fsx

// orchestrate runs on Unix only (see gate/a_unix_only.go): its file locks
// and no-follow opens are Unix calls. This line stops the build of this
// package, which may be compiled before gate, with the same message.
var _ = orchestrate_is_Unix_only__it_runs_gates_in_process_groups__use_WSL_on_Windows
