package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/config"
)

// TestLogCap pins the bound at its edge: head + tail bytes are kept whole,
// one byte more leaves that byte out, with a marker saying so.
func TestLogCap(t *testing.T) {
	const head, tail = 10, 5
	for _, tt := range []struct {
		in, want string
	}{
		{"", ""},
		{"0123456789", "0123456789"},
		{"0123456789abcde", "0123456789abcde"},
		{"0123456789abcdef", "0123456789\n[… orchestrate: 1 bytes of output left out of this log; the first and the last are kept (output.log_head_bytes, output.log_tail_bytes) …]\nbcdef"},
		{strings.Repeat("x", 10) + strings.Repeat("-", 1000) + "tail!", "xxxxxxxxxx\n[… orchestrate: 1000 bytes of output left out of this log; the first and the last are kept (output.log_head_bytes, output.log_tail_bytes) …]\ntail!"},
	} {
		for _, chunk := range []int{1, 3, 1 << 20} {
			path := filepath.Join(t.TempDir(), "g.log")
			l := createLog(path, config.Output{LogHeadBytes: head, LogTailBytes: tail})
			for s := tt.in; len(s) > 0; {
				n := min(chunk, len(s))
				l.Write([]byte(s[:n]))
				s = s[n:]
			}
			if err := l.finish(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if made := err == nil; made != (tt.in != "") || made != l.made() {
				t.Errorf("log of %d bytes: file made %v (made() %v); want it made only when there is output", len(tt.in), made, l.made())
			}
			if string(got) != tt.want {
				t.Errorf("log of %d bytes in chunks of %d = %q; want %q", len(tt.in), chunk, got, tt.want)
			}
		}
	}
}

// TestLogOfARunawayGate: a gate that never stops printing leaves a log of
// its bound, not of its output.
func TestLogOfARunawayGate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.log")
	g := gateOf("g", "yes orchestrate | head -c 3000000; exit 1")
	r, err := Run(t.Context(), g, Options{Output: config.Output{LogHeadBytes: 1000, LogTailBytes: 1000}}, path)
	if err != nil || r.OutputBytes != 3000000 {
		t.Fatalf("Run = %v, %d bytes", err, r.OutputBytes)
	}
	info, err := os.Stat(path)
	if err != nil || info.Size() > 2300 || info.Size() < 2000 {
		t.Errorf("log of %d bytes; want head and tail, 2000, and a marker", info.Size())
	}
}

// TestLogThroughALinkIsRefused: a gate's log that is a symbolic link is not
// written through; the gate runs all the same, its log error apart.
func TestLogThroughALinkIsRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), ".bashrc")
	os.WriteFile(target, []byte("# rc\n"), 0o644)
	log := filepath.Join(dir, "g.log")
	os.Symlink(target, log)
	r, err := Run(t.Context(), gateOf("g", "echo 'x;echo PWNED;#'"), Options{}, log)
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") || r.Outcome != Pass || r.LogPath != "" {
		t.Errorf("Run with its log a link = %s, log %q, %v; want a pass and the log refused", r.Outcome, r.LogPath, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "# rc\n" {
		t.Errorf("the link's target became %q", b)
	}
}
