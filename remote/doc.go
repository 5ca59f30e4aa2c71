// Package remote keeps what the machines that run agents on one repository
// share on a git remote of it: the claims, the queue, the hosts' histories,
// the branch their work lands on, and the work not merged yet.
//
// Each of them is a ref on the remote. The claims, the queue and the branch
// move only by a compare-and-swap push (git push --atomic
// --force-with-lease), which the remote checks under its lock of the ref.
// Of two machines that push from the same commit, one succeeds and the
// other is told the ref moved (LostError). A clone keeps its view of each
// ref under refs/orchestrate/remote/<remote>/, brought up to date by a
// fetch and moved by its own pushes.
//
// By file:
//
//   - remote.go: the remote (Remote, New), the git it runs, the
//     compare-and-swap push (pushRef, LostError), and the fetch, made
//     one at a time per refspec in this process and again when what it
//     depends on changed under it (fetch, fetchSlot, fetchState).
//   - claims.go: the claims, a ref per issue, refs/orchestrate/claims/<issue>
//     (Prefix), fetched all at once (Fetch) and changed by one push (Push,
//     Change). A ref that holds anything but a record orchestrate wrote is read
//     as a BadRecordError: neither free nor held. The records' times, each the
//     clock of the machine that pushed it, are compared with this machine's
//     clock and with the records they replaced. A SkewError says two clocks
//     are further apart than Margin.
//   - record.go: a claim's record: a commit with no parent on the empty
//     tree, whose message holds the lease's fields as lines (Claimed-By: …,
//     Lease-Epoch: N, …), so that git log refs/orchestrate/claims/ISSUE-…
//     shows it to a person (Message, parse).
//   - queue.go: the shared queue on refs/orchestrate/queue (QueueRef), each
//     change a commit on the one before (FetchQueue, PushQueue, Synced).
//   - history.go: the hosts' histories, in pieces beside the queue in its
//     tree (HistoryDir, OwnHistory, SeenHistories), and this clone's name
//     among the hosts (Host, NewHost).
//   - branch.go: the branch the machines' work lands on (FetchBranch,
//     PushBranch).
//   - work.go: the work of an issue not merged yet, kept for the machine
//     that takes the issue over (PushWork, FetchWork, DropWork).
package remote
