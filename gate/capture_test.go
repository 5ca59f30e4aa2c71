package gate

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/signature"
)

func captured(head, tail int, chunks ...string) (*capture, *bytes.Buffer) {
	var log bytes.Buffer
	c := newCapture(config.Output{HeadBytes: head, TailBytes: tail}, &log)
	for _, s := range chunks {
		c.Write([]byte(s))
	}
	return c, &log
}

func TestCapture(t *testing.T) {
	for _, tt := range []struct {
		name       string
		head, tail int
		chunks     []string
		want       string
		omitted    int64
	}{
		{"fits", 8, 8, []string{"hello ", "world"}, "hello world", 0},
		{"exactly head and tail", 4, 4, []string{"abcdefgh"}, "abcdefgh", 0},
		{"middle dropped", 4, 4, []string{"abcd", "XXXXXX", "efgh"}, "abcd\n… 6 bytes omitted …\nefgh", 6},
		{"one big chunk", 3, 3, []string{strings.Repeat("x", 100) + "end"}, "xxx\n… 97 bytes omitted …\nend", 97},
		{"ring wraps many times", 2, 5, []string{"ab", "1234", "5678", "9", "0"}, "ab\n… 5 bytes omitted …\n67890", 5},
		{"cut on line boundaries", 10, 10, []string{"line1\nline2\n", "middle\n", "line3\nline4\n"},
			"line1\n… 19 bytes omitted …\nline4\n", 19},
		{"cut inside a rune", 4, 4, []string{"abc€", "zzzzzz", "€xyz"}, "abc\n… 12 bytes omitted …\nxyz", 12},
		{"no tail", 4, 0, []string{"abcdef"}, "abcd\n… 2 bytes omitted …\n", 2},
		{"nothing kept", 0, 0, []string{"abc"}, "… 3 bytes omitted …\n", 3},
	} {
		c, log := captured(tt.head, tt.tail, tt.chunks...)
		all := strings.Join(tt.chunks, "")
		if got := c.String(); got != tt.want {
			t.Errorf("%s: String() = %q; want %q", tt.name, got, tt.want)
		}
		if c.total != int64(len(all)) || log.String() != all {
			t.Errorf("%s: total %d, log %q; want %d, everything", tt.name, c.total, log.String(), len(all))
		}
		if tt.omitted == 0 && c.omitted() != 0 {
			t.Errorf("%s: omitted() = %d; want 0", tt.name, c.omitted())
		}
	}
}

// TestCaptureTailMadeWhenNeeded: a gate that prints less than the head
// holds no tail (16 KiB by default, each gate's); one that prints past it
// gets the whole tail.
func TestCaptureTailMadeWhenNeeded(t *testing.T) {
	quiet, _ := captured(config.DefaultHeadBytes, config.DefaultTailBytes, "ok\n")
	if quiet.tail != nil {
		t.Errorf("a tail of %d bytes for 3 bytes of output", len(quiet.tail))
	}
	loud, _ := captured(4, 8, "abcd", "e")
	if len(loud.tail) != 8 || loud.String() != "abcde" {
		t.Errorf("past the head: tail of %d bytes, %q; want 8, \"abcde\"", len(loud.tail), loud.String())
	}
}

func TestExcerpt(t *testing.T) {
	for _, tt := range []struct {
		in       string
		lines    int
		bytes    int
		want     string
		wantsCut bool
	}{
		{"a\nb\nc\n", 5, 100, "a\nb\nc", false},
		{"a\nb\nc\nd\n", 2, 100, "c\nd", true},
		{"\x1b[31mred\x1b[0m\nplain", 5, 100, "red\nplain", false},
		{"progress 10%\rprogress 100%\ndone\r\n", 5, 100, "progress 100%\ndone", false},
		{"first line\nsecond line\n", 5, 14, "second line", true},
		{strings.Repeat("é", 10), 5, 5, "éé", true},
		{"", 5, 100, "", false},
	} {
		got, cut := Excerpt(tt.in, tt.lines, tt.bytes)
		if got != tt.want || cut != tt.wantsCut {
			t.Errorf("Excerpt(%q, %d, %d) = %q, %v; want %q, %v", tt.in, tt.lines, tt.bytes, got, cut, tt.want, tt.wantsCut)
		}
	}
}

func TestFence(t *testing.T) {
	for in, want := range map[string]string{"plain": "```", "a ``` b": "````", "`````": "``````"} {
		if got := fence(in); got != want {
			t.Errorf("fence(%q) = %q; want %q", in, got, want)
		}
	}
}

// A gate's output is signed whole as it streams, not from the head and tail
// kept in memory, and a failure line from the dropped middle is kept.
func TestRunSignsTheWholeOutput(t *testing.T) {
	dir := t.TempDir()
	script := `echo start; i=0; while [ $i -lt 3000 ]; do echo "filler line $i"; i=$((i+1)); done; ` +
		`echo "--- FAIL: TestMiddle (0.00s)"; echo "    mid_test.go:7: got $1 want 4"; ` +
		`i=0; while [ $i -lt 3000 ]; do echo "more filler $i"; i=$((i+1)); done; exit 1`
	run := func(arg string) Result {
		r, err := Run(context.Background(), config.Gate{Name: "t", Command: "sh -c '" + script + "' sh " + arg},
			Options{RepoRoot: dir, Output: config.Output{HeadBytes: 1024, TailBytes: 1024}}, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run("3"), run("5")
	if a.Omitted == 0 || strings.Contains(a.Output, "TestMiddle") {
		t.Fatalf("the middle was kept: the case proves nothing")
	}
	if a.Digest == nil || b.Digest == nil || a.Digest.Signature(signature.Fail) == b.Digest.Signature(signature.Fail) {
		t.Fatalf("got 3 and got 5 in the dropped middle sign the same (digests %v, %v)", a.Digest, b.Digest)
	}
	if !strings.Contains(strings.Join(a.Marks, "\n"), "--- FAIL: TestMiddle (0.00s)\n    mid_test.go:7: got 3 want 4") {
		t.Errorf("Marks = %q", a.Marks)
	}
	again := run("3")
	if again.Digest.Signature(signature.Fail) != a.Digest.Signature(signature.Fail) {
		t.Errorf("the same output signs differently")
	}
	if a.Digest.Bytes != a.OutputBytes {
		t.Errorf("Digest.Bytes = %d; OutputBytes = %d", a.Digest.Bytes, a.OutputBytes)
	}
}
