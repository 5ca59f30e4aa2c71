package signature

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalize checks, for any output: no panic; the same result twice;
// normalizing the normalized text changes nothing (it is a fixed point); and
// the result is clean text (valid UTF-8, no CR or ESC, no trailing blanks).
func FuzzNormalize(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.output, c.opt.Workdir)
	}
	for _, tt := range normalizeTests {
		f.Add([]byte(tt.in), tt.opt.Workdir)
	}
	for _, tt := range structureTests {
		for _, in := range tt.in {
			f.Add([]byte(in), "")
		}
	}
	f.Fuzz(func(t *testing.T, output []byte, workdir string) {
		opt := Options{Workdir: workdir, Home: "/root"}
		got := Normalize(output, opt)
		if again := Normalize(output, opt); again != got {
			t.Fatalf("Normalize(%q) is not deterministic: %q, then %q", output, got, again)
		}
		if twice := Normalize([]byte(got), opt); twice != got {
			t.Fatalf("Normalize(%q) = %q; normalized again: %q", output, got, twice)
		}
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\r\x1b") {
			t.Fatalf("Normalize(%q) = %q: not clean text", output, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if strings.TrimRight(l, " \t") != l {
				t.Fatalf("Normalize(%q) = %q: a line ends in blanks", output, got)
			}
		}
		if Compute(output, Fail, opt) != hash(Fail, got) {
			t.Fatalf("Compute(%q) is not the hash of Normalize", output)
		}
	})
}
