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

// noteGatesTree notes the tree as a gates run left it: what the gates
// changed of the paths the agent left as in HEAD is a by-product.
func (r *runner) noteGatesTree(ctx context.Context) {
	if !r.tracksByproducts() || !r.made.ok {
		return
	}
	st, ok := r.w.readWorkState(ctx)
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
