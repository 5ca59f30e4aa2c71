package loop

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// workState is where a work tree stands, for the resume prompt, read with
// one git process (git status) and no object written: HEAD, and for each
// path git status lists (one that differs from HEAD or from the index, or
// that git does not track; not ignored; outside the workspace directory),
// its content in the work tree as git would hash it. A path git status
// does not list is in the work tree as it is in HEAD.
type workState struct {
	head  string
	paths map[string]workPath
	order []string // the paths in git's order
}

// workPath is a listed path: what its content is in the work tree, and
// what it is in HEAD (which a path not listed has in the work tree).
type workPath struct {
	mode, blob         string // in the work tree; "0" and "" when it is not there
	headMode, headBlob string // in HEAD; "000000" and "" for none
	status             string // git's XY and submodule fields: a submodule's state
}

// readWorkState reads the work tree's state; false when git fails.
func (w Workspace) readWorkState(ctx context.Context) (workState, bool) {
	st, err := w.gitStatus(ctx)
	if err != nil {
		return workState{}, false
	}
	for name, p := range st.paths {
		p.mode, p.blob = blobOf(filepath.Join(w.Root(), filepath.FromSlash(name)))
		if p.blob == "" && len(p.status) > 3 && p.status[3] == 'S' {
			// A submodule: its state is what git status says of it.
			p.mode, p.blob = "160000", p.status
		}
		st.paths[name] = p
	}
	return st, true
}

// gitStatus runs git status: HEAD and the paths it lists, their content
// in the work tree not read.
func (w Workspace) gitStatus(ctx context.Context) (workState, error) {
	args := append([]string{"--no-optional-locks", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--no-renames"}, w.outsideWorkspace()...)
	out, err := w.git(ctx, args...)
	if err != nil {
		return workState{}, err
	}
	st, ok := parseWorkStatus(out)
	if !ok {
		return workState{}, fmt.Errorf("git status: output not understood")
	}
	return st, nil
}

// parseWorkStatus reads git status --porcelain=v2 -z --branch: HEAD, and
// the paths listed with their HEAD side (the work tree's is filled in by
// the caller); false on a record it does not know.
func parseWorkStatus(out string) (workState, bool) {
	st := workState{paths: map[string]workPath{}}
	add := func(name string, p workPath) {
		if _, ok := st.paths[name]; !ok {
			st.order = append(st.order, name)
		}
		st.paths[name] = p
	}
	recs := strings.Split(out, "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		switch {
		case rec == "":
		case strings.HasPrefix(rec, "# branch.oid "):
			if oid := strings.TrimPrefix(rec, "# branch.oid "); oid != "(initial)" {
				st.head = oid
			}
		case strings.HasPrefix(rec, "# "):
		case strings.HasPrefix(rec, "? "):
			add(rec[2:], workPath{headMode: "000000"})
		case strings.HasPrefix(rec, "1 "), strings.HasPrefix(rec, "2 "):
			// 1 XY sub mH mI mW hH hI path; 2 adds a score, and the
			// original path follows as a record of its own.
			n := 9
			if rec[0] == '2' {
				n = 10
			}
			f := strings.SplitN(rec, " ", n)
			if len(f) != n {
				return workState{}, false
			}
			add(f[n-1], workPath{headMode: f[3], headBlob: f[6], status: f[1] + " " + f[2]})
			if rec[0] == '2' {
				if i++; i >= len(recs) {
					return workState{}, false
				}
				add(recs[i], workPath{headMode: f[3], headBlob: f[6], status: f[1] + " " + f[2]})
			}
		case strings.HasPrefix(rec, "u "):
			// u XY sub m1 m2 m3 mW h1 h2 h3 path: a conflict; HEAD's side
			// is "ours", stage 2.
			f := strings.SplitN(rec, " ", 11)
			if len(f) != 11 {
				return workState{}, false
			}
			add(f[10], workPath{headMode: f[4], headBlob: f[8], status: f[1] + " " + f[2]})
		default:
			return workState{}, false
		}
	}
	return st, true
}

// blobOf returns a path's mode and content in the work tree as git would
// record them: a file's blob ID (its executable bit in the mode), a
// symbolic link's target's; "0" and "" when there is none, or a directory
// (a nested repository) whose content git status reports itself.
func blobOf(path string) (mode, blob string) {
	info, err := os.Lstat(path)
	if err != nil || info.IsDir() {
		return "0", ""
	}
	h := sha1.New()
	switch {
	case info.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return "0", ""
		}
		io.WriteString(h, "blob "+strconv.Itoa(len(target))+"\x00"+target)
		return "120000", hex.EncodeToString(h.Sum(nil))
	case info.Mode().IsRegular():
		f, err := os.Open(path)
		if err != nil {
			return "0", ""
		}
		defer f.Close()
		io.WriteString(h, "blob "+strconv.FormatInt(info.Size(), 10)+"\x00")
		if n, err := io.Copy(h, f); err != nil || n != info.Size() {
			return "0", "" // changing as it is read: not a state to trust
		}
		mode = "100644"
		if info.Mode()&0o111 != 0 {
			mode = "100755"
		}
		return mode, hex.EncodeToString(h.Sum(nil))
	}
	return "0", ""
}

// changedSince returns the paths whose content in the work tree differs
// between two states of the same HEAD, sorted.
func changedSince(was, now workState) []string {
	var names []string
	content := func(st workState, other workPath, name string) (string, string) {
		if p, ok := st.paths[name]; ok {
			return p.mode, p.blob
		}
		// Not listed: as in HEAD, which the other state's entry names.
		if other.headBlob == "" || strings.Trim(other.headBlob, "0") == "" {
			return "0", ""
		}
		return other.headMode, other.headBlob
	}
	seen := map[string]bool{}
	for _, st := range []workState{was, now} {
		for name, p := range st.paths {
			if seen[name] {
				continue
			}
			seen[name] = true
			m1, b1 := content(was, p, name)
			m2, b2 := content(now, p, name)
			if m1 != m2 || b1 != b2 {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}
