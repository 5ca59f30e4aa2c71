package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// The GitHub Actions workflow docs/ci.md documents, as a file: the tests
// run its steps and parse what they write.
const workflowFile = "testdata/ci/quality-gates.yml"

// TestDocsWorkflow: docs/ci.md shows the workflow the tests run, word for
// word.
func TestDocsWorkflow(t *testing.T) {
	wf, err := os.ReadFile(workflowFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("```yaml\n"+string(wf)+"```\n")) {
		t.Errorf("docs/ci.md does not show %s as a yaml block, word for word", workflowFile)
	}
}

// workflow is what the tests read of a GitHub Actions workflow.
type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			If   string            `yaml:"if"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// workflowAbs is workflowFile from any directory: the scripts run in
// their own.
var workflowAbs, _ = filepath.Abs(workflowFile)

// cmdWorkflowRun: workflow-run JOB STEP... runs the named run: steps of a
// job of the documented GitHub Actions workflow, in order, as the runner
// does:
// each with sh -e, GITHUB_ACTIONS=true and GITHUB_STEP_SUMMARY set
// ($WORK/step-summary.md), and the step's env; after a failing step only
// the steps with if: always() run. It prints each step's output, and fails
// when a step failed. The steps not named (checkout, setup, install,
// uploads) are the runner's business; a name that is not a run: step of
// the job is an error.
func cmdWorkflowRun(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: workflow-run JOB STEP...")
	}
	data, err := os.ReadFile(workflowAbs)
	ts.Check(err)
	var wf workflow
	ts.Check(yaml.Unmarshal(data, &wf))
	file := workflowFile
	job, ok := wf.Jobs[args[0]]
	if !ok {
		ts.Fatalf("%s: no job %q", file, args[0])
	}
	args = append([]string{file}, args...)
	want := map[string]bool{}
	for _, n := range args[2:] {
		want[n] = true
	}
	failed := false
	for _, st := range job.Steps {
		if !want[st.Name] {
			continue
		}
		delete(want, st.Name)
		if st.Run == "" {
			ts.Fatalf("%s: step %q has no run:", args[0], st.Name)
		}
		if failed && !strings.Contains(st.If, "always()") {
			fmt.Fprintf(ts.Stdout(), "step %q: not run, a step before it failed\n", st.Name)
			continue
		}
		cmd := exec.Command("sh", "-e", "-c", st.Run)
		cmd.Dir = ts.Getenv("WORK")
		env := os.Environ()
		for _, kv := range []string{"PATH", "HOME", "ORCHESTRATE_NOW", "TMPDIR"} {
			env = append(env, kv+"="+ts.Getenv(kv))
		}
		env = append(env, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+ts.MkAbs("step-summary.md"))
		keys := make([]string, 0, len(st.Env))
		for k := range st.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+st.Env[k])
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		ts.Stdout().Write(out)
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				ts.Fatalf("step %q: %v", st.Name, err)
			}
			code = ee.ExitCode()
			failed = true
		}
		fmt.Fprintf(ts.Stdout(), "step %q: exit %d\n", st.Name, code)
	}
	for n := range want {
		ts.Fatalf("%s: job %s has no step %q", args[0], args[1], n)
	}
	if failed != neg {
		if neg {
			ts.Fatalf("every step passed")
		}
		ts.Fatalf("a step failed")
	}
}

// junitReport is JUnit XML as test reporters read it.
type junitReport struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Time    string `xml:"time,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// cmdJUnit: junit FILE parses a JUnit XML file, checks that its counts
// add up, and prints a line per testcase: its name, what it is (pass,
// failure, error, skipped), its message, and the first line of its text.
func cmdJUnit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: junit FILE")
	}
	var r junitReport
	dec := xml.NewDecoder(strings.NewReader(ts.ReadFile(args[0])))
	ts.Check(dec.Decode(&r))
	if len(r.Suites) != 1 {
		ts.Fatalf("%d testsuites; want 1", len(r.Suites))
	}
	s := r.Suites[0]
	var f, e, k int
	for _, c := range s.Cases {
		what, msg, text := "pass", "", ""
		switch {
		case c.Failure != nil:
			what, msg, text = "failure("+c.Failure.Type+")", c.Failure.Message, c.Failure.Text
			f++
		case c.Error != nil:
			what, msg, text = "error("+c.Error.Type+")", c.Error.Message, c.Error.Text
			e++
		case c.Skipped != nil:
			what, msg = "skipped", c.Skipped.Message
			k++
		}
		first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
		fmt.Fprintf(ts.Stdout(), "testcase %s: %s: %s | %s\n", c.Name, what, msg, first)
	}
	if s.Tests != len(s.Cases) || s.Failures != f || s.Errors != e || s.Skipped != k ||
		r.Tests != s.Tests || r.Failures != f || r.Errors != e || r.Skipped != k {
		ts.Fatalf("counts do not add up: suites %d/%d/%d/%d, suite %d/%d/%d/%d, cases %d/%d/%d/%d",
			r.Tests, r.Failures, r.Errors, r.Skipped, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), f, e, k)
	}
	fmt.Fprintf(ts.Stdout(), "suite %s: %d tests, %d failures, %d errors, %d skipped\n", s.Name, s.Tests, f, e, k)
}

// cmdSARIF: sarif FILE parses a SARIF file, checks what SARIF 2.1.0 and
// code scanning require of it (version, $schema, the tool's name, each
// result's rule among the rules at its index, a level SARIF knows, a
// message, a location with a relative URI and a line from 1), and prints
// a line per result: rule, level, location, message.
func cmdSARIF(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sarif FILE")
	}
	var log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &log))
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif") || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name == "" {
		ts.Fatalf("not a SARIF 2.1.0 log of one run of a named tool: version %q, $schema %q, %d runs", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	for i, r := range run.Results {
		if r.RuleIndex < 0 || r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			ts.Fatalf("result %d: ruleId %q is not rule %d", i, r.RuleID, r.RuleIndex)
		}
		switch r.Level {
		case "error", "warning", "note", "none":
		default:
			ts.Fatalf("result %d: level %q", i, r.Level)
		}
		if r.Message.Text == "" || len(r.PartialFingerprints) == 0 {
			ts.Fatalf("result %d: no message or no fingerprint", i)
		}
		loc := "-"
		for _, l := range r.Locations {
			p := l.PhysicalLocation
			if p.ArtifactLocation.URI == "" || filepath.IsAbs(p.ArtifactLocation.URI) || strings.Contains(p.ArtifactLocation.URI, `\`) {
				ts.Fatalf("result %d: artifact URI %q is not a relative path", i, p.ArtifactLocation.URI)
			}
			loc = p.ArtifactLocation.URI
			if p.Region != nil {
				if p.Region.StartLine < 1 {
					ts.Fatalf("result %d: startLine %d", i, p.Region.StartLine)
				}
				loc += fmt.Sprintf(":%d", p.Region.StartLine)
			}
		}
		fmt.Fprintf(ts.Stdout(), "result %s %s %s %s\n", r.RuleID, r.Level, loc, r.Message.Text)
	}
	fmt.Fprintf(ts.Stdout(), "%d results, %d rules\n", len(run.Results), len(run.Tool.Driver.Rules))
}
