package results

import (
	"slices"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// junitSample is a JUnit report as pytest --junitxml writes one.
const junitSample = `<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="3">
<testcase classname="tests.test_calc" name="test_add" time="0.001"><failure message="assert 4 == 3">def test_add():
&gt;       assert add(1, 2) == 3
E       assert 4 == 3</failure></testcase>
<testcase classname="tests.test_calc" name="test_sub" time="0.001"/>
<testcase classname="tests.test_calc" name="test_skip" time="0.001"><skipped message="later"/></testcase>
</testsuite></testsuites>`

func TestReadJUnit(t *testing.T) {
	rep := ReadJUnit("tests", []byte(junitSample), signature.Options{})
	if rep.Runner != "junit" || rep.Whole || len(rep.Failed) != 1 {
		t.Fatalf("report %+v", rep)
	}
	f := rep.Failed[0]
	if f.ID != "tests.test_calc test_add" || !strings.Contains(f.Block, "assert 4 == 3") {
		t.Errorf("failure %q, block %q", f.ID, f.Block)
	}
	if sig, _ := Sign([]Failed{f}, signature.Options{}); sig != f.Signature {
		t.Errorf("signature %s, Sign gives %s", f.Signature, sig)
	}
	if !slices.Equal(rep.Passed, []string{"tests.test_calc test_sub"}) {
		t.Errorf("passed %q", rep.Passed)
	}
	if bad := ReadJUnit("tests", []byte("<testsuite"), signature.Options{}); !bad.Whole || bad.Runner != "" || len(bad.Failed) != 1 {
		t.Errorf("a broken report: %+v", bad)
	}
}

func TestReadReport(t *testing.T) {
	opt := signature.Options{}
	if rep, err := ReadReport("tests", []byte(junitSample), true, opt); err != nil || rep.Runner != "junit" {
		t.Errorf("JUnit: %+v, %v", rep, err)
	}
	events := `{"Action":"pass","Package":"m","Test":"TestA"}` + "\n"
	if rep, err := ReadReport("tests", []byte(events), false, opt); err != nil || rep.Runner != "go-json" || !slices.Equal(rep.Passed, []string{"m TestA"}) {
		t.Errorf("go test -json: %+v, %v", rep, err)
	}
	for _, bad := range []string{"", "plain text", "{not json}", "<x"} {
		if _, err := ReadReport("tests", []byte(bad), true, opt); err == nil {
			t.Errorf("%q read as a report", bad)
		}
	}
}

// TestLimits: a failure block is cut at MaxBlock, and the failures past
// MaxUnits are counted, not kept.
func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("--- FAIL: TestBig (0.00s)\n")
	for range 2000 {
		b.WriteString("    big_test.go:1: " + strings.Repeat("x", 30) + "\n")
	}
	for i := range MaxUnits + 5 {
		b.WriteString("--- FAIL: TestN" + strings.Repeat("a", i%7) + string(rune('A'+i%26)) + itoa(i) + " (0.00s)\n")
	}
	b.WriteString("FAIL\tm\t0.1s\n")
	rep := Read("tests", []byte(b.String()), signature.Options{})
	if len(rep.Failed) != MaxUnits || rep.More != 6 {
		t.Fatalf("%d failures kept, %d more", len(rep.Failed), rep.More)
	}
	if blk := rep.Failed[0].Block; len(blk) > MaxBlock || !strings.HasSuffix(blk, cutNote) {
		t.Errorf("block of %d bytes, ending %q", len(blk), blk[max(0, len(blk)-80):])
	}
}

func itoa(i int) string {
	s := ""
	for {
		s = string(rune('0'+i%10)) + s
		if i /= 10; i == 0 {
			return s
		}
	}
}

// TestReadUnknown: output of no runner it knows is the whole gate, and
// a known runner's passing output passes.
func TestReadUnknown(t *testing.T) {
	rep := Read("build", []byte("make: *** [all] Error 1\n"), signature.Options{})
	if !rep.Whole || rep.Runner != "" || len(rep.Failed) != 1 || rep.Failed[0].ID != "" || rep.Failed[0].Gate != "build" {
		t.Errorf("unknown output: %+v", rep)
	}
	r := NewReader("build", signature.Options{})
	r.Write([]byte("all good\n"))
	if rep := r.Report(false); !rep.Passing() || !rep.Whole {
		t.Errorf("unknown output of a passing gate: %+v", rep)
	}
	if rep := Read("tests", []byte("ok  \tm\t0.1s\n"), signature.Options{}); !rep.Passing() || rep.Whole || rep.Runner != "go" {
		t.Errorf("passing go test: %+v", rep)
	}
}
