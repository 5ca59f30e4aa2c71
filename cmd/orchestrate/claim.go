package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// ClaimEnv names the environment variable that gives the claim a
// process's writes carry: ID:EPOCH. orchestrate run --agents sets it for
// each agent; with it, every change to the queue is refused once the
// claim was taken over.
const ClaimEnv = "ORCHESTRATE_CLAIM"

// AgentEnv names the environment variable that names the agent a claim
// is for (claim --as's default).
const AgentEnv = "ORCHESTRATE_AGENT"

const claimUsage = `Usage:
  orchestrate claim --next [--as NAME] [--lease DURATION] [--remote NAME] [--json]
  orchestrate claim ID [--as NAME] [--lease DURATION] [--force] [--remote NAME] [--json]
  orchestrate renew ID --epoch N [--as NAME] [--lease DURATION] [--remote NAME]
  orchestrate release ID [--epoch N] [--remote NAME]

Claims are how several agents share one queue. A claim is three fields of
the issue's table: Claimed-By (who), Lease-Epoch (a number that grows with
each new holder) and Lease-Until (when the lease ends, RFC 3339, UTC).

claim --next finds the next ready issue and claims it, in one step under
the workspace's lock, so two agents never get the same issue. Ready means
open (pending or in_progress), not waiting for a person (halted, stuck,
retries spent, an approval), and not claimed, taken by priority (critical,
high, medium, low), then age; an issue whose Touches globs overlap a
claimed issue's waits. A holder that already holds an open issue gets it
back. claim ID claims one issue; claiming what you hold renews it.

A holder NAME@HOST/PID on this machine whose process died is taken over
at once, whatever its lease. Otherwise a lapsed lease is taken over only
when its holder is gone: for a holder on this machine, when that process
is dead or stopped. The takeover increments the epoch. --force takes a claim from whoever holds it
(a person reassigning an issue).

renew extends the lease; release ends the claim (with --epoch, only the
holder's claim at that epoch; without, any: a person's release).

Every change a holder makes carries its epoch: record, issue set and issue
resolve take --epoch N, and every command takes it from
$ORCHESTRATE_CLAIM=ID:EPOCH (which run --agents sets for its agents). A
change with an older epoch than the issue's is refused, with who holds the
issue now.

--as names the holder (default $ORCHESTRATE_AGENT, or "agent"); the
claim is NAME@HOST/PID of the agent that runs this command: the nearest
ancestor process that outlives it, past a shell that runs one command
(sh -c, as an agent's shell tool runs each) and a subshell ($(...)).
So an agent that claims twice is one holder, and claiming again what it
holds renews it (exit 0). --as NAME@HOST/PID names the holder whole. --lease is the lease's length (default 10m).

--remote NAME keeps the claim on the git remote NAME, for agents on
several machines: the claim is the ref refs/orchestrate/claims/ID there,
created or moved only by a compare-and-swap push (a git push with a
lease on the ref's old value), so two machines never both get an issue;
the issue's fields here mirror it. claim --next fetches the remote's
claims (one round trip), skips the issues they hold, and pushes its
claim of the next ready one (one round trip); a push lost to another
machine tries the next issue. renew, release and claim ID are one push
when this clone last saw the claim as it is, and a fetch and a push more
when not. The remote's lease is taken over once it lapsed; its old
holder's renew is then refused (exit 11). A remote that refuses the
push, does not exist or cannot be reached is an error (exit 1) that
names the ref and the remote, and claims nothing. A ref there that holds
what orchestrate does not write is neither free nor held: claim --next
skips its issue and says so; claim ID, renew and release of the issue
fail (exit 1) and change nothing. A record written ahead of this
machine's clock, or before the record it replaced, by more than 10s
says the machines' clocks disagree: claims fail (exit 1) until they are
set right; renew and release go on, and warn.

Examples:
  orchestrate claim --next --as agent-1
  orchestrate renew ISSUE-20260101-001 --epoch 3 --as agent-1
  orchestrate release ISSUE-20260101-001
  orchestrate claim --next --as agent-1 --remote origin
  git log refs/orchestrate/remote/origin/claims/ISSUE-20260101-001
  ORCHESTRATE_CLAIM=ISSUE-20260101-001:3 orchestrate record ISSUE-20260101-001 test.log

Exit codes: 0 done, 10 nothing ready to claim (claim --next), 11 the issue
is claimed by another, or your claim was taken over (the message says who
holds it), 1 error (an unknown ID, a malformed queue, a remote that
refuses or cannot be reached: no file is changed), 2 usage.
`

var claimCmd = &command{name: "claim", summary: "claim the next ready issue, or one, for an agent", usage: claimUsage, run: runClaim}
var renewCmd = &command{name: "renew", summary: "extend an agent's claim of an issue", usage: claimUsage, run: runRenew}
var releaseCmd = &command{name: "release", summary: "end a claim of an issue", usage: claimUsage, run: runRelease}

// claimFlags adds the flags of the claim commands.
func claimFlags(fs *flag.FlagSet) (as *string, lease *time.Duration) {
	return fs.String("as", defaultHolder(), ""), fs.Duration("lease", claim.DefaultLease, "")
}

// defaultHolder is the name a claim is for without --as: $ORCHESTRATE_AGENT,
// or "agent".
func defaultHolder() string {
	if def := os.Getenv(AgentEnv); def != "" {
		return def
	}
	return "agent"
}

// remoteFlag adds --remote NAME: the function returns the git remote it
// names, nil without it.
func (e *env) remoteFlag(fs *flag.FlagSet) func() (*remote.Remote, error) {
	name := fs.String("remote", "", "")
	return func() (*remote.Remote, error) {
		if *name == "" {
			return nil, nil
		}
		r, err := remote.New(e.ws().Root(), *name)
		if err != nil {
			return nil, usageError(fs.Name(), "%v", err)
		}
		r.Clock = e.now
		return r, nil
	}
}

// holderName is the holder --as NAME names: NAME@HOST/PID of the agent
// that runs the command (claim.Agent), or, for NAME@HOST/PID, that holder
// whole.
func holderName(e *env, name string) (string, error) {
	if claim.Whole(name) {
		return name, nil
	}
	if name == "" || strings.ContainsAny(name, "@/|` \t\n") {
		return "", usageError("claim", "--as %q: want a name without spaces, @, / or |, or a whole holder NAME@HOST/PID", name)
	}
	return claim.Holder(name, claim.Agent()), nil
}

func runClaim(e *env, args []string) error {
	fs := e.flags("claim")
	next := fs.Bool("next", false, "")
	force := fs.Bool("force", false, "")
	as, lease := claimFlags(fs)
	onRemote := e.remoteFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if *next == (len(pos) == 1) || len(pos) > 1 {
		return usageError("claim", "claim needs --next or one issue ID")
	}
	holder, err := holderName(e, *as)
	if err != nil {
		return err
	}
	r, err := onRemote()
	if err != nil {
		return err
	}
	var c *loop.Claimed
	if claims := e.ws().Claims(r); *next {
		c, err = claims.Next(e.ctx, e.now(), holder, *lease, nil)
	} else {
		var got loop.Claimed
		got, err = claims.Claim(e.ctx, e.now(), pos[0], holder, *lease, *force)
		c = &got
	}
	if err != nil {
		return claimError(err)
	}
	if c == nil {
		return withCode(exitNothing, errors.New("nothing ready to claim"))
	}
	return printClaim(e, "claimed", *c)
}

func runRenew(e *env, args []string) error {
	fs := e.flags("renew")
	epoch := fs.Int("epoch", 0, "")
	as, lease := claimFlags(fs)
	onRemote := e.remoteFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *epoch <= 0 {
		return usageError("renew", "renew needs an issue ID and --epoch N (the claim's)")
	}
	holder, err := holderName(e, *as)
	if err != nil {
		return err
	}
	r, err := onRemote()
	if err != nil {
		return err
	}
	c, err := e.ws().Claims(r).Renew(e.ctx, e.now(), pos[0], holder, *epoch, *lease)
	if err != nil {
		return claimError(err)
	}
	return printClaim(e, "renewed", c)
}

func runRelease(e *env, args []string) error {
	fs := e.flags("release")
	epoch := fs.Int("epoch", 0, "")
	onRemote := e.remoteFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *epoch < 0 {
		return usageError("release", "release needs an issue ID")
	}
	r, err := onRemote()
	if err != nil {
		return err
	}
	c, err := e.ws().Claims(r).Release(e.ctx, e.now(), pos[0], *epoch)
	if err != nil {
		return claimError(err)
	}
	if c.Holder == "" {
		fmt.Fprintf(e.stdout, "%s: not claimed\n", c.ID)
		return nil
	}
	return printClaim(e, "released", c)
}

// claimError gives a claim held by another, or taken over, exit 11.
func claimError(err error) error {
	var held *claim.HeldError
	if errors.As(err, &held) || errors.Is(err, claim.ErrFenced) {
		return withCode(exitPerson, err)
	}
	return err
}

func printClaim(e *env, what string, c loop.Claimed) error {
	if e.json {
		return e.printJSON(c)
	}
	fmt.Fprintf(e.stdout, "%s %s: %s\n", what, c.ID, c.Lease)
	if c.Remote != "" {
		fmt.Fprintf(e.stdout, "  on %s: %s\n", c.Remote, c.Ref)
	}
	if what == "claimed" {
		fmt.Fprintf(e.stdout, "  carry it in every change: %s=%s:%d\n", ClaimEnv, c.ID, c.Epoch)
	}
	return nil
}

// epochFlag adds --epoch to a command whose first argument is an issue:
// fence(id) makes the workspace's changes carry that claim. An epoch
// given is one a claim gives (1 or more): --epoch 0 is refused, as
// ORCHESTRATE_CLAIM=ID:0 is, not taken for none.
func (e *env) epochFlag(fs *flag.FlagSet, help string) func(id string) error {
	epoch := fs.Int("epoch", 0, "")
	return func(id string) error {
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "epoch" })
		if !given {
			return nil
		}
		if *epoch <= 0 {
			return usageError(help, "--epoch %d: want the epoch of your claim of %s (a number from 1), as claim printed it", *epoch, id)
		}
		e.fenceID, e.fenceEpoch = id, *epoch
		return nil
	}
}

// claimFromEnv reads $ORCHESTRATE_CLAIM.
func (e *env) claimFromEnv() error {
	v := os.Getenv(ClaimEnv)
	if v == "" {
		return nil
	}
	id, n, ok := strings.Cut(v, ":")
	epoch, err := strconv.Atoi(n)
	if !ok || err != nil || epoch <= 0 || id == "" {
		return usageError("", "%s=%q: want ID:EPOCH, such as ISSUE-20260101-001:3", ClaimEnv, v)
	}
	e.fenceID, e.fenceEpoch = id, epoch
	return nil
}
