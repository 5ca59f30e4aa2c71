package e2e

import "testing"

func TestProbe(t *testing.T) {
	m := newModel(t, route{"PROBE", func(c *conv) turn {
		switch c.calls() {
		case 0:
			return turn{Text: "writing", Tools: []tool{write("out.txt", "hello\n")}}
		case 1:
			return turn{Tools: []tool{bash("sh check.sh")}}
		}
		return say("done")
	}})
	p := newProject(t, m, map[string]string{"check.sh": "#!/bin/sh\necho checked\n"})
	out, code := p.exec(p.Dir, "PROBE do it", "claude", "-p", "--output-format", "json")
	t.Logf("exit %d\n%s", code, out)
	out, code = p.exec(p.Dir, "PROBE do it", "claude", "-p", "--session-id", "11111111-2222-4333-8444-555555555555", "--permission-mode", "acceptEdits", "--allowedTools", "Bash(sh check.sh)", "--output-format", "json")
	t.Logf("exit %d\n%s", code, out)
	out, code = p.exec(p.Dir, "PROBE again", "claude", "-p", "--resume", "11111111-2222-4333-8444-555555555555", "--permission-mode", "acceptEdits", "--output-format", "json")
	t.Logf("exit %d\n%s", code, out)
	for _, c := range m.requests("PROBE") {
		t.Logf("REQ %d msgs, last: %s", len(c.Messages), c.last())
	}
}
