package remote

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// The agents of one clone fetch the integration branch at once (one to
// start its work on it, the train to rebase onto it) while another
// machine moves it: each fetch gets a head, none stops on the lock of
// this clone's view of the branch (refs/remotes/origin/main).
func TestFetchBranchAtOnce(t *testing.T) {
	ctx := context.Background()
	_, m := machines(t, 2)
	other := m[1].dir
	commit := func(i int) {
		gitIn(t, other, "-c", "user.name=m", "-c", "user.email=m@elsewhere", "commit", "-q", "--allow-empty", "-m", fmt.Sprint(i))
		gitIn(t, other, "push", "-q", "origin", "HEAD:refs/heads/main")
	}
	commit(0)
	for i := 1; i <= 10; i++ {
		commit(i)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for j := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[j] = m[0].FetchBranch(ctx, "main")
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
		}
	}
}
