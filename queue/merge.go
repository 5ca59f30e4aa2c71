package queue

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
)

// Merge3 merges two versions of a queue made from one base: ours, changed
// here, and theirs, changed elsewhere (another machine's, through a
// remote). The text is taken issue by issue (the pieces the queue is cut
// into, each from its level-2 heading): an issue changed on one side only
// is that side's; added on one side, it is added (theirs in their order,
// ours after the issue before it in ours); removed on one side and not
// changed on the other, it goes. Of an issue changed on both sides:
//   - when the two differ only in the claim's rows (Claimed-By,
//     Claimed-At, Lease-Epoch, Lease-Until), or one side changed only
//     those, the other side's issue is taken with the later claim's rows:
//     the greater epoch; at one epoch, a release (a claim ends once), then
//     the later lease;
//   - otherwise it is merged line by line, a table's row known by its
//     field's name: a row changed or added on one side only is that
//     side's, and the claim's rows are the later claim's;
//   - failing that (the text around the table changed too), the fields
//     are merged by name all the same, and the text is the side's that
//     changed it (see mergeByName): a person's field changed by hand on
//     one side stays, whatever the other side's work changed;
//   - a count both sides changed, each its way (Launch-Count,
//     Retry-Count), is the greater: a launch counted is never uncounted;
//   - what else both sides changed, each its way, at two epochs is the
//     greater epoch's (the other's holder was taken over), and said in a
//     note (Merge3Notes).
//
// Two issues added with one ID (two machines filed one each) are both
// kept, ours with the next free number of its day; so is an issue of ours
// whose Created differs from the base's issue of its ID (see unlink). What cannot be told
// apart so (both sides changed one row two ways, or rewrote the issue, at
// one epoch) is a *MergeError that says where, and nothing is merged.
func Merge3(base, ours, theirs []byte) ([]byte, error) {
	merged, _, err := Merge3Notes(base, ours, theirs)
	return merged, err
}

// Merge3Notes is Merge3, and what it chose where both sides changed one
// thing of an issue at two epochs: a line for each (see mergeByName), for
// the person to hear, so that no change is dropped unsaid.
func Merge3Notes(base, ours, theirs []byte) (merged []byte, notes []string, err error) {
	b, o, t := cutPieces(base), cutPieces(ours), cutPieces(theirs)
	bm, tm := b.byKey(), t.byKey()
	o.unlink(bm)
	om := o.byKey()
	var out pieces
	for _, p := range t {
		bt, inB := bm[p.key]
		ot, inO := om[p.key]
		switch {
		case !inO && inB && same(p.text, bt):
			// removed here, not changed there
		case !inO, !inB && !same(ot, p.text):
			out = append(out, p) // ours, added with its ID, goes in with another
		default:
			m, said, err := mergePiece(bt, ot, p.text, inB)
			if err != nil {
				return nil, nil, &MergeError{Line: o.line(ours, p.key), ID: p.key, Why: err.Error()}
			}
			for _, n := range said {
				notes = append(notes, strings.TrimPrefix(p.key, "## ")+": "+n)
			}
			out = append(out, piece{key: p.key, text: m})
		}
	}
	// What only ours has goes after the piece before it in ours.
	after := ""
	for _, p := range o {
		bt, inB := bm[p.key]
		tt, inT := tm[p.key]
		switch {
		case inT && (inB || same(tt, p.text)):
			after = p.key // merged above
			continue
		case inB && !inT && same(p.text, bt):
			continue // removed there, not changed here
		case inT, p.reused:
			p.text = renumber(p.text, string(Heading(p.text)), out.ids())
			p.key = string(Heading(p.text))
		}
		out = out.insertAfter(after, p)
		after = p.key
	}
	return out.join(), notes, nil
}

// Revert puts back, in ours, the issues ids as base has them, where they
// differ: the changes made to them since base are undone. An issue base
// has not is left as it is. It returns the text and the IDs it put back.
func Revert(ours, base []byte, ids []string) ([]byte, []string) {
	o, bm := cutPieces(ours), cutPieces(base).byKey()
	var back []string
	for i, p := range o {
		id := strings.TrimPrefix(p.key, "## ")
		if b, ok := bm[p.key]; ok && slices.Contains(ids, id) && !same(p.text, b) {
			o[i].text = append(bytes.Clone(trimEnd(b)), p.text[len(trimEnd(p.text)):]...)
			back = append(back, id)
		}
	}
	if len(back) == 0 {
		return ours, nil
	}
	return o.join(), back
}

// MergeError is an issue both sides changed in ways Merge3 cannot tell
// apart.
type MergeError struct {
	Line int    // of the issue, in ours
	ID   string // its heading
	Why  string
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("%d: %s: %s", e.Line, e.ID, e.Why)
}

// piece is one piece of a queue's text: key is its heading ("" for the
// text before the first issue), made unique by its count when repeated.
type piece struct {
	key  string
	text []byte
	at   int
	// reused: an issue of ours filed under the ID of another the base
	// has (freed by a deletion by hand, then given again): see unlink.
	reused bool
}

// unlink tells apart an issue of ours that has the ID of a base's issue
// but is another (its Created differs): that one was deleted here, and
// this one is new, to be renumbered, so that a merge never takes one
// issue for another of the same ID.
func (ps pieces) unlink(base map[string][]byte) {
	for i, p := range ps {
		b, ok := base[p.key]
		if !ok || p.key == "" {
			continue
		}
		if co, cb := createdOf(p.text), createdOf(b); co != "" && cb != "" && co != cb {
			ps[i].key += "\x00reused"
			ps[i].reused = true
		}
	}
}

// createdOf is the Created field of an issue's text, as written; "" when
// it has none.
func createdOf(text []byte) string {
	if m := createdRow.FindSubmatch(text); m != nil {
		return string(bytes.Trim(bytes.TrimSpace(m[1]), "`"))
	}
	return ""
}

type pieces []piece

func cutPieces(data []byte) pieces {
	var ps pieces
	seen := map[string]int{}
	src := mdpatch.NewSource(data)
	src.WalkSome(func([]byte) bool { return false }, func(start, end int) {
		text := src.Text[start:end]
		key := ""
		if bytes.HasPrefix(text, []byte("## ")) {
			key = string(Heading(text))
		}
		n := seen[key]
		seen[key]++
		if n > 0 {
			key += "\x00" + strconv.Itoa(n) // no heading holds a NUL
		}
		ps = append(ps, piece{key: key, text: text, at: start + len(src.Raw) - len(src.Text)})
	}, nil)
	if len(ps) > 0 && len(src.Raw) > len(src.Text) {
		ps[0].text = data[:len(ps[0].text)+len(src.Raw)-len(src.Text)] // the BOM stays with the first piece
	}
	return ps
}

func (ps pieces) byKey() map[string][]byte {
	m := make(map[string][]byte, len(ps))
	for _, p := range ps {
		m[p.key] = p.text
	}
	return m
}

func (ps pieces) ids() []string {
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.key)
	}
	return ids
}

// line is the line the piece key starts on in data.
func (ps pieces) line(data []byte, key string) int {
	for _, p := range ps {
		if p.key == key {
			return bytes.Count(data[:p.at], []byte("\n")) + 1
		}
	}
	return 1
}

// insertAfter inserts p after the piece key (at the start when no piece
// has it, after the text before the first issue).
func (ps pieces) insertAfter(key string, p piece) pieces {
	i := slices.IndexFunc(ps, func(x piece) bool { return x.key == key })
	if i < 0 && len(ps) > 0 && ps[0].key == "" {
		i = 0
	}
	return slices.Insert(ps, i+1, p)
}

// join is the text of the pieces one after another, a blank line put
// between two where one did not end with it (a piece that was last, put
// before another).
func (ps pieces) join() []byte {
	var out []byte
	for _, p := range ps {
		if len(out) > 0 && !endsBlank(out) {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, '\n')
			}
			out = append(out, '\n')
		}
		out = append(out, p.text...)
	}
	return out
}

// endsBlank reports whether text ends with a blank line.
func endsBlank(text []byte) bool {
	text = bytes.TrimPrefix(text, []byte("\xEF\xBB\xBF"))
	if !bytes.HasSuffix(text, []byte("\n")) {
		return false
	}
	text = text[:len(text)-1]
	last := text[bytes.LastIndexByte(text, '\n')+1:]
	return len(bytes.TrimSpace(last)) == 0
}

// mergePiece merges an issue both sides have: inB says the base has it.
// notes say what both sides changed and one lost (see mergeByName).
func mergePiece(b, o, t []byte, inB bool) (merged []byte, notes []string, err error) {
	switch {
	case inB && bytes.Equal(o, b):
		return t, nil, nil
	case same(o, t):
		return o, nil, nil
	case inB && same(o, b):
		return t, nil, nil
	case inB && same(t, b):
		return o, nil, nil
	}
	where := "its text"
	if inB {
		// The claim's rows of an issue the holder changed and another
		// machine only mirrored a renewal into (or the other way round).
		switch bc, oc, tc := withoutClaim(b), withoutClaim(o), withoutClaim(t); {
		case bytes.Equal(oc, tc):
			return withClaimOf(o, laterOf(o, t)), nil, nil
		case bytes.Equal(tc, bc):
			return withClaimOf(o, laterOf(o, t)), nil, nil
		case bytes.Equal(oc, bc):
			return withClaimOf(t, laterOf(o, t)), nil, nil
		}
		m, bad := mergeRows(trimEnd(b), trimEnd(o), trimEnd(t))
		if bad == "" {
			return append(m, o[len(trimEnd(o)):]...), nil, nil
		}
		where = bad
		if m, notes, ok := mergeByName(trimEnd(b), trimEnd(o), trimEnd(t)); ok {
			return append(m, o[len(trimEnd(o)):]...), notes, nil
		}
	}
	switch eo, et := leaseOf(o), leaseOf(t); {
	case eo.epoch > et.epoch:
		return o, []string{"changed here and on the remote, " + where + " both ways: kept this machine's issue whole, of the greater epoch"}, nil
	case et.epoch > eo.epoch:
		return t, []string{"changed here and on the remote, " + where + " both ways: kept the remote's issue whole, of the greater epoch"}, nil
	}
	return nil, nil, fmt.Errorf("changed here and on the remote since the last sync, both in %s: keep one of the two changes (edit it here), then sync again", where)
}

// mergeByName merges three versions of an issue whose text around the
// table changed (a section added, a line rewritten), which mergeRows,
// that merges those lines by their place, cannot: the table's rows are
// merged by their field's name, each as mergeRows does (a claim's row is
// the later claim's); the rest of the text is the side's that changed it,
// the rows put back in it where they were. What both sides changed, each
// its way, is the greater epoch's, and said in a note; at one epoch, ok
// is false. Nothing is merged (ok false) when a field's row is there
// twice.
func mergeByName(b, o, t []byte) (merged []byte, notes []string, ok bool) {
	bk, bn := keyLines(b)
	ok2, on := keyLines(o)
	tk, tn := keyLines(t)
	if bn < 0 || on < 0 || tn < 0 {
		return nil, nil, false
	}
	eo, et := leaseOf(o), leaseOf(t)
	bm, om, tm := lineMap(bk), lineMap(ok2), lineMap(tk)
	later, greater, side := om, om, "this machine's"
	if et.after(eo) {
		later = tm
	}
	if et.epoch > eo.epoch {
		greater, side = tm, "the remote's"
	}
	skel := tk
	switch rb, ro, rt := restOf(bk), restOf(ok2), restOf(tk); {
	case bytes.Equal(ro, rb):
	case bytes.Equal(rt, rb), bytes.Equal(ro, rt):
		skel = ok2
	case eo.epoch == et.epoch:
		return nil, nil, false
	default:
		if et.epoch < eo.epoch {
			skel = ok2
		}
		notes = append(notes, "its text changed here and on the remote: kept "+side+", of the greater epoch")
	}
	rows := map[string][]byte{}
	for _, k := range rowNames(ok2, tk) {
		line, ok := mergeLine(bm, om, tm, later, k)
		if !ok {
			if eo.epoch == et.epoch {
				return nil, nil, false
			}
			line = greater[k]
			notes = append(notes, fmt.Sprintf("%s changed here (%s) and on the remote (%s): kept %s, of the greater epoch",
				k[1:], cellOf(om[k]), cellOf(tm[k]), side))
		}
		rows[k] = line
	}
	return withRows(skel, ok2, tk, rows), notes, true
}

// restOf is the lines of an issue that are no table's rows, one after
// another.
func restOf(ls []keyed) []byte {
	var out []byte
	for _, l := range ls {
		if !strings.HasPrefix(l.key, "|") {
			out = append(out, l.line...)
		}
	}
	return out
}

// rowNames is the keys of the rows of the versions, each once, in the
// order they first come.
func rowNames(versions ...[]keyed) []string {
	var names []string
	for _, v := range versions {
		for _, l := range v {
			if strings.HasPrefix(l.key, "|") && !slices.Contains(names, l.key) {
				names = append(names, l.key)
			}
		}
	}
	return names
}

// withRows is the lines of skel with each row the one rows has for its
// name (gone when nil); a row skel has not goes after the row before it
// in o, or in t, or after skel's last row.
func withRows(skel, o, t []keyed, rows map[string][]byte) []byte {
	order := slices.Clone(skel)
	for _, v := range [][]keyed{o, t} {
		prev := ""
		for _, l := range v {
			if strings.HasPrefix(l.key, "|") && !slices.ContainsFunc(order, func(x keyed) bool { return x.key == l.key }) {
				i := slices.IndexFunc(order, func(x keyed) bool { return x.key == prev && prev != "" })
				if i < 0 {
					i = slices.IndexFunc(order, func(x keyed) bool { return strings.HasPrefix(x.key, "|") }) // the table's first row
				}
				order = slices.Insert(order, i+1, l)
			}
			if strings.HasPrefix(l.key, "|") {
				prev = l.key
			}
		}
	}
	var out []byte
	for _, l := range order {
		line := l.line
		if strings.HasPrefix(l.key, "|") {
			line = rows[l.key]
		}
		if len(line) > 0 && len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n') // a row that ended its side's text, put before another line
		}
		out = append(out, line...)
	}
	return out
}

// cellOf is the value of a table's row, for a note: "none" when there is
// no row.
func cellOf(row []byte) string {
	if row == nil {
		return "none"
	}
	cells := bytes.Split(bytes.TrimSpace(row), []byte("|"))
	if len(cells) < 3 {
		return string(bytes.TrimSpace(row))
	}
	return strings.TrimSpace(string(cells[2]))
}

// same reports whether two pieces say the same, the blank lines that end
// them aside (which the piece after them puts there).
func same(a, b []byte) bool { return bytes.Equal(trimEnd(a), trimEnd(b)) }

func trimEnd(text []byte) []byte { return bytes.TrimRight(text, " \t\r\n") }

// withoutClaim is text without its claim's rows.
func withoutClaim(text []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(trimEnd(text), []byte("\n")) {
		if !claimRow.Match(line) {
			out = append(out, line...)
		}
	}
	return out
}

// laterOf is the one of two versions of an issue with the later claim.
func laterOf(o, t []byte) []byte {
	if leaseOf(t).after(leaseOf(o)) {
		return t
	}
	return o
}

// withClaimOf is text with the claim's rows of from: each row text has
// takes from's (or goes when from has none), and from's other claim rows
// go after text's last row.
func withClaimOf(text, from []byte) []byte {
	if bytes.Equal(text, from) {
		return text
	}
	rows := map[string][]byte{}
	for _, line := range bytes.SplitAfter(trimEnd(from), []byte("\n")) {
		if m := claimRow.FindSubmatch(line); m != nil {
			rows[string(m[1])] = append(bytes.TrimRight(line, "\r\n"), '\n')
		}
	}
	lines := bytes.SplitAfter(text, []byte("\n"))
	lastRow := -1
	var out [][]byte
	for _, line := range lines {
		if m := claimRow.FindSubmatch(line); m != nil {
			if r, ok := rows[string(m[1])]; ok {
				out = append(out, r)
				delete(rows, string(m[1]))
			}
		} else {
			out = append(out, line)
		}
		if anyRow.Match(line) {
			lastRow = len(out) - 1
		}
	}
	var rest [][]byte
	for _, name := range []string{FieldClaimedBy, FieldClaimedAt, FieldLeaseEpoch, FieldLeaseUntil} {
		if r, ok := rows[name]; ok {
			rest = append(rest, r)
		}
	}
	out = slices.Insert(out, lastRow+1, rest...)
	return bytes.Join(out, nil)
}

// mergeRows merges three versions of an issue line by line, a table's
// row known by its field's name (a row one side added is added), the
// other lines by their place among the lines that are no rows; false when
// those lines are not as many in the three, or when both sides changed a
// line other than a claim's row differently: then bad says where ("" when
// merged).
func mergeRows(b, o, t []byte) (merged []byte, bad string) {
	bk, bn := keyLines(b)
	ok, on := keyLines(o)
	tk, tn := keyLines(t)
	if bn < 0 || on != bn || tn != bn {
		return nil, "its text"
	}
	bm, om, tm := lineMap(bk), lineMap(ok), lineMap(tk)
	later := om
	if leaseOf(t).after(leaseOf(o)) {
		later = tm
	}
	// Theirs' lines in their order, then ours' new ones after the line
	// before them in ours.
	order := make([]string, 0, len(tk)+len(ok))
	for _, l := range tk {
		order = append(order, l.key)
	}
	prev := ""
	for _, l := range ok {
		if _, in := tm[l.key]; !in && !slices.Contains(order, l.key) {
			i := slices.Index(order, prev)
			order = slices.Insert(order, i+1, l.key)
		}
		prev = l.key
	}
	var out []byte
	for _, k := range order {
		line, ok := mergeLine(bm, om, tm, later, k)
		if !ok {
			if name, row := strings.CutPrefix(k, "|"); row {
				return nil, "the row " + name
			}
			return nil, "its text"
		}
		out = append(out, line...)
	}
	return out, ""
}

// mergeLine is the line k of the merge of three versions (nil when it
// goes); false when both sides changed it differently and it is no
// claim's row (whose later side's is taken).
func mergeLine(bm, om, tm, later map[string][]byte, k string) ([]byte, bool) {
	bl, inB := bm[k]
	ol, inO := om[k]
	tl, inT := tm[k]
	switch {
	case inO && inT && bytes.Equal(ol, tl), inO && !inT && !inB, inO && inB && inT && bytes.Equal(tl, bl):
		return ol, true
	case inT && !inO && !inB, inT && inB && inO && bytes.Equal(ol, bl):
		return tl, true
	case inB && (!inO && bytes.Equal(tl, bl) || !inT && bytes.Equal(ol, bl)):
		return nil, true // removed on one side, not changed on the other
	case claimRow.Match(ol) || claimRow.Match(tl):
		return later[k], true
	case inO && inT:
		return greaterCount(ol, tl)
	}
	return nil, false
}

// greaterCount is the greater of two rows of a count both sides raised (a
// launch here, another after a takeover there): a launch is never
// uncounted. False when they are no count's rows.
func greaterCount(ol, tl []byte) ([]byte, bool) {
	om, tm := countRow.FindSubmatch(ol), countRow.FindSubmatch(tl)
	if om == nil || tm == nil {
		return nil, false
	}
	if atoi(om[1]) >= atoi(tm[1]) {
		return ol, true
	}
	return tl, true
}

// atoi is b's number, 0 when it is none.
func atoi(b []byte) int {
	n, _ := strconv.Atoi(string(b))
	return n
}

// keyed is a line of an issue and its key: "|Name" for a table's row,
// its place among the other lines for those.
type keyed struct {
	key  string
	line []byte
}

// keyLines keys the lines of text, and counts those that are no rows; -1
// when a field's row is there twice.
func keyLines(text []byte) ([]keyed, int) {
	var out []keyed
	n := 0
	seen := map[string]bool{}
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		key := ""
		if m := anyRow.FindSubmatch(line); m != nil && !tableRule.Match(line) {
			key = "|" + string(m[1])
		} else {
			key = strconv.Itoa(n)
			n++
		}
		if seen[key] {
			return nil, -1
		}
		seen[key] = true
		out = append(out, keyed{key, line})
	}
	return out, n
}

func lineMap(ls []keyed) map[string][]byte {
	m := make(map[string][]byte, len(ls))
	for _, l := range ls {
		m[l.key] = l.line
	}
	return m
}

var (
	anyRow     = regexp.MustCompile(`^\s*\|\s*([^|]*?)\s*\|`)
	tableRule  = regexp.MustCompile(`^\s*\|[\s:|-]*$`)
	claimRow   = regexp.MustCompile(`^\s*\|\s*(Claimed-By|Claimed-At|Lease-Epoch|Lease-Until)\s*\|`)
	countRow   = regexp.MustCompile(`^\s*\|\s*(?:Launch-Count|Retry-Count)\s*\|\s*(\d+)\s*\|`)
	epochRow   = regexp.MustCompile(`(?m)^\s*\|\s*Lease-Epoch\s*\|\s*(\d+)\s*\|`)
	untilRow   = regexp.MustCompile(`(?m)^\s*\|\s*Lease-Until\s*\|\s*([^|]*?)\s*\|`)
	byRow      = regexp.MustCompile(`(?m)^\s*\|\s*Claimed-By\s*\|([^|\n]*)\|`)
	createdRow = regexp.MustCompile(`(?m)^\s*\|\s*Created\s*\|([^|\n]*)\|`)
	issueDayNo = regexp.MustCompile(`^(ISSUE-\d{8}-)(\d+)$`)
)

// lease is what an issue's rows say of its claim, to order two versions.
type lease struct {
	epoch int
	held  bool   // Claimed-By names someone
	until string // RFC 3339 in UTC: ordered as text
}

func leaseOf(text []byte) lease {
	var l lease
	if m := epochRow.FindSubmatch(text); m != nil {
		l.epoch, _ = strconv.Atoi(string(m[1]))
	}
	if m := untilRow.FindSubmatch(text); m != nil {
		l.until = string(m[1])
	}
	if m := byRow.FindSubmatch(text); m != nil {
		l.held = len(bytes.TrimSpace(m[1])) > 0
	}
	return l
}

// after reports whether l is a later state of a claim than o: a greater
// epoch; at one epoch, its release (a claim ends once), or a later lease.
func (l lease) after(o lease) bool {
	switch {
	case l.epoch != o.epoch:
		return l.epoch > o.epoch
	case l.held != o.held:
		return !l.held
	}
	return l.until > o.until
}

// renumber gives an issue added here whose ID the other side gave to
// another issue the next number of its day free in ids.
func renumber(text []byte, key string, ids []string) []byte {
	id, _ := strings.CutPrefix(key, "## ")
	m := issueDayNo.FindStringSubmatch(id)
	if m == nil {
		return text
	}
	next := 0
	for _, k := range ids {
		k, _ = strings.CutPrefix(k, "## ")
		if mk := issueDayNo.FindStringSubmatch(k); mk != nil && mk[1] == m[1] {
			if n, _ := strconv.Atoi(mk[2]); n > next {
				next = n
			}
		}
	}
	fresh := fmt.Sprintf("%s%03d", m[1], next+1)
	return bytes.Replace(text, []byte(id), []byte(fresh), 1)
}
