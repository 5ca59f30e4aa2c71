package results

import "strings"

// units are the failed and passed units a parser read, in bounded memory.
type units struct {
	failed []unitBlock
	index  map[string]int // failed's index by ID
	more   int            // failed units past MaxUnits

	passed     []string
	passedSeen map[string]bool

	// whole: the failure is the gate's as a whole (a build, compile or
	// collection failure); wholeBlock holds its lines, when the parser
	// kept them.
	whole      bool
	wholeBlock boundedText
}

// unitBlock is a failed unit's ID and block as read so far.
type unitBlock struct {
	id    string
	block boundedText
}

func newUnits() *units {
	return &units{index: map[string]int{}, passedSeen: map[string]bool{}}
}

// fail returns the failed unit id, new or read before, or nil past
// MaxUnits (counted in more). fresh says it is new.
func (u *units) fail(id string) (b *boundedText, fresh bool) {
	id = oneLine(id)
	if i, ok := u.index[id]; ok {
		return &u.failed[i].block, false
	}
	if len(u.failed) >= MaxUnits {
		u.more++
		return nil, true
	}
	u.index[id] = len(u.failed)
	u.failed = append(u.failed, unitBlock{id: id})
	return &u.failed[len(u.failed)-1].block, true
}

// pass records id as seen passing, once.
func (u *units) pass(id string) {
	id = oneLine(id)
	if id == "" || u.passedSeen[id] || len(u.passed) >= MaxPassed {
		return
	}
	u.passedSeen[id] = true
	u.passed = append(u.passed, id)
}

// setWhole makes the failure the gate's as a whole.
func (u *units) setWhole() { u.whole = true }

// block returns the block of failed unit i.
func (u *units) block(i int) string { return u.failed[i].block.String() }

// boundedText is a block of lines of at most MaxBlock bytes.
type boundedText struct {
	b   []byte
	cut bool
}

// add appends a line, or notes once that the block is cut.
func (t *boundedText) add(l string) {
	if t == nil || t.cut {
		return
	}
	if len(t.b)+len(l)+1 > MaxBlock-len(cutNote)-1 {
		t.cut = true
		t.b = append(t.b, cutNote+"\n"...)
		return
	}
	t.b = append(append(t.b, l...), '\n')
}

// Len is the block's length in bytes.
func (t *boundedText) Len() int { return len(t.b) }

// String returns the block without its blank first and last lines.
func (t *boundedText) String() string {
	return strings.Trim(string(t.b), "\n")
}

// oneLine makes an ID one line: a unit is named on one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\n\r") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}
