package gate

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/config"
)

// A blocking serial gate is a prerequisite of the parallel ones (seed 003:
// "Must pass before subsequent gates run"): when it fails, the later
// serial gates still run, and the expensive parallel ones are skipped;
// prerequisite: false, an advisory serial gate, or a pass lets them run.
func TestSerialPrerequisite(t *testing.T) {
	serial := func(g config.Gate) config.Gate { g.Serial = true; return g }
	notPrereq := func(g config.Gate) config.Gate { g.NotPrerequisite = true; return g }
	advisory := func(g config.Gate) config.Gate { g.Enforcement = config.Advisory; return g }
	for _, tt := range []struct {
		name  string
		gates []config.Gate
		want  []string
	}{
		{"a failing serial gate skips the parallel ones",
			[]config.Gate{serial(gateOf("tests", "exit 1")), serial(gateOf("typecheck", "true")), gateOf("review", "true"), gateOf("bench", "true")},
			[]string{"tests:fail", "typecheck:pass", "review:skipped", "bench:skipped"}},
		{"an error is a failure too",
			[]config.Gate{serial(gateOf("tests", "exit 127")), gateOf("review", "true")},
			[]string{"tests:error", "review:skipped"}},
		{"prerequisite: false",
			[]config.Gate{serial(notPrereq(gateOf("tests", "exit 1"))), gateOf("review", "true")},
			[]string{"tests:fail", "review:pass"}},
		{"an advisory serial gate",
			[]config.Gate{serial(advisory(gateOf("lint", "exit 1"))), gateOf("review", "true")},
			[]string{"lint:fail", "review:pass"}},
		{"passing serial gates",
			[]config.Gate{serial(gateOf("tests", "true")), gateOf("review", "true")},
			[]string{"tests:pass", "review:pass"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Evaluate(context.Background(), tt.gates, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(ev); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("results = %v; want %v", got, tt.want)
			}
			for _, r := range ev.Skipped() {
				if !strings.Contains(r.Err, "a prerequisite, did not pass") {
					t.Errorf("%s skipped with %q", r.Name(), r.Err)
				}
			}
		})
	}
}
