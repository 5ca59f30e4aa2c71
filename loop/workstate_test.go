package loop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestWorkState: what the resume prompt says changed between two looks at
// a work tree is what git says changed between the trees of the two looks
// (written whole, with the tree state of the hook), for every kind of
// change; with one git status per look and no object written.
func TestWorkState(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, tc := range []struct {
		name   string
		change string // a shell script run between the two looks
	}{
		{"nothing", "true"},
		{"untracked file edited", "echo more >> u.txt"},
		{"untracked file added", "mkdir -p d/e && echo n > d/e/n.txt"},
		{"untracked file removed", "rm u.txt"},
		{"clean file edited", "echo more >> a.txt"},
		{"clean file touched", "touch -d '2001-01-01' a.txt"},
		{"dirty file put back", "git checkout -q b.txt"},
		{"dirty file edited", "echo more >> b.txt"},
		{"dirty file written the same", "cp b.txt b.tmp && mv b.tmp b.txt"},
		{"dirty file staged", "git add b.txt"},
		{"clean file removed", "rm a.txt"},
		{"executable bit", "chmod -x x.sh"},
		{"executable bit of a dirty file", "chmod +x b.txt"},
		{"link moved", "ln -sfn b.txt link"},
		{"workspace written", "echo x >> .orchestrator/queue.md"},
		{"ignored file", "echo x > build.log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sh := func(script string) {
				t.Helper()
				cmd := exec.Command("sh", "-c", script)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", script, err, out)
				}
			}
			sh(`git init -q && echo a > a.txt && echo b > b.txt && printf '#!/bin/sh\n' > x.sh && chmod +x x.sh &&
ln -s a.txt link && echo '*.log' > .gitignore && mkdir .orchestrator && echo q > .orchestrator/queue.md &&
git add a.txt b.txt x.sh link .gitignore && git commit -q -m start && echo dirty >> b.txt && echo u > u.txt`)
			w := Workspace{Dir: filepath.Join(dir, DefaultDir)}
			ctx := context.Background()
			was, ok1 := w.readWorkState(ctx)
			treeWas, ok2 := w.treeState(ctx)
			sh(tc.change)
			now, ok3 := w.readWorkState(ctx)
			treeNow, ok4 := w.treeState(ctx)
			if !ok1 || !ok2 || !ok3 || !ok4 {
				t.Fatal("a state could not be read")
			}
			want := []string(nil)
			if treeWas.Tree != treeNow.Tree {
				out, err := w.git(ctx, "diff", "--name-only", treeWas.Tree, treeNow.Tree)
				if err != nil {
					t.Fatal(err)
				}
				want = strings.Fields(out)
			}
			if got := changedSince(was, now); !reflect.DeepEqual(got, want) {
				t.Errorf("changed: %q; git says %q", got, want)
			}
			if was.head != treeWas.Head || now.head != treeNow.Head {
				t.Errorf("heads %s, %s; git says %s, %s", was.head, now.head, treeWas.Head, treeNow.Head)
			}
		})
	}
}

// FuzzParseWorkStatus: any output of git status is read or refused,
// without a panic, and a path read is one the output names.
func FuzzParseWorkStatus(f *testing.F) {
	f.Add("# branch.oid (initial)\x00# branch.head main\x00? u.txt\x00")
	f.Add("# branch.oid 9823069c63e304eca14faef47bd591bc433f9895\x001 .M N... 100644 100644 100644 3b18e512dba79e4c8300dd08aeb37f8e728b8dad 3b18e512dba79e4c8300dd08aeb37f8e728b8dad b.txt\x00")
	f.Add("2 R. N... 100644 100644 100644 3b18e512dba79e4c8300dd08aeb37f8e728b8dad 3b18e512dba79e4c8300dd08aeb37f8e728b8dad R100 new name\x00old name\x00")
	f.Add("u UU N... 100644 100644 100644 100644 aaaa bbbb cccc c.txt\x00")
	f.Add("1 .M S.M. 160000 160000 160000 aaaa aaaa sub\x00")
	f.Fuzz(func(t *testing.T, out string) {
		st, ok := parseWorkStatus(out)
		if !ok {
			return
		}
		for name := range st.paths {
			if !strings.Contains(out, name) {
				t.Errorf("path %q is not in the output", name)
			}
		}
	})
}
