package loop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

func gitInStdin(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// putSharedQueue makes data the shared queue on the bare remote, as a
// machine (or a person) that pushed it would: a commit whose tree holds it.
func putSharedQueue(t *testing.T, bare string, data []byte) string {
	t.Helper()
	blob := strings.TrimSpace(gitInStdin(t, bare, data, "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitInStdin(t, bare, []byte("100644 blob "+blob+"\t"+remote.QueueFile+"\n"), "mktree"))
	args := []string{"commit-tree", tree, "-m", "a queue pushed by hand"}
	if old := strings.TrimSpace(gitIn(t, bare, "for-each-ref", "--format=%(objectname)", remote.QueueRef)); old != "" {
		args = append(args, "-p", old)
	}
	sha := strings.TrimSpace(gitIn(t, bare, args...))
	gitIn(t, bare, "update-ref", remote.QueueRef, sha)
	return sha
}

// TestSyncRefusesACorruptSharedQueue: a shared queue with problems (an ID
// given twice) is not taken: the sync is refused with a line naming the
// ref, the clone's own queue is left as it was, and nothing is pushed on.
func TestSyncRefusesACorruptSharedQueue(t *testing.T) {
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	syncQueue(t, ws[0], rs[0])
	shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile) + "\n"
	i := strings.Index(shared, "## ISSUE-")
	corrupt := []byte(shared + "\n" + shared[i:])
	sha := putSharedQueue(t, bare, corrupt)

	addIssue(t, ws[1], ruleNow.Add(time.Minute), "machine 1")
	before, _ := os.ReadFile(ws[1].Path(QueueFile))
	err := ws[1].SyncQueue(ctx, rs[1])
	if err == nil || !strings.Contains(err.Error(), remote.QueueRef) || strings.Contains(strings.TrimSpace(err.Error()), "\n") {
		t.Fatalf("the sync with a corrupt shared queue: %v; want one line that names %s", err, remote.QueueRef)
	}
	after, _ := os.ReadFile(ws[1].Path(QueueFile))
	if !bytes.Equal(before, after) {
		t.Errorf("the clone's queue changed:\n%s\nwas\n%s", after, before)
	}
	if q := queue.Parse(after); len(q.Problems) > 0 {
		t.Errorf("the clone's queue has problems after the sync: %v", q.Problems)
	}
	if got := strings.TrimSpace(gitIn(t, bare, "rev-parse", remote.QueueRef)); got != sha {
		t.Errorf("the shared queue moved to %s: the clone pushed on what it was refused", got)
	}
	// Once the remote holds a good queue again, the sync goes through.
	putSharedQueue(t, bare, []byte(shared))
	if err := ws[1].SyncQueue(ctx, rs[1]); err != nil {
		t.Fatalf("the sync once the shared queue is repaired: %v", err)
	}
}
