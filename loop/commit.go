package loop

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/config"
)

// Commit is the commit a run made of the agent's work when every blocking
// gate passed (on_success: commit).
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
}

// startTree is what a run notes of the tree when it starts, for
// on_success: commit.
type startTree struct {
	// notClean says why the run's success cannot be committed, and how to
	// commit it instead; "" when the tree was clean.
	notClean string
	head     string // HEAD when the run started; "" for none
	git      bool   // the repository is a git work tree: later steps need not ask again
	leave    bool   // on_success: leave
}

// noteStartTree looks at the tree as the run starts: the agent's work is
// committed on success only when the tree outside the workspace directory
// was clean, so that no one else's changes go into the commit.
func (w Workspace) noteStartTree(ctx context.Context, cfg *config.Config) startTree {
	st := startTree{leave: cfg.OnSuccess != config.SuccessCommit}
	if st.leave {
		if st.git = w.inGit(ctx); !st.git {
			st.notClean = "not a git repository"
		}
		return st
	}
	// The status tells a work tree too: git is asked again only when it
	// fails.
	status, err := w.gitStatus(ctx)
	if err != nil {
		if st.git = w.inGit(ctx); !st.git {
			st.notClean = "not a git repository"
			return st
		}
		st.notClean = err.Error()
		return st
	}
	st.git, st.head = true, status.head
	if files := status.order; len(files) > 0 {
		st.notClean = fmt.Sprintf("the tree had uncommitted changes when the run started (%s), which a commit would mix with the agent's work: "+
			"review the changes and commit them yourself (git add -A && git commit), and start the next run from a clean tree", listSome(files, 3))
	}
	return st
}

// listSome lists the first n of names, and how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}

// commitSuccess commits the agent's work after every blocking gate passed,
// when the run started from a clean tree, with a message from the task
// and the issues the run resolved. The gates' byproducts (paths) stay out
// of it, in the tree. It returns the commit, or why there is none and how
// to make it.
func (w Workspace) commitSuccess(ctx context.Context, st startTree, runID, task string, resolved []Resolution, byproducts []string) (*Commit, string) {
	if st.leave {
		return nil, ""
	}
	if st.notClean != "" {
		return nil, "not committed: " + st.notClean
	}
	spec := w.outsideWorkspace()
	for _, name := range byproducts {
		spec = append(spec, ":(exclude,literal)"+name)
	}
	if _, err := w.git(ctx, append([]string{"add", "-A"}, spec...)...); err != nil {
		return nil, "not committed: " + err.Error() + "; commit by hand: git add -A && git commit"
	}
	if _, err := w.git(ctx, "diff", "--cached", "--quiet"); err == nil {
		head, _ := w.git(ctx, "rev-parse", "--verify", "-q", "HEAD")
		if h := strings.TrimSpace(head); h != st.head {
			return nil, "nothing left to commit: the agent committed its work itself (HEAD is now " + shortHash(h) + ")"
		}
		return nil, "nothing to commit: the tree is as the run found it"
	}
	subject, body := commitMessage(runID, task, resolved)
	if _, err := w.git(ctx, "commit", "-q", "-m", subject, "-m", body); err != nil {
		return nil, "not committed: " + err.Error() + "; the agent's work is staged: commit it by hand (git commit)"
	}
	head, _ := w.git(ctx, "rev-parse", "HEAD")
	return &Commit{Hash: shortHash(strings.TrimSpace(head)), Subject: subject}, ""
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// commitMessage is the message of a run's commit: the task's first line
// (or the issues it fixed) as the subject, at most 72 characters; the
// issues it resolved and the run in the body.
func commitMessage(runID, task string, resolved []Resolution) (subject, body string) {
	subject, _, _ = strings.Cut(strings.TrimSpace(task), "\n")
	subject = strings.TrimSpace(subject)
	if subject == "" {
		var ids []string
		for _, r := range resolved {
			ids = append(ids, r.ID)
		}
		subject = "Fix " + listSome(ids, 3)
		if len(ids) == 0 {
			subject = "orchestrate run " + runID
		}
	}
	if utf8.RuneCountInString(subject) > 72 {
		subject = string([]rune(subject)[:71]) + "…"
	}
	var b strings.Builder
	if len(resolved) > 0 {
		b.WriteString("Resolved issues:\n")
		for _, r := range resolved {
			fmt.Fprintf(&b, "- %s: %s\n", r.ID, r.Summary)
		}
		b.WriteString("\n")
	}
	b.WriteString("Every blocking quality gate passes.\n\nOrchestrate-Run: " + runID)
	return subject, b.String()
}
