package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// buildVersion is what the binary knows of its own build: the module version
// (v1.2.3 from go install …@v1.2.3, a pseudo-version or "(devel)" from a
// checkout) and the VCS revision, its time and whether the tree had changes,
// which go build stamps into binaries built in a git checkout.
type buildVersion struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readBuildVersion() buildVersion {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildVersion{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	return versionOf(bi)
}

// versionOf reads bi (see buildVersion).
func versionOf(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Version: bi.Main.Version, Go: bi.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	v.Platform = goos + "/" + goarch
	return v
}

// String is the one line of orchestrate --version:
//
//	orchestrate v1.2.3 (rev 0123456789ab, 2026-01-21T10:30:00Z, modified) go1.26.0 linux/amd64
func (v buildVersion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "orchestrate %s", v.Version)
	var vcs []string
	if v.Revision != "" {
		vcs = append(vcs, "rev "+v.Revision[:min(len(v.Revision), 12)])
	}
	if v.Time != "" {
		vcs = append(vcs, v.Time)
	}
	if v.Modified {
		vcs = append(vcs, "modified")
	}
	if len(vcs) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(vcs, ", "))
	}
	fmt.Fprintf(&b, " %s %s", v.Go, v.Platform)
	return b.String()
}

func printVersion(e *env) error {
	v := readBuildVersion()
	if e.json {
		return e.printJSON(v)
	}
	_, err := fmt.Fprintln(e.stdout, v)
	return err
}

var versionCmd = &command{
	name:    "version",
	summary: "print the version, the VCS revision and the Go toolchain of this build",
	usage: `Usage: orchestrate version [--json]
       orchestrate --version

Prints the module version of this build (v1.2.3 when installed with
go install …@v1.2.3; a pseudo-version, or (devel), when built from a
checkout), the git revision it was built from with its commit time and
"modified" when the tree had uncommitted changes, then the Go version and
the platform:

  orchestrate v1.2.3 (rev 0123456789ab, 2026-01-21T10:30:00Z) go1.26.0 linux/amd64

With --json: {"version": "…", "revision": "…", "time": "…", "modified": bool,
"go": "…", "platform": "…"} (revision, time and modified only when known).

Exit codes: 0 printed, 2 usage.
`,
	run: func(e *env, args []string) error {
		if err := e.parseNone(e.flags("version"), args); err != nil {
			return err
		}
		return printVersion(e)
	},
}
