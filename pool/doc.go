// Package pool runs several agents at once on one queue (orchestrate run
// --agents), and merges their passing work through one merge train.
//
// Each agent claims an issue and works on it in a worktree of its own.
// Its loop is package loop's, scoped to that issue (loop.Scope): the same
// prompts, gates, records and retry limits as one agent's. Its work rides
// the train onto the integration branch, here or on a git remote the
// machines share; its gates run there, on the work ahead of it, not first
// in its worktree (loop.ChecksOnLanding), unless a gate asks a person or
// a reviewer.
//
// By file:
//
//   - pool.go: the agents of one run (Run): the claims, one after another
//     (claimNext), the work on each (work), and the run's end (end).
//   - worker.go: one agent's scope of the loop (worker): its issue, its
//     environment, its work kept on a remote around each launch, and its
//     passing work put on the train, or sent back to it on a conflict
//     (conflictBack).
//   - train.go: the merge queue as a merge train: each car rebased onto
//     the one before it, the last one's check covering the cars ahead
//     (schedule, batch), the branch fast-forwarded in order, a failed
//     car's followers put back without its work (train).
//   - race.go: the races for the branch a car loses to commits not the
//     train's, bounded (lostRace): from the third, it lands without its
//     gates when those commits change none of its files, or leaves
//     (BusyError).
//   - landing.go: where the train lands the work, a branch here or on a
//     remote the machines share (localBranch, remoteBranch).
//   - lease.go: the claim's lease, renewed while its agent works
//     (DefaultLease, renewEvery, renew).
//   - worktrees.go: the worktrees a killed run left, cleaned or kept
//     (cleanLeft), and an agent's, once its issue is done (tidy).
package pool
