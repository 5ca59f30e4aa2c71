package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/findings"

	"github.com/orchestrate-dev/orchestrate/config"
)

// What CI systems read of an evaluation: JUnit XML for test reporters,
// SARIF 2.1.0 for code scanning, and GitHub Actions workflow commands for
// annotations.

// junitSuites is JUnit XML's root, in the form test reporters read (the
// Ant/Surefire schema): a testsuite, a testcase per gate.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	junitCounts
	Suites []junitSuite `xml:"testsuite"`
}

// junitCounts are the attributes that testsuites and testsuite share.
type junitCounts struct {
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

type junitSuite struct {
	Name string `xml:"name,attr"`
	junitCounts
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnit returns an evaluation as JUnit XML: one testsuite, a testcase per
// gate in config order; a fail is a failure, an error or a timeout an
// error, a skipped gate (or a human gate awaiting approval) skipped. The
// text of each is the end of the gate's output (the excerpt the feedback
// shows, out bounding it), or a review gate's findings. A failing advisory
// or informational gate is a failure too, of type "advisory" or
// "informational": it did not block, and its message says so.
func JUnit(ev *Evaluation, out config.Output) ([]byte, error) {
	o := (&Options{Output: out}).output()
	suite := junitSuite{Name: "quality gates", junitCounts: junitCounts{Time: secs(ev.Duration.Seconds())}, Timestamp: timestamp(ev.Started)}
	for i := range ev.Results {
		r := &ev.Results[i]
		c := junitCase{Name: r.Name(), Classname: "orchestrate.gate", Time: secs(r.Duration.Seconds())}
		text := excerptOf(r, o)
		msg := r.Reason()
		kind := string(r.Outcome)
		if e := r.Enforcement(); e != config.Blocking {
			msg += " (" + string(e) + ": it does not block)"
			kind = string(e)
		}
		switch r.Outcome {
		case Fail:
			c.Failure = &junitProblem{Message: msg, Type: kind, Text: text}
			suite.Failures++
		case Errored, TimedOut:
			c.Error = &junitProblem{Message: msg, Type: kind, Text: text}
			suite.Errors++
		case Skipped:
			c.Skipped = &junitSkipped{Message: r.Err}
			suite.Skipped++
		case AwaitingApproval:
			c.Skipped = &junitSkipped{Message: "awaiting a person's approval"}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	root := junitSuites{Name: "orchestrate", junitCounts: suite.junitCounts, Suites: []junitSuite{suite}}
	data, err := xml.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(data, '\n')...), nil
}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// excerptOf is what a report shows of a gate that did not pass: a review
// gate's findings, or the end of its output.
func excerptOf(r *Result, out config.Output) string {
	if r.Review != nil && len(r.Review.Findings) > 0 {
		return findings.Markdown(r.Review.Findings)
	}
	if r.Passed() {
		return ""
	}
	s, _ := Excerpt(r.Output, out.FeedbackLines, out.FeedbackBytes)
	return s
}

// SARIF 2.1.0, the subset code scanning reads.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string        `json:"id"`
	Name             string        `json:"name"`
	ShortDescription sarifText     `json:"shortDescription"`
	DefaultConfig    sarifRuleConf `json:"defaultConfiguration"`
}

type sarifRuleConf struct {
	Level string `json:"level"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Properties          sarifProperties   `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifProperties struct {
	Gate       string   `json:"gate"`
	Priority   string   `json:"priority"`
	Blocking   bool     `json:"blocking"` // at the gate's fail_on or worse
	Dimensions []string `json:"dimensions,omitempty"`
}

// SARIFSchema is the schema a SARIF file names.
const SARIFSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// SARIFLevel is a finding's SARIF level from its priority: P0 and P1 are
// errors, P2 a warning, P3 a note.
func SARIFLevel(p findings.Priority) string {
	switch {
	case p <= findings.P1:
		return "error"
	case p == findings.P2:
		return "warning"
	}
	return "note"
}

// SARIF returns the review findings of an evaluation as a SARIF 2.1.0 log:
// a result per finding, its rule the review gate and the dimension that
// found it ("code_review/security"; the gate alone when no dimension is
// known), its level from its priority, its file and line when it has
// them (a finding without a file has no location). version is the tool's.
func SARIF(ev *Evaluation, version string) ([]byte, error) {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "orchestrate", Version: version, Rules: []sarifRule{}}}, Results: []sarifResult{}}
	rules := map[string]int{}
	for i := range ev.Results {
		r := &ev.Results[i]
		if r.Review == nil {
			continue
		}
		for _, f := range r.Review.Findings {
			id := r.Name()
			if len(f.Dimensions) > 0 {
				id += "/" + f.Dimensions[0]
			}
			idx, ok := rules[id]
			if !ok {
				idx = len(run.Tool.Driver.Rules)
				rules[id] = idx
				what := "Findings of the review gate " + r.Name()
				if len(f.Dimensions) > 0 {
					what += " on " + f.Dimensions[0]
				}
				run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
					ID: id, Name: id, ShortDescription: sarifText{what},
					DefaultConfig: sarifRuleConf{Level: "warning"},
				})
			}
			msg := f.Issue
			if f.Suggestion != "" {
				msg += " Suggestion: " + f.Suggestion
			}
			res := sarifResult{
				RuleID: id, RuleIndex: idx, Level: SARIFLevel(f.Priority),
				Message: sarifText{fmt.Sprintf("%s %s: %s", f.Priority, f.Priority.Title(), msg)},
				Properties: sarifProperties{Gate: r.Name(), Priority: f.Priority.String(),
					Blocking: f.Priority <= r.Review.FailOn, Dimensions: f.Dimensions},
			}
			if f.File != "" {
				loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: filepath.ToSlash(f.File)}}}
				if f.Line > 0 {
					loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
				}
				res.Locations = []sarifLocation{loc}
			}
			sum := sha256.Sum256([]byte(id + "\x00" + f.File + "\x00" + f.Issue))
			res.PartialFingerprints = map[string]string{"orchestrateFinding/v1": hex.EncodeToString(sum[:16])}
			run.Results = append(run.Results, res)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// locationLine is a "file:line[:col]: message" line of a tool's output.
var locationLine = regexp.MustCompile(`^\s*([A-Za-z0-9_.][A-Za-z0-9_./-]*\.[A-Za-z0-9]+):(\d+)(?::\d+)?:\s*(.*\S)`)

// maxAnnotations bounds the file annotations of one gate's output.
const maxAnnotations = 10

// Annotations returns GitHub Actions workflow commands for an evaluation:
// for a gate that did not pass, an annotation at each "file:line:" line of
// its output whose file is in the repository (at most 10), and one with
// its reason and the end of its output; for a review gate, one per
// finding, at its file and line when it has them. A blocking gate's are
// ::error, an advisory's ::warning, an informational's and findings below
// fail_on ::notice. repoRoot is where the gates ran.
func Annotations(ev *Evaluation, repoRoot string, out config.Output) string {
	o := (&Options{Output: out}).output()
	var b strings.Builder
	for i := range ev.Results {
		r := &ev.Results[i]
		level := annotationLevel(r.Enforcement())
		if r.Outcome == AwaitingApproval {
			fmt.Fprintf(&b, "::notice title=%s::%s\n", property("Quality gate "+r.Name()), data("awaiting a person's approval"))
			continue
		}
		if !r.Failed() {
			continue
		}
		if r.Review != nil && len(r.Review.Findings) > 0 {
			for _, f := range r.Review.Findings {
				l := level
				if f.Priority > r.Review.FailOn {
					l = "notice"
				}
				title := fmt.Sprintf("%s %s %s", r.Name(), f.Priority, f.Priority.Title())
				if len(f.Dimensions) > 0 {
					title += " (" + strings.Join(f.Dimensions, ", ") + ")"
				}
				msg := f.Issue
				if f.Suggestion != "" {
					msg += "\nSuggestion: " + f.Suggestion
				}
				b.WriteString(annotation(l, f.File, f.Line, title, msg))
			}
			continue
		}
		dir := filepath.Join(repoRoot, r.Gate.WorkingDir)
		n := 0
		for _, line := range strings.Split(r.Output, "\n") {
			m := locationLine.FindStringSubmatch(line)
			if m == nil || n >= maxAnnotations {
				continue
			}
			file, ok := inRepo(repoRoot, dir, m[1])
			if !ok {
				continue
			}
			ln, _ := strconv.Atoi(m[2])
			b.WriteString(annotation(level, file, ln, "Quality gate "+r.Name(), m[3]))
			n++
		}
		excerpt, _ := Excerpt(r.Output, min(o.FeedbackLines, 20), o.FeedbackBytes)
		msg := "Quality gate " + r.Name() + " failed: " + r.Reason()
		if excerpt != "" {
			msg += "\n" + excerpt
		}
		b.WriteString(annotation(level, "", 0, "Quality gate "+r.Name(), msg))
	}
	return b.String()
}

func annotationLevel(e config.Enforcement) string {
	switch e {
	case config.Advisory:
		return "warning"
	case config.Informational:
		return "notice"
	}
	return "error"
}

// annotation is one workflow command: ::LEVEL file=F,line=L,title=T::MSG,
// the location left out when unknown.
func annotation(level, file string, line int, title, msg string) string {
	var props []string
	if file != "" {
		props = append(props, "file="+property(file))
		if line > 0 {
			props = append(props, "line="+strconv.Itoa(line))
		}
	}
	props = append(props, "title="+property(title))
	return "::" + level + " " + strings.Join(props, ",") + "::" + data(msg) + "\n"
}

// data escapes a workflow command's message.
func data(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// property escapes a workflow command's property value.
func property(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// inRepo returns file (as a tool printed it, relative to dir) relative to
// the repository root, if it is a file in the repository.
func inRepo(root, dir, file string) (string, bool) {
	if filepath.IsAbs(file) {
		return "", false
	}
	p := filepath.Join(dir, file)
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return "", false
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
