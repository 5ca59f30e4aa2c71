package results

import (
	"os"
	"slices"
	"testing"
)

// fail is a failed unit of gate "tests" (or of gate g, when the ID names
// one as "g: id").
func fail(s string) Failed {
	u := ParseUnit(s)
	return Failed{Unit: u, Block: "--- FAIL: " + u.String() + "\n"}
}

func unitsOf(fs []Failed) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Unit.String())
	}
	return out
}

func strs(us []Unit) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.String())
	}
	return out
}

func TestJudge(t *testing.T) {
	tests := Report{Gate: "tests", Runner: "go"}
	with := func(r Report, failed ...string) Report {
		for _, s := range failed {
			r.Failed = append(r.Failed, fail(s))
		}
		return r
	}
	passed := func(r Report, ids ...string) Report {
		r.Passed = ids
		return r
	}
	whole := func(gate string, failed bool) Report {
		r := Report{Gate: gate, Whole: true}
		if failed {
			r.Failed = []Failed{fail(gate)}
		}
		return r
	}
	red := []Report{with(tests, "tests: p TestA", "tests: p TestB", "tests: p TestC")}
	for _, tc := range []struct {
		name        string
		own         []string
		now, base   []Report
		pass        bool
		wantOwn     []string
		regressions []string
		fixed       []string
		others      []string
		learned     []string
		nothing     bool
	}{
		{name: "own still failing", own: []string{"tests: p TestA"},
			now: red, base: red,
			wantOwn: []string{"tests: p TestA"}, others: []string{"tests: p TestB", "tests: p TestC"}},
		{name: "own passes, others stay red: a pass", own: []string{"tests: p TestA"},
			now: []Report{with(tests, "tests: p TestB", "tests: p TestC")}, base: red, pass: true,
			fixed: []string{"tests: p TestA"}, others: []string{"tests: p TestB", "tests: p TestC"}},
		{name: "a test that passed on the baseline fails now", own: []string{"tests: p TestA"},
			now: []Report{with(tests, "tests: p TestB", "tests: p TestC", "tests: p TestD")}, base: red,
			regressions: []string{"tests: p TestD"}, fixed: []string{"tests: p TestA"}, others: []string{"tests: p TestB", "tests: p TestC"}},
		{name: "a gate that passed on the baseline fails as a whole", own: []string{"tests: p TestA"},
			now: []Report{tests, whole("lint", true)}, base: []Report{with(tests, "tests: p TestA"), whole("lint", false)},
			regressions: []string{"lint"}, fixed: []string{"tests: p TestA"}},
		{name: "a gate absent from the baseline passed there", own: []string{"tests: p TestA"},
			now: []Report{tests, whole("review", true)}, base: []Report{with(tests, "tests: p TestA")},
			regressions: []string{"review"}, fixed: []string{"tests: p TestA"}},
		{name: "the build breaks: a whole failure where the baseline had tests", own: []string{"tests: p TestA"},
			now: []Report{whole("tests", true)}, base: red,
			wantOwn: []string{"tests"}},
		{name: "the build breaks in another gate: a regression", own: []string{"tests: p TestA"},
			now: []Report{tests, whole("build", true)}, base: []Report{with(tests, "tests: p TestA"), {Gate: "build"}},
			regressions: []string{"build"}, fixed: []string{"tests: p TestA"}},
		{name: "a unit failing in a gate whole on the baseline is not a regression", own: []string{"tests: p TestA"},
			now: []Report{tests, with(Report{Gate: "lint", Runner: "lint"}, "lint: a.go: errcheck: x")}, base: []Report{with(tests, "tests: p TestA"), whole("lint", true)}, pass: true,
			fixed: []string{"tests: p TestA"}, others: []string{"lint: a.go: errcheck: x"}},
		{name: "whole gates: own gate fixed, the others red on both", own: []string{"a"},
			now: []Report{whole("a", false), whole("b", true)}, base: []Report{whole("a", true), whole("b", true)}, pass: true,
			fixed: []string{"a"}, others: []string{"b"}},
		{name: "an own whole gate holds each of its units", own: []string{"tests"},
			now: red, base: red,
			wantOwn: []string{"tests: p TestA", "tests: p TestB", "tests: p TestC"}},
		{name: "own unit absent, the runner lists only failures: a pass", own: []string{"tests: p TestA"},
			now: []Report{tests}, base: red, pass: true,
			fixed: []string{"tests: p TestA", "tests: p TestB", "tests: p TestC"}},
		{name: "the runner printed nothing of its own now: the own test is not seen", own: []string{"tests: p TestA"},
			now: []Report{{Gate: "tests", Whole: true}}, base: red,
			wantOwn: []string{"tests: p TestA"}},
		{name: "no tests, red baseline, the runner printed nothing of its own: nothing fixed", own: nil,
			now: []Report{{Gate: "tests", Whole: true}}, base: red, nothing: true},
		{name: "a linter that prints nothing fixed its finding", own: []string{"lint: a.go: errcheck: x"},
			now: []Report{{Gate: "lint", Whole: true}}, base: []Report{with(Report{Gate: "lint", Runner: "lint"}, "lint: a.go: errcheck: x")}, pass: true,
			fixed: []string{"lint: a.go: errcheck: x"}},
		{name: "own unit absent, the runner lists passes without it", own: []string{"tests: p TestA"},
			now: []Report{passed(tests, "p TestB")}, base: []Report{with(tests, "tests: p TestA")},
			wantOwn: []string{"tests: p TestA"}},
		{name: "own unit listed as passed", own: []string{"tests: p TestA"},
			now: []Report{passed(tests, "p TestA")}, base: []Report{with(tests, "tests: p TestA")}, pass: true,
			fixed: []string{"tests: p TestA"}},
		{name: "own unit's gate did not run", own: []string{"tests: p TestA"},
			now: []Report{whole("build", false)}, base: []Report{with(tests, "tests: p TestA"), whole("build", false)},
			wantOwn: []string{"tests: p TestA"}},
		{name: "no tests, red baseline, one turned green: learned", own: nil,
			now: []Report{with(tests, "tests: p TestB", "tests: p TestC")}, base: red, pass: true,
			fixed: []string{"tests: p TestA"}, learned: []string{"tests: p TestA"}, others: []string{"tests: p TestB", "tests: p TestC"}},
		{name: "no tests, red baseline, nothing turned green", own: nil,
			now: red, base: red, nothing: true,
			others: []string{"tests: p TestA", "tests: p TestB", "tests: p TestC"}},
		{name: "no tests, red baseline, a test removed is not fixed when passes are listed", own: nil,
			now: []Report{passed(with(tests, "tests: p TestB"), "p TestC")}, base: []Report{with(tests, "tests: p TestA", "tests: p TestB")}, nothing: true,
			others: []string{"tests: p TestB"}},
		{name: "no tests, green baseline, green now", own: nil,
			now: []Report{tests}, base: []Report{tests}, pass: true},
		{name: "no tests, green baseline, a failure is a regression", own: nil,
			now: red, base: []Report{tests},
			regressions: []string{"tests: p TestA", "tests: p TestB", "tests: p TestC"}},
		{name: "no baseline: every failure not held is a regression", own: []string{"tests: p TestA"},
			now: red, base: nil,
			wantOwn: []string{"tests: p TestA"}, regressions: []string{"tests: p TestB", "tests: p TestC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var own []Unit
			for _, s := range tc.own {
				own = append(own, ParseUnit(s))
			}
			v := Judge(own, tc.now, tc.base)
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Errorf("%s = %q; want %q", what, got, want)
				}
			}
			if v.Pass != tc.pass {
				t.Errorf("Pass = %v; want %v", v.Pass, tc.pass)
			}
			if v.NothingFixed != tc.nothing {
				t.Errorf("NothingFixed = %v; want %v", v.NothingFixed, tc.nothing)
			}
			check("Own", unitsOf(v.Own), tc.wantOwn)
			check("Regressions", unitsOf(v.Regressions), tc.regressions)
			check("Fixed", strs(v.Fixed), tc.fixed)
			check("Others", unitsOf(v.Others), tc.others)
			check("Learned", strs(v.Learned), tc.learned)
			check("Counted", unitsOf(v.Counted()), append(slices.Clone(tc.wantOwn), tc.regressions...))
		})
	}
}

// TestJudgeOwnBlockSaysWhy: an own unit that cannot be seen to pass is a
// failure whose block says why, for the agent's feedback.
func TestJudgeOwnBlockSaysWhy(t *testing.T) {
	v := Judge([]Unit{{Gate: "tests", ID: "p TestA"}}, []Report{{Gate: "build"}}, nil)
	if len(v.Own) != 1 || v.Own[0].Block == "" {
		t.Fatalf("Own = %+v; want one failure with a block", v.Own)
	}
	if v.Pass {
		t.Error("Pass = true for a test whose gate did not run")
	}
}

// vitest lists a file's tests only when one of them failed: a
// file listed as passing whole stands for each of its tests, and for no
// other file's, nor for a file whose name only begins the same.
func TestSeenPassingByItsFile(t *testing.T) {
	passed := []string{"test/a.test.ts", "test/b.test.ts › suite › x"}
	for id, want := range map[string]bool{
		"test/a.test.ts › suite › name": true,
		"test/a.test.ts › name":         true,
		"test/b.test.ts › suite › x":    true,
		"test/b.test.ts › suite › y":    false,
		"test/a.test.tsx › name":        false,
		"test/c.test.ts › name":         false,
	} {
		if got := seenPassing(&Report{Passed: passed}, nil, id); got != want {
			t.Errorf("seenPassing(%q) = %v; want %v", id, got, want)
		}
	}
	own := []Unit{{Gate: "tests", ID: "test/a.test.ts › suite › name"}}
	now := []Report{{Gate: "tests", Runner: "vitest", Passed: []string{"test/a.test.ts"}}}
	base := []Report{{Gate: "tests", Runner: "vitest", Failed: []Failed{fail("tests: test/a.test.ts › suite › name")}}}
	if v := Judge(own, now, base); !v.Pass {
		t.Errorf("the issue's test in a file that passed whole: Judge = %+v; want a pass", v)
	}
}

// vitest's line of a passing file with skipped tests ("✓ file (2 tests |
// 1 skipped)") stands for its tests only beside a baseline that skipped
// as many there: an attempt that skips its issue's test is not a pass,
// one beside a test skipped before is.
func TestJudgeVitestSkippedInFile(t *testing.T) {
	out, err := os.ReadFile("testdata/out/vitest-skip.txt")
	if err != nil {
		t.Fatal(err)
	}
	skipped := NewReader("tests", genOptions())
	skipped.Write(out)
	now := []Report{skipped.Report(true)}
	own := []Unit{{Gate: "tests", ID: "src/words.test.js › lower"}}
	base := []Report{{Gate: "tests", Runner: "vitest", Failed: append(slices.Clone(now[0].Failed), fail("tests: src/words.test.js › lower"))}}
	if v := Judge(own, now, base); v.Pass || len(v.Own) != 1 {
		t.Errorf("the issue's test skipped in a file that passed: Judge = %+v; want its test not seen", v)
	}
	other := []Unit{{Gate: "tests", ID: "src/words.test.js › upper"}}
	base = []Report{now[0]}
	base[0].Failed = append(slices.Clone(base[0].Failed), fail("tests: src/words.test.js › upper"))
	if v := Judge(other, now, base); !v.Pass {
		t.Errorf("a test beside one skipped on the baseline too: Judge = %+v; want a pass", v)
	}
}
