package results

import (
	"bytes"
	"encoding/xml"
	"strings"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// junitSuite is a <testsuite>, which may hold more suites (<testsuites>
// is one too: the same fields).
type junitSuite struct {
	Suites []junitSuite `xml:"testsuite"`
	Cases  []junitCase  `xml:"testcase"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	Failures  []junitProblem `xml:"failure"`
	Errors    []junitProblem `xml:"error"`
	Skipped   *struct{}      `xml:"skipped"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// ReadJUnit reads a JUnit XML report (from a file a gate wrote): a unit is
// a test case, its ID "CLASSNAME NAME" (NAME alone without a class name),
// its block the messages and text of its failures and errors. Whether the
// gate failed is what the report says. A report that cannot be read is one
// failure of the whole gate, of no runner.
func ReadJUnit(gate string, data []byte, opt signature.Options) Report {
	r := NewReader(gate, opt)
	var root junitSuite
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	u := newUnits()
	if dec.Decode(&root) != nil || junitCases(&root, u) == 0 {
		r.keep.write(data) // not a report: the gate's as a whole
		return r.build(Report{Gate: gate, Whole: true}, nil, nil)
	}
	return r.build(Report{Gate: gate, Runner: "junit"}, u, nil)
}

// junitCases reads the cases of s and of the suites in it, and returns
// how many it read.
func junitCases(s *junitSuite, u *units) int {
	n := len(s.Cases)
	for _, c := range s.Cases {
		id := strings.TrimSpace(c.Classname + " " + c.Name)
		problems := append(append([]junitProblem(nil), c.Failures...), c.Errors...)
		if len(problems) == 0 {
			if c.Skipped == nil {
				u.pass(id)
			}
			continue
		}
		b, _ := u.fail(id)
		for _, p := range problems {
			if head := strings.TrimSpace(strings.TrimSpace(p.Type + ": " + p.Message)); head != ":" {
				b.add(strings.TrimPrefix(head, ": "))
			}
			if t := strings.Trim(p.Text, "\n"); t != "" {
				b.add(t)
			}
		}
	}
	for i := range s.Suites {
		n += junitCases(&s.Suites[i], u)
	}
	return n
}
