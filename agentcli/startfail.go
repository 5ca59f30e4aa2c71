package agentcli

import (
	"regexp"
	"strings"
	"sync"
)

// StartFailure is a way an agent CLI says it could not work at all (it
// took no model turn): a folder it does not trust, no authentication, the
// API's rate limit or quota, no network. Such a launch is not an attempt:
// orchestrate run stops at once, quoting the agent, and counts nothing.
type StartFailure struct {
	Code  int    // the exit code that says it; 0 for any failing one
	Match string // a regular expression (case-insensitive) a line of the output matches; "" for the code alone
	What  string // what went wrong, for the person
	Fix   string // what to do about it
	// Stall, when not 0, is for an agent that says Match and keeps
	// waiting (it retries on its own, for as long as it runs): the Stall-th
	// line that says it stops the launch. Until matches a line that says
	// the agent has worked (a model turn done); from it on, nothing stops
	// the launch but its timeout.
	Stall int
	Until string
}

// startFailures are every agent's: the API's and the network's words.
var startFailures = []StartFailure{
	{Match: `rate.?limit|too many requests|\b(429|529)\b.*(error|status|code)|(error|status|code)\D{0,12}\b(429|529)\b|quota exceeded|resource.?exhausted|overloaded_error`,
		What: "the model API refused it: a rate limit, a quota or an overload", Fix: "wait a while, or raise the limit, then run again"},
	{Match: `invalid (x-)?api.?key|authentication_error|\b401\b.*(unauthori[sz]ed|auth)|not logged in|please run /login|no api key|api key (is )?(not set|missing|not found)`,
		What: "the agent is not signed in to its model API", Fix: "set its API key or sign it in (run it once by hand), then run again"},
	{Match: `econnrefused|enotfound|eai_again|network is unreachable|getaddrinfo|fetch failed|could not resolve host`,
		What: "the agent could not reach its model API", Fix: "check the network (and any proxy or base URL setting), then run again"},
}

var startRE sync.Map // Match → *regexp.Regexp

func (f StartFailure) re() *regexp.Regexp { return compiledRE(f.Match) }

func compiledRE(expr string) *regexp.Regexp {
	if v, ok := startRE.Load(expr); ok {
		return v.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`(?i)` + expr)
	startRE.Store(expr, re)
	return re
}

// Says reports whether a line of the agent's output says f.
func (f StartFailure) Says(line []byte) bool { return f.Match != "" && f.re().Match(line) }

// Worked reports whether a line of the agent's output says it has worked,
// which ends f's Stall.
func (f StartFailure) Worked(line []byte) bool {
	return f.Until != "" && compiledRE(f.Until).Match(line)
}

// Stalls are the start failures of the profile that its agent says while
// it keeps waiting (see StartFailure.Stall).
func (p Profile) Stalls() []StartFailure {
	var out []StartFailure
	for _, f := range p.failures {
		if f.Stall > 0 {
			out = append(out, f)
		}
	}
	return out
}

// CouldNotStart reports whether an agent's failed launch (exit code, and
// the head and tail of its output) says it could not work at all, and how
// (see StartFailure), with the line of the output that says so: in the
// words of the profile's CLI, then in those of every agent. A launch that
// exited 0 worked. The caller also makes sure the agent reported no model
// turn.
func (p Profile) CouldNotStart(code int, output string) (f StartFailure, line string, ok bool) {
	if code == 0 {
		return StartFailure{}, "", false
	}
	for _, f := range append(append([]StartFailure(nil), p.failures...), startFailures...) {
		if f.Code != 0 && f.Code != code {
			continue
		}
		if f.Match == "" {
			return f, firstLine(output), true
		}
		for _, l := range strings.Split(output, "\n") {
			if f.re().MatchString(l) {
				return f, strings.TrimSpace(l), true
			}
		}
	}
	return StartFailure{}, "", false
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
