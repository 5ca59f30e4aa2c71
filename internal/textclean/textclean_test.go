package textclean

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain\ttext\nline two\n", "plain\ttext\nline two\n"},
		{"nul\x00byte", `nul\x00byte`},
		{"bell\x07 del\x7f", `bell\x07 del\x7f`},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"bad \xff\xfe utf8", "bad \uFFFD\uFFFD utf8"},
		{"c1 \u0085 next", `c1 \u0085 next`},
		{"crlf\r\nline\r\n", "crlf\nline\n"},
		{"10%\r50%\r100%\ndone", "100%\ndone"},
		{"keep \uFFFD as is", "keep \uFFFD as is"},
	} {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\n## ISSUE-1\tb\x00"), `a ## ISSUE-1 b\x00`; got != want {
		t.Errorf("Line = %q; want %q", got, want)
	}
}

func TestProblem(t *testing.T) {
	for _, tt := range []struct {
		in   string
		what string
		at   int
	}{
		{"ok\ttext\n", "", -1},
		{"a\x00b", "NUL byte", 1},
		{"ab\x1b[0m", "control byte 0x1b", 2},
		{"abc\xff", "invalid UTF-8", 3},
		{"é\u0085", "control character U+0085", 2},
		{"x\ry", "control byte 0x0d", 1},
	} {
		what, at, bad := Problem(tt.in)
		if bad != (tt.at >= 0) || bad && (what != tt.what || at != tt.at) {
			t.Errorf("Problem(%q) = %q, %d, %v; want %q, %d", tt.in, what, at, bad, tt.what, tt.at)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "a\x00b", "\x1b[1m", "\xff", "x\r\ny\rz", "\x1b]", "\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Text(s)
		if !Clean(got) || !utf8.ValidString(got) {
			t.Fatalf("Text(%q) = %q: not clean", s, got)
		}
		if Text(got) != got {
			t.Fatalf("Text(Text(%q)) changed it", s)
		}
		if Clean(s) && !strings.Contains(s, "\r") && got != s {
			t.Fatalf("Text(%q) = %q: clean text changed", s, got)
		}
		if l := Line(s); strings.ContainsAny(l, "\n\t") || !Clean(l) {
			t.Fatalf("Line(%q) = %q", s, l)
		}
	})
}
