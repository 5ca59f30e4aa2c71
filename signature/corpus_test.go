package signature

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/normalized from the corpus")

// A capture is one run of a real tool, recorded by testdata/gen.sh.
type capture struct {
	name   string
	output []byte
	exit   int
	opt    Options
}

// loadCorpus reads testdata/corpus: the captures listed in runs.tsv
// (NAME, EXIT, WORKDIR, HOME, tab-separated).
func loadCorpus(tb testing.TB) map[string]capture {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus", "runs.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	corpus := map[string]capture{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			tb.Fatalf("runs.tsv:%d: %d fields; want 4", n, len(fields))
		}
		exit, err := strconv.Atoi(fields[1])
		if err != nil {
			tb.Fatalf("runs.tsv:%d: %v", n, err)
		}
		name := fields[0] + ".txt"
		out, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			tb.Fatal(err)
		}
		corpus[name] = capture{name, out, exit, Options{Workdir: fields[2], Home: fields[3]}}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(corpus) == 0 {
		tb.Fatal("empty corpus")
	}
	return corpus
}

// TestCorpusNormalized compares the normalized text of every capture with
// testdata/normalized/NAME, so that a change of rules shows there, line by
// line, for review; "go test ./signature -run TestCorpusNormalized -update"
// rewrites them. Captures named empty-* must normalize to nothing, the rest
// to something, and normalizing a normalized text must change nothing.
func TestCorpusNormalized(t *testing.T) {
	for name, c := range loadCorpus(t) {
		got := Normalize(c.output, c.opt)
		if want := strings.HasPrefix(name, "empty-"); Empty(got) != want {
			t.Errorf("Empty(Normalize(%s)) = %v; want %v", name, Empty(got), want)
		}
		if again := Normalize([]byte(got), c.opt); again != got {
			t.Errorf("Normalize(Normalize(%s)) differs:\n%s", name, lineDiff(got, again))
		}
		golden := filepath.Join("testdata", "normalized", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("Normalize(%s) differs from %s:\n%s", name, golden, lineDiff(string(want), got))
		}
	}
}

// A pair is a line of testdata/pairs.txt: "same A B reason" or
// "different A B reason".
type pair struct {
	line   int
	same   bool
	a, b   string
	reason string
}

func loadPairs(t *testing.T) []pair {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pairs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs []pair
	for n, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 4 || f[0] != "same" && f[0] != "different" {
			t.Fatalf("pairs.txt:%d: want \"same|different A B reason\", got %q", n+1, l)
		}
		pairs = append(pairs, pair{line: n + 1, same: f[0] == "same", a: f[1], b: f[2], reason: strings.Join(f[3:], " ")})
	}
	return pairs
}

// TestPairs asserts every labelled pair of captures: "same" pairs are one
// failure seen on two runs and must have one signature; "different" pairs
// are two failures and must not.
func TestPairs(t *testing.T) {
	corpus := loadCorpus(t)
	used := map[string]bool{}
	counts := map[bool]int{}
	for _, p := range loadPairs(t) {
		ca, okA := corpus[p.a]
		cb, okB := corpus[p.b]
		if !okA || !okB {
			t.Errorf("pairs.txt:%d: unknown capture %s or %s", p.line, p.a, p.b)
			continue
		}
		used[p.a], used[p.b] = true, true
		counts[p.same]++
		sigA, normA := Of(ca.output, ClassOf(ca.exit), ca.opt)
		sigB, normB := Of(cb.output, ClassOf(cb.exit), cb.opt)
		if (sigA == sigB) != p.same {
			verb := "differ"
			if sigA == sigB {
				verb = "are equal"
			}
			t.Errorf("pairs.txt:%d: %s %s %s (%s): signatures %s\nclasses %s, %s\n%s",
				p.line, map[bool]string{true: "same", false: "different"}[p.same], p.a, p.b, p.reason, verb,
				ClassOf(ca.exit), ClassOf(cb.exit), lineDiff(normA, normB))
		}
	}
	for name := range corpus {
		if !used[name] {
			t.Errorf("capture %s is in no pair", name)
		}
	}
	t.Logf("%d same pairs, %d different pairs", counts[true], counts[false])
}

// lineDiff shows how text b differs from text a, line by line ("-" for a
// line only in a, "+" for a line only in b), around a longest common
// subsequence of lines: enough to see which rule is missing.
func lineDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	// lcs[i][j]: the length of a longest common subsequence of la[i:], lb[j:].
	lcs := make([][]int, len(la)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(lb)+1)
	}
	for i := len(la) - 1; i >= 0; i-- {
		for j := len(lb) - 1; j >= 0; j-- {
			if la[i] == lb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var buf bytes.Buffer
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		switch {
		case i < len(la) && j < len(lb) && la[i] == lb[j]:
			fmt.Fprintf(&buf, "    %s\n", la[i])
			i, j = i+1, j+1
		case j == len(lb) || i < len(la) && lcs[i+1][j] >= lcs[i][j+1]:
			fmt.Fprintf(&buf, "  - %s\n", la[i])
			i++
		default:
			fmt.Fprintf(&buf, "  + %s\n", lb[j])
			j++
		}
	}
	return buf.String()
}
