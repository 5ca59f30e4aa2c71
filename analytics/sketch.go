package analytics

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"
	"time"
)

// topSignatures counts signatures with the Space-Saving algorithm (Metwally, Agrawal
// and El Abbadi, 2005): at most capacity counters; an unseen signature takes over the
// smallest counter and inherits its count as its possible overestimate. Counts are
// exact while there are no more distinct signatures than counters, which is the usual
// case (a project has a few hundred failures, not millions); past that, any signature
// seen more than rows/capacity times is still kept, with Count-Overcount <= true count
// <= Count. A plain map would grow with every distinct signature, and signatures are
// hashes of output that the normalizer may fail to tame, so they need not be bounded.
type topSignatures struct {
	capacity int
	bySig    map[string]*sigCounter
	heap     sigHeap // min-heap on count
}

type sigCounter struct {
	SignatureStat
	index int
}

func newTopSignatures(capacity int) *topSignatures {
	return &topSignatures{capacity: capacity, bySig: make(map[string]*sigCounter)}
}

func (t *topSignatures) add(sig, issue, gate string, at time.Time) {
	c, ok := t.bySig[sig]
	switch {
	case ok:
		c.Count++
		heap.Fix(&t.heap, c.index)
	case len(t.heap) < t.capacity:
		c = &sigCounter{SignatureStat: SignatureStat{Signature: strings.Clone(sig), Count: 1}}
		t.bySig[c.Signature] = c
		heap.Push(&t.heap, c)
	default:
		c = t.heap[0]
		delete(t.bySig, c.Signature)
		c.SignatureStat = SignatureStat{
			Signature: strings.Clone(sig),
			Count:     c.Count + 1,
			Overcount: c.Count,
		}
		t.bySig[c.Signature] = c
		heap.Fix(&t.heap, 0)
	}
	if c.LastIssue != issue {
		c.LastIssue = strings.Clone(issue)
	}
	if c.Gate != gate && gate != "" {
		c.Gate = gate // gate names are interned by the caller
	}
	if at.After(c.LastSeen) {
		c.LastSeen = at
	}
}

// top returns the n largest counters, largest first.
func (t *topSignatures) top(n int) []SignatureStat {
	all := make([]SignatureStat, 0, len(t.heap))
	for _, c := range t.heap {
		all = append(all, c.SignatureStat)
	}
	slices.SortFunc(all, func(a, b SignatureStat) int {
		return cmp.Or(
			cmp.Compare(b.Count, a.Count),
			cmp.Compare(a.Overcount, b.Overcount),
			strings.Compare(a.Signature, b.Signature),
		)
	})
	return all[:min(n, len(all))]
}

type sigHeap []*sigCounter

func (h sigHeap) Len() int           { return len(h) }
func (h sigHeap) Less(i, j int) bool { return h[i].Count < h[j].Count }
func (h sigHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *sigHeap) Push(x any) {
	c := x.(*sigCounter)
	c.index = len(*h)
	*h = append(*h, c)
}
func (h *sigHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
