package remote

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/git"
)

// The machines' histories, shared beside the queue. QueueRef's tree holds,
// besides QueueFile, HistoryDir/<host>/ for each machine (a clone, named
// by Host): its history.csv in pieces, NNNNNN.csv from 000000.csv, which
// concatenated in order are that history.csv up to its last whole row.
// Each piece is whole rows, and ends at the end of the first row that
// reaches pieceSize bytes; the last piece is shorter, or ends where the
// history does.
//
// A sync writes its own host's directory only, and keeps every other as
// the version it pushes on has it: no two machines write one file. And
// history.csv only grows, so a piece that reached its size never changes:
// a sync writes the pieces past the last such, most often one small blob,
// however long the history (written whole, a long history would be one
// more copy of it in both repositories at every sync).

// HistoryDir is the directory of QueueRef's tree that holds the hosts'
// histories.
const HistoryDir = "history"

// HostConfig is the git config key of this clone's host name.
const HostConfig = "orchestrate.host"

// pieceSize is the size a piece of a history reaches before the next
// begins: what a sync writes at most, most often, and what a reader
// holds of each history at once.
var pieceSize int64 = 256 << 10

var (
	hostName  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	pieceName = regexp.MustCompile(`^([0-9]{6,})\.csv$`)
)

// CheckHost refuses a host name no file can be named after.
func CheckHost(name string) error {
	if !hostName.MatchString(name) {
		return fmt.Errorf("git config %s %q: want a file name: letters, digits, ., _ and -, at most 100", HostConfig, name)
	}
	return nil
}

// Host is this clone's name among the machines that share the queue
// (git config orchestrate.host), "" when it has none yet (see NewHost).
func (r *Remote) Host(ctx context.Context) (string, error) {
	out, err := r.git(ctx, nil, "config", "--get", HostConfig)
	if err != nil {
		if gerr := (*git.Error)(nil); errors.As(err, &gerr) && gerr.ExitCode == 1 && gerr.Stderr == "" {
			return "", nil // exit 1, and nothing said: the key is not set
		}
		return "", fmt.Errorf("reading git config %s: %v", HostConfig, err)
	}
	name := strings.TrimSpace(out)
	if err := CheckHost(name); err != nil {
		return "", err
	}
	return name, nil
}

// NewHost gives this clone a new host name, and returns it: the machine's
// hostname and random letters, as CI runners and containers reuse
// hostnames.
func (r *Remote) NewHost(ctx context.Context) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := hostBase() + "-" + hex.EncodeToString(b[:])
	if _, err := r.git(ctx, nil, "config", HostConfig, name); err != nil {
		return "", fmt.Errorf("setting git config %s: %v", HostConfig, err)
	}
	return name, nil
}

// hostBase is the machine's hostname as a file name: the characters a
// host name may not hold made -, 40 at most.
func hostBase() string {
	h, _ := os.Hostname()
	h = strings.Map(func(c rune) rune {
		if c < 128 && (c == '.' || c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return c
		}
		return '-'
	}, h)
	h = strings.TrimLeft(h, ".-_")
	if len(h) > 40 {
		h = h[:40]
	}
	if h == "" {
		return "host"
	}
	return h
}

// piece is a piece of a host's history on a version of the queue.
type piece struct {
	index int
	blob  string
	size  int64
}

// Own is this clone's history as a version of the queue is to hold it:
// made by OwnHistory on that version, and pushed with PushQueue.
type Own struct {
	Host string
	Tree string // its pieces; "" for none
	// Changed: the version it was made on holds another Tree for Host.
	Changed bool
	on      string            // the version it was made on
	hosts   map[string]string // that version's histories: their trees, by host
}

// ErrHostTaken matches the error of OwnHistory when another clone writes
// the history of this clone's host name.
var ErrHostTaken = errors.New("written by another clone with the same host name")

// OwnHistory writes, as host's, the pieces of the history file at path
// that the version on of the queue does not hold yet, and returns the
// history it is to hold: Changed false when on holds it already, and then
// nothing was written. A missing file leaves host's history as on has it.
//
// synced is this clone's last sync (SyncedQueue): when on holds a history
// of host's other than synced's, another clone wrote it, under the same
// name (a clone copied with its config, a name set by hand on two), and
// OwnHistory returns an error matching ErrHostTaken: this clone is to take
// a new name (NewHost), so that neither overwrites the other's.
func (r *Remote) OwnHistory(ctx context.Context, synced, on Queue, host, path string) (Own, error) {
	if err := CheckHost(host); err != nil {
		return Own{}, err
	}
	hosts, pieces, err := r.histories(ctx, on.Sha, host)
	if err != nil {
		return Own{}, err
	}
	own := Own{Host: host, Tree: hosts[host], on: on.Sha, hosts: hosts}
	if own.Tree != "" && synced.Sha != on.Sha {
		mine := ""
		if synced.Sha != "" {
			out, _ := r.git(ctx, nil, "rev-parse", "-q", "--verify", synced.Sha+":"+HistoryDir+"/"+host)
			mine = strings.TrimSpace(out)
		}
		if mine != own.Tree {
			return Own{}, fmt.Errorf("%s/%s on %s: %w", HistoryDir, host, r.name, ErrHostTaken)
		}
	}
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return own, nil
	}
	if err != nil {
		return Own{}, err
	}
	defer f.Close()
	tree, err := r.writePieces(ctx, f, pieces, own.Tree)
	if err != nil {
		return Own{}, fmt.Errorf("sharing %s as %s/%s: %w", path, HistoryDir, host, err)
	}
	own.Changed, own.Tree = tree != own.Tree, tree
	return own, nil
}

// histories lists the histories the version sha holds, their trees by
// host, and host's pieces in order: one local git process.
func (r *Remote) histories(ctx context.Context, sha, host string) (map[string]string, []piece, error) {
	hosts := map[string]string{}
	if sha == "" {
		return hosts, nil, nil
	}
	out, err := r.git(ctx, nil, "ls-tree", "-l", "-t", "-z", sha, "--", HistoryDir+"/", HistoryDir+"/"+host+"/")
	if err != nil {
		return nil, nil, err
	}
	var pieces []piece
	for _, e := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(e, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			continue
		}
		rest, ok := strings.CutPrefix(path, HistoryDir+"/")
		name, file, deeper := strings.Cut(rest, "/")
		switch {
		case !ok:
		case !deeper && f[1] == "tree":
			hosts[name] = f[2]
		case deeper && name == host && f[1] == "blob":
			if i, size, ok := pieceOf(file, f[3]); ok {
				pieces = append(pieces, piece{index: i, blob: f[2], size: size})
			}
		}
	}
	slices.SortFunc(pieces, func(a, b piece) int { return a.index - b.index })
	return hosts, pieces, nil
}

// pieceOf reads a piece's name and size, as git ls-tree -l lists them.
func pieceOf(name, size string) (int, int64, bool) {
	m := pieceName.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	i, ierr := strconv.Atoi(m[1])
	n, serr := strconv.ParseInt(size, 10, 64)
	return i, n, ierr == nil && serr == nil
}

// writePieces writes the pieces of the history f that published (a
// version's pieces of it, whose tree is tree) does not hold, and returns
// the tree of them all. f only grows: as long as published, it is
// published (no git process); the pieces that reached their size are kept
// as published, once the first is found the same (a history.csv replaced
// by another is written whole).
func (r *Remote) writePieces(ctx context.Context, f *os.File, published []piece, tree string) (string, error) {
	end, err := lastRowEnd(f)
	if err != nil {
		return "", err
	}
	if total, ok := length(published); ok && total == end && tree != "" {
		return tree, nil
	}
	var pieces []piece
	var at int64
	for i, p := range published {
		if p.index != i || p.size < pieceSize || at+p.size > end {
			break
		}
		pieces, at = append(pieces, p), at+p.size
	}
	if len(pieces) > 0 {
		first := make([]byte, pieces[0].size)
		if _, err := f.ReadAt(first, 0); err != nil {
			return "", err
		}
		if id, err := r.git(ctx, strings.NewReader(string(first)), "hash-object", "--stdin"); err != nil || strings.TrimSpace(id) != pieces[0].blob {
			pieces, at = nil, 0
		}
	}
	trusted := len(pieces) > 0 || len(published) < 2
	for at < end {
		data, err := cut(f, at, end)
		if err != nil {
			return "", err
		}
		p := piece{index: len(pieces), size: int64(len(data))}
		if i := p.index; trusted && i < len(published) && published[i].index == i && published[i].size == p.size {
			// What was published of it, the history only growing.
			p.blob = published[i].blob
		} else if p.blob, err = r.git(ctx, strings.NewReader(string(data)), "hash-object", "-w", "--stdin"); err != nil {
			return "", err
		}
		pieces, at = append(pieces, p), at+p.size
	}
	if len(pieces) == 0 {
		return "", nil
	}
	var b strings.Builder
	for _, p := range pieces {
		fmt.Fprintf(&b, "100644 blob %s\t%06d.csv\n", strings.TrimSpace(p.blob), p.index)
	}
	made, err := r.git(ctx, strings.NewReader(b.String()), "mktree")
	return strings.TrimSpace(made), err
}

// length is the length of the history whose pieces are ps, if they are
// all there (000000.csv and on, none missing).
func length(ps []piece) (int64, bool) {
	var n int64
	for i, p := range ps {
		if p.index != i {
			return 0, false
		}
		n += p.size
	}
	return n, true
}

// cut returns the piece of f that begins at at: to the end of the first
// row that reaches pieceSize bytes, or to end.
func cut(f *os.File, at, end int64) ([]byte, error) {
	br := bufio.NewReader(io.NewSectionReader(f, at, end-at))
	data := make([]byte, min(pieceSize-1, end-at))
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, err
	}
	if at+int64(len(data)) < end {
		rest, err := br.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		data = append(data, rest...)
	}
	return data, nil
}

// lastRowEnd is the offset past the last newline of f: what of it is
// whole rows (an append in progress, or torn by a crash, is not shared).
func lastRowEnd(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end := fi.Size(); end > 0; {
		start := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// historyTree is the tree of HistoryDir that a push of the queue on from
// is to hold: own's history with the others' of from, or from's as it is
// when own names no host.
func (r *Remote) historyTree(ctx context.Context, from Queue, own Own) (string, error) {
	if own.Host == "" {
		if from.Sha == "" {
			return "", nil
		}
		out, _ := r.git(ctx, nil, "rev-parse", "-q", "--verify", from.Sha+":"+HistoryDir)
		return strings.TrimSpace(out), nil
	}
	if own.on != from.Sha {
		return "", fmt.Errorf("the history of %s was made on %.12s, not on the queue pushed on (%.12s)", own.Host, own.on, from.Sha)
	}
	var b strings.Builder
	for host, tree := range own.hosts {
		if host != own.Host {
			fmt.Fprintf(&b, "040000 tree %s\t%s\n", tree, host)
		}
	}
	if own.Tree != "" {
		fmt.Fprintf(&b, "040000 tree %s\t%s\n", own.Tree, own.Host)
	}
	if b.Len() == 0 {
		return "", nil
	}
	tree, err := r.git(ctx, strings.NewReader(b.String()), "mktree")
	return strings.TrimSpace(tree), err
}

// HostHistory is one host's history on a version of the queue: its
// pieces' blobs, in order.
type HostHistory struct {
	Host   string
	Pieces []string
}

// Histories are the hosts' histories on this clone's view of the remote's
// queue, and what reads them: one git process, started at the first read.
type Histories struct {
	Sha   string // the version, "" when this clone has seen none
	Hosts []HostHistory
	r     *Remote
	ctx   context.Context
	cmd   *catFile
}

// SeenHistories lists the hosts' histories on this clone's view of the
// remote's queue (no round trip), by host; Close ends what read them.
func (r *Remote) SeenHistories(ctx context.Context) (*Histories, error) {
	sha, err := r.SeenQueue(ctx)
	if err != nil || sha == "" {
		return &Histories{r: r, ctx: ctx}, err
	}
	out, err := r.git(ctx, nil, "ls-tree", "-r", "-z", sha, "--", HistoryDir+"/")
	if err != nil {
		return nil, err
	}
	type entry struct {
		host  string
		index int
		blob  string
	}
	var es []entry
	for _, e := range strings.Split(out, "\x00") {
		meta, path, _ := strings.Cut(e, "\t")
		f := strings.Fields(meta)
		rest, _ := strings.CutPrefix(path, HistoryDir+"/")
		host, file, _ := strings.Cut(rest, "/")
		i, _, ok := pieceOf(file, "0")
		if len(f) != 3 || f[1] != "blob" || !ok || CheckHost(host) != nil {
			continue
		}
		es = append(es, entry{host, i, f[2]})
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Or(strings.Compare(a.host, b.host), a.index-b.index) })
	h := &Histories{Sha: sha, r: r, ctx: ctx}
	for _, e := range es {
		if n := len(h.Hosts); n == 0 || h.Hosts[n-1].Host != e.host {
			h.Hosts = append(h.Hosts, HostHistory{Host: e.host})
		}
		last := &h.Hosts[len(h.Hosts)-1]
		last.Pieces = append(last.Pieces, e.blob)
	}
	return h, nil
}

// Reader reads host's history: its pieces one after the other, each read
// whole when the one before is done.
func (h *Histories) Reader(host HostHistory) io.Reader {
	return &pieceReader{h: h, pieces: host.Pieces}
}

// Close ends the git process that read the histories, if any.
func (h *Histories) Close() error {
	if h.cmd == nil {
		return nil
	}
	return h.cmd.close()
}

type pieceReader struct {
	h      *Histories
	pieces []string
	cur    []byte
}

func (p *pieceReader) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if len(p.pieces) == 0 {
			return 0, io.EOF
		}
		if p.h.cmd == nil {
			c, err := p.h.r.catFile(p.h.ctx)
			if err != nil {
				return 0, err
			}
			p.h.cmd = c
		}
		data, err := p.h.cmd.blob(p.pieces[0])
		if err != nil {
			return 0, err
		}
		p.cur, p.pieces = data, p.pieces[1:]
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// catFile is a git cat-file --batch process of the repository: blobs
// read one at a time, each whole.
type catFile struct {
	s   *git.Stream
	out *bufio.Reader
}

// catFile starts the process, bounded by ctx alone: it lives as long as
// the histories are read.
func (r *Remote) catFile(ctx context.Context) (*catFile, error) {
	s, err := git.Runner{Dir: r.dir, Timeout: git.NoTimeout}.Start(ctx, "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("reading the histories: %w", err)
	}
	return &catFile{s: s, out: bufio.NewReaderSize(s.Stdout, 64<<10)}, nil
}

// blob reads the blob id.
func (c *catFile) blob(id string) ([]byte, error) {
	if _, err := io.WriteString(c.s.Stdin, id+"\n"); err != nil {
		return nil, fmt.Errorf("reading blob %.12s: %w", id, err)
	}
	head, err := c.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("reading blob %.12s: %w", id, err)
	}
	f := strings.Fields(head)
	if len(f) != 3 || f[1] != "blob" {
		return nil, fmt.Errorf("reading blob %.12s: git cat-file said %q", id, strings.TrimSpace(head))
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size > 1<<30 {
		return nil, fmt.Errorf("reading blob %.12s: git cat-file said %q", id, strings.TrimSpace(head))
	}
	data := make([]byte, size+1) // and its newline
	if _, err := io.ReadFull(c.out, data); err != nil {
		return nil, fmt.Errorf("reading blob %.12s: %w", id, err)
	}
	return data[:size], nil
}

func (c *catFile) close() error {
	return c.s.Wait()
}
