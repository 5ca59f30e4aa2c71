package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// The pause after a lost push: in the upper half of a window that starts
// at 10 ms and doubles with each loss in a row, up to a second.
func TestLostPause(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{0, 0, 5 * ms},
		{0, 0.5, 7500 * time.Microsecond},
		{1, 0, 10 * ms},
		{6, 0, 320 * ms}, // 640 ms: the last window below the cap
		{6, 0.999999, 639999680 * time.Nanosecond},
		{7, 0, 500 * ms}, // 1280 ms, capped at a second
		{7, 0.999999, 999999500 * time.Nanosecond},
		{63, 0, 500 * ms}, // no overflow of the doubling
		{-1, 0, 500 * ms},
	} {
		if got := lostPause(c.n, c.r); got != c.want {
			t.Errorf("lostPause(%d, %v) = %v, want %v", c.n, c.r, got, c.want)
		}
	}
}

// A pause after a lost push ends with the run: an interrupt does not wait
// it out.
func TestPauseAfterLostEndsWithTheContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted")
	cancel(stop)
	if err := pauseAfterLost(ctx, 30); !errors.Is(err, stop) {
		t.Errorf("a pause in an interrupted run: %v, want %v", err, stop)
	}
}

// countPauses replaces the pause after a lost push, for the test, with
// one that notes each loss's count in a row and does not wait.
func countPauses(t *testing.T) *[]int {
	var ns []int
	old := pauseAfterLost
	pauseAfterLost = func(_ context.Context, n int) error {
		ns = append(ns, n)
		return nil
	}
	t.Cleanup(func() { pauseAfterLost = old })
	return &ns
}

// lostQueue is a pre-receive hook's script (see hook): the first n
// pushes of the queue are lost to another machine's (a commit on the one
// pushed from, made while the push was on its way); every push of the
// queue is counted in $GIT_DIR/pushes.
func lostQueue(n int) string {
	return `c=$(cat "$GIT_DIR/pushes" 2>/dev/null || echo 0)
while read old new ref; do
	[ "$ref" = ` + remote.QueueRef + ` ] || continue
	c=$((c+1)); echo $c > "$GIT_DIR/pushes"
	if [ $c -le ` + strconv.Itoa(n) + ` ]; then
		git update-ref "$ref" "$(git commit-tree "$old^{tree}" -p "$old" -m "another machine, $c")"
	fi
done
`
}

// pushes is how many pushes the hook of lostQueue or lostClaims counted.
func pushes(t *testing.T, bare string) int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(bare, "pushes"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// A sync whose pushes are lost to other machines' one after another,
// all but its last try, pauses after each loss, longer each time, and
// goes through.
func TestSyncLostAllButItsLastTry(t *testing.T) {
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	syncQueue(t, ws[0], rs[0])
	hook(t, bare, lostQueue(syncTries-1))
	pauses := countPauses(t)
	addIssue(t, ws[1], ruleNow.Add(time.Minute), "machine 1")
	if err := ws[1].SyncQueue(ctx, rs[1]); err != nil {
		t.Fatalf("a sync whose first %d pushes were lost: %v", syncTries-1, err)
	}
	if n := pushes(t, bare); n != syncTries {
		t.Errorf("%d pushes; want %d", n, syncTries)
	}
	want := make([]int, syncTries-1)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(*pauses, want) {
		t.Errorf("the pauses after the losses in a row: %v, want %v", *pauses, want)
	}
	if shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile); !strings.Contains(shared, "machine 1") {
		t.Errorf("the shared queue has no issue of machine 1:\n%s", shared)
	}
}

// A sync whose every push is lost gives up after syncTries, says so, and
// leaves the remote's queue to the others.
func TestSyncLostEveryTryGivesUp(t *testing.T) {
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	syncQueue(t, ws[0], rs[0])
	hook(t, bare, lostQueue(1000))
	pauses := countPauses(t)
	addIssue(t, ws[1], ruleNow.Add(time.Minute), "machine 1")
	err := ws[1].SyncQueue(ctx, rs[1])
	if want := fmt.Sprintf("every push lost to another machine's, %d times over", syncTries); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a sync whose every push was lost: %v; want %q", err, want)
	}
	if n := pushes(t, bare); n != syncTries {
		t.Errorf("%d pushes; want %d", n, syncTries)
	}
	if len(*pauses) != syncTries-1 {
		t.Errorf("%d pauses; want %d, one between each two pushes", len(*pauses), syncTries-1)
	}
	if shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile); strings.Contains(shared, "machine 1") {
		t.Errorf("the shared queue has the issue of a sync that gave up:\n%s", shared)
	}
}

// lostClaim is a pre-receive hook's script (see hook): every push of a
// claim is lost to another machine's record, record, a printf format
// given the issue's ID and twice the epoch the push was for (the one
// after the record pushed over: the new commit itself is not readable
// here); each push is counted in $GIT_DIR/pushes.
func lostClaim(record string) string {
	return `c=$(cat "$GIT_DIR/pushes" 2>/dev/null || echo 0)
while read old new ref; do
	case "$ref" in refs/orchestrate/claims/*) ;; *) continue ;; esac
	c=$((c+1)); echo $c > "$GIT_DIR/pushes"
	id=${ref#refs/orchestrate/claims/}
	e=$(git cat-file commit "$old" 2>/dev/null | sed -n 's/^Lease-Epoch: //p')
	e=$((${e:-0}+1))
	rec=$(printf '` + record + `' "$id" "$e" "$e" | git commit-tree "$(git mktree </dev/null)")
	git update-ref "$ref" "$rec"
done
`
}

// lostClaims (see lostClaim): the other machine took the issue over, and
// its lease lapsed at once, its holder on another machine: the issue is
// free again, and was let go by no one, so no sync is owed before it is
// claimed (see releasedSince).
var lostClaims = lostClaim(`orchestrate: %s claimed by x@elsewhere/1 at epoch %s\n\nClaimed-By: x@elsewhere/1\nClaimed-At: 2024-01-01T00:00:00Z\nLease-Epoch: %s\nLease-Until: 2024-01-01T00:01:00Z\n`)

// claim --next on a remote whose every push is lost: it pauses after
// each round lost, longer each time, and gives up after nextRounds of
// them, saying so.
func TestRemoteClaimLostEveryRoundGivesUp(t *testing.T) {
	bare, ws, rs := sharedClones(t, 1)
	hook(t, bare, lostClaims)
	pauses := countPauses(t)
	got, err := ws[0].Claims(rs[0]).Next(context.Background(), ruleNow, claim.Holder("a", os.Getpid()), time.Minute, nil)
	if want := fmt.Sprintf("every push lost to another machine's, %d times over", nextRounds); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("claim --next, every push lost: %+v, %v; want %q", got, err, want)
	}
	if n := pushes(t, bare); n != nextRounds {
		t.Errorf("%d pushes; want %d", n, nextRounds)
	}
	var want []int
	for i := range nextRounds - 1 {
		want = append(want, i)
	}
	if !slices.Equal(*pauses, want) {
		t.Errorf("the pauses after the rounds lost: %v, want %v", *pauses, want)
	}
}

// lostToRelease (see lostClaim): the other machine claimed the issue and
// let it go meanwhile.
var lostToRelease = lostClaim(`orchestrate: %s released at epoch %s\n\nClaimed-By: \nClaimed-At: \nLease-Epoch: %s\nLease-Until: \n`)

// claim --next on a remote whose every push is lost to a claim made and
// let go elsewhere: each time, the issue was let go after the queue's
// last sync, whose holder may have shared a resolution since, so the
// queue is synced before it is tried again (one push each try); after
// nextRounds tries the claim gives up, saying so, and claims nothing.
func TestRemoteClaimLetGoAfterEverySyncGivesUp(t *testing.T) {
	bare, ws, rs := sharedClones(t, 1)
	hook(t, bare, lostToRelease)
	countPauses(t)
	got, err := ws[0].Claims(rs[0]).Next(context.Background(), ruleNow, claim.Holder("a", os.Getpid()), time.Minute, nil)
	if want := fmt.Sprintf("let go on the remote after each sync of the queue, %d times over", nextRounds); err == nil || got != nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("claim --next, every push lost to a claim let go: %+v, %v; want %q", got, err, want)
	}
	if n := pushes(t, bare); n != nextRounds {
		t.Errorf("%d pushes; want %d, one each try", n, nextRounds)
	}
}
