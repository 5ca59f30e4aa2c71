package results

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
)

var (
	// "===== FAILURES =====", "==== short test summary info ====".
	rePySection = lazyre.New(`^={3,} (.+?) ={3,}$`)
	// "_____ test_add _____", "____ ERROR at setup of test_x ____".
	rePyHeader = lazyre.New(`^_{3,} (.+?) _{3,}$`)
	// The short summary: "FAILED tests/test_x.py::test_y - msg", "ERROR path".
	rePySummary = lazyre.New(`^(FAILED|ERROR) (\S+)(?: - .*)?$`)
	// pytest -v: "tests/test_x.py::test_y PASSED   [ 50%]"; -rA: "PASSED nodeid".
	rePyVerbose = lazyre.New(`^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b`)
	rePyPassed  = lazyre.New(`^PASSED (\S+::\S+)$`)
	// The counts: "2 failed, 4 passed in 0.1s", with -q without "=".
	rePyCounts = lazyre.New(`^(?:=+ )?\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?)(?:, \d+ \w+)* in [\d.]+s`)
	// The location that ends a failure block: "tests/test_x.py:9: AssertionError".
	rePyLocation = lazyre.New(`^(\S+\.py):\d+: `)
)

// pyBlock is one failure block of the FAILURES or ERRORS section, under
// its header.
type pyBlock struct {
	name  string // the header: "test_add", "TestWords.test_upper"
	file  string // from its location line
	block boundedText
}

// pytest reads pytest's output (-q, default, -v): a unit is a test's node
// ID ("tests/test_x.py::TestC::test_y[1]"), its block the test's section
// under FAILURES or ERRORS. A collection error fails the gate whole.
type pytest struct {
	u       *units
	seen    bool
	section string // the section being read, in lower case
	blocks  []*pyBlock
	cur     *pyBlock
	summary []string // the node IDs of the short summary, in order
}

func newPytest() *pytest { return &pytest{u: newUnits()} }

func (p *pytest) runner() string   { return "pytest" }
func (p *pytest) recognized() bool { return p.seen }

func (p *pytest) line(l string) {
	if strings.HasPrefix(l, "===") {
		if m := rePySection.FindStringSubmatch(l); m != nil {
			p.startSection(strings.ToLower(m[1]))
			return
		}
	}
	if rePyCounts.MatchString(l) {
		p.seen, p.section, p.cur = true, "", nil
		return
	}
	if strings.HasPrefix(l, "!!!") && strings.Contains(l, "during collection") {
		p.u.setWhole()
		return
	}
	switch p.section {
	case "failures", "errors":
		p.blockLine(l)
	case "short test summary info":
		if m := rePySummary.FindStringSubmatch(l); m != nil {
			if !strings.Contains(m[2], "::") {
				p.u.setWhole() // "ERROR tests/test_x.py": its collection
			} else {
				p.summary = append(p.summary, m[2])
			}
		} else if m := rePyPassed.FindStringSubmatch(l); m != nil {
			p.u.pass(m[1])
		}
	default:
		if !strings.Contains(l, "::") {
			return
		}
		if m := rePyVerbose.FindStringSubmatch(l); m != nil && m[2] == "PASSED" {
			p.u.pass(m[1])
		}
	}
}

func (p *pytest) startSection(name string) {
	p.section, p.cur = name, nil
	switch {
	case name == "test session starts", name == "failures", name == "errors", name == "short test summary info":
		p.seen = true
	case strings.HasPrefix(name, "warnings summary"), name == "passes":
	}
}

// blockLine reads a line of the FAILURES or ERRORS section.
func (p *pytest) blockLine(l string) {
	if m := rePyHeader.FindStringSubmatch(l); m != nil {
		name := m[1]
		if strings.HasPrefix(name, "ERROR collecting ") {
			p.u.setWhole()
			p.cur = &pyBlock{} // its lines go to the gate's block
			return
		}
		for _, prefix := range []string{"ERROR at setup of ", "ERROR at teardown of "} {
			name = strings.TrimPrefix(name, prefix)
		}
		p.cur = &pyBlock{name: name}
		if len(p.blocks) < MaxUnits {
			p.blocks = append(p.blocks, p.cur)
		}
		return
	}
	if p.cur == nil {
		return
	}
	if p.cur.name == "" {
		p.u.wholeBlock.add(l)
		return
	}
	if m := matchIf(strings.Contains(l, ".py:"), rePyLocation, l); m != nil {
		p.cur.file = m[1]
	}
	p.cur.block.add(l)
}

func (p *pytest) finish() *units {
	if p.u.whole {
		return p.u
	}
	used := make([]bool, len(p.blocks))
	for _, id := range p.summary {
		b, fresh := p.u.fail(id)
		if !fresh {
			continue
		}
		for i, blk := range p.blocks {
			if !used[i] && pyMatches(id, blk.name) {
				used[i] = true
				b.add(blk.block.String())
			}
		}
	}
	// Without a short summary (-rN), the block's location names the file.
	for i, blk := range p.blocks {
		if !used[i] && blk.file != "" {
			b, _ := p.u.fail(blk.file + "::" + strings.ReplaceAll(blk.name, ".", "::"))
			b.add(blk.block.String())
		}
	}
	return p.u
}

// pyMatches reports whether node ID id is the test that a block's header
// names: "test_x.py::TestC::test_y[1]" is "TestC.test_y[1]".
func pyMatches(id, header string) bool {
	_, rest, ok := strings.Cut(id, "::")
	return ok && strings.ReplaceAll(rest, "::", ".") == header
}
