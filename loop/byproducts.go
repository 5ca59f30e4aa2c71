package loop

import (
	"context"
	"sort"
)

// byproducts are the files the gates wrote and the agent did not (a
// coverage.out, a build's output not ignored): the run's commit leaves
// them out, since it commits what the agent changed. A path is one when a
// gates run changed it while the agent had left it as in HEAD; it stops
// being one when an agent's launch changes it after.
type byproducts struct {
	agent workState         // the tree as the last agent left it
	ok    bool              // agent was read
	paths map[string]string // each by-product and its content as the gates left it
	// pending: the gates ran since the agent's tree was read, and the tree
	// they left is yet to be looked at: by the next launch's look at the
	// tree (the resume prompt's), or by the commit's, whichever comes
	// first, so that a loop reads the tree no more often than it did.
	pending bool
}

// tracksByproducts reports whether the run looks for the gates'
// by-products: only a run that will commit its work (on_success: commit,
// from a clean tree, in Run's one-agent scope) has a use for them.
func (r *runner) tracksByproducts() bool {
	_, one := r.scope.(oneAgent)
	return one && r.start.git && !r.start.leave && r.start.notClean == ""
}

// noteAgentTree notes the tree as an agent's launch left it: a by-product
// the agent changed is its work now.
func (r *runner) noteAgentTree(ctx context.Context) {
	if !r.tracksByproducts() {
		return
	}
	st, ok := r.left.state, r.left.ok
	if !ok {
		st, ok = r.w.readWorkState(ctx)
	}
	r.made.agent, r.made.ok = st, ok
	if !ok {
		return
	}
	for name, blob := range r.made.paths {
		if p, listed := st.paths[name]; !listed || p.blob != blob {
			delete(r.made.paths, name)
		}
	}
}

// gatesRan notes that the gates ran: the tree they left is looked at
// later (settleGates).
func (r *runner) gatesRan() {
	r.made.pending = r.tracksByproducts() && r.made.ok
}

// settleGates looks at the tree the last gates run left, st when it was
// read already (ok): what the gates changed of the paths the agent left as
// in HEAD is a by-product.
func (r *runner) settleGates(ctx context.Context, st workState, ok bool) {
	if !r.made.pending {
		return
	}
	r.made.pending = false
	if !ok {
		st, ok = r.w.readWorkState(ctx)
	}
	if !ok || st.head != r.made.agent.head {
		return
	}
	if r.made.paths == nil {
		r.made.paths = map[string]string{}
	}
	for _, name := range changedSince(r.made.agent, st) {
		_, byGates := r.made.paths[name]
		if _, agents := r.made.agent.paths[name]; agents && !byGates {
			continue // the agent's work, which a gate changed too (a formatter)
		}
		r.made.paths[name] = st.paths[name].blob
	}
}

// list returns the by-products, sorted.
func (b byproducts) list() []string {
	names := make([]string, 0, len(b.paths))
	for name := range b.paths {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
