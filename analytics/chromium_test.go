package analytics

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const chromiumPath = "/usr/bin/chromium"

// requireChromium is set in CI, where a missing browser or echarts must fail the test.
func requireChromium() bool { return os.Getenv("ORCHESTRATE_REQUIRE_CHROMIUM") == "1" }

// probeScript runs after the page's own scripts. It notes when they were done, and
// when the frame after them was drawn (in milliseconds since the page was asked for).
// Once every chart the page draws is drawn (the charts out of view come one by one
// after the first frame; five seconds at most), it opens every chart's tooltip, so
// that names from the history go through echarts' HTML tooltips too, then writes what
// the test checks into the DOM: how many canvases each chart container holds, whether
// any payload ran, the title, and the two times.
const probeScript = `<script>
(function () {
  var ran = performance.now(), drawn = -1;
  requestAnimationFrame(function () {
    requestAnimationFrame(function () { drawn = performance.now(); });
  });
  var options = JSON.parse(document.getElementById("chart-options").textContent);
  function all() {
    return typeof echarts === "undefined" || Object.keys(options).every(function (id) {
      var el = document.getElementById(id);
      return !el || echarts.getInstanceByDom(el);
    });
  }
  function ready() {
    if (!all() && performance.now() - ran < 5000) { setTimeout(ready, 50); return; }
    if (typeof echarts !== "undefined") {
      document.querySelectorAll(".chart").forEach(function (el) {
        var chart = echarts.getInstanceByDom(el);
        if (chart) { chart.dispatchAction({ type: "showTip", seriesIndex: 0, dataIndex: 0 }); }
      });
    }
    setTimeout(report, 300);
  }
  function report() {
    var out = [];
    document.querySelectorAll(".chart").forEach(function (el) {
      out.push(el.id + "=" + el.querySelectorAll("canvas").length);
    });
    out.push("pwned=" + (window.__pwned || 0));
    out.push("injected=" + document.querySelectorAll("img, svg, [onerror], [onload]").length);
    out.push("scripts=" + document.scripts.length);
    out.push("noecharts=" + document.documentElement.classList.contains("no-echarts"));
    // An option the echarts build has no part for is dropped without a word: count
    // the charts whose every series and component made it into the chart.
    var missing = 0;
    if (typeof echarts !== "undefined") {
      Object.keys(options).forEach(function (id) {
        var chart = echarts.getInstanceByDom(document.getElementById(id)), want = options[id];
        if (!chart) { return; }
        var model = chart.getModel();
        if (model.getSeries().length !== (want.series || []).length) { missing++; }
        ["grid", "legend", "title", "tooltip", "xAxis", "yAxis"].forEach(function (kind) {
          if (want[kind] && !model.getComponent(kind)) { missing++; }
        });
      });
    }
    out.push("missing=" + missing);
    out.push("ran=" + Math.round(ran));
    out.push("drawn=" + Math.round(drawn));
    var p = document.createElement("pre");
    p.id = "probe";
    p.textContent = out.join(" ");
    document.body.appendChild(p);
  }
  setTimeout(ready, 200);
})();
</script>
`

var probeResult = regexp.MustCompile(`<pre id="probe">([^<]*)</pre>`)

// TestPageInChromium loads the generated page from a file:// URL in headless Chromium
// with the network blocked, and checks that the charts were drawn from the inlined
// echarts and that no string of a hostile history ran as script.
func TestPageInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if requireChromium() {
			t.Fatalf("ORCHESTRATE_REQUIRE_CHROMIUM=1 but %s is missing: apt-get install -y chromium", chromiumPath)
		}
		t.Skipf("%s is missing (apt-get install -y chromium); set ORCHESTRATE_REQUIRE_CHROMIUM=1 to fail instead", chromiumPath)
	}
	if testing.Short() && !requireChromium() {
		t.Skip("skipped in -short mode")
	}
	dir := t.TempDir()
	history := filepath.Join(dir, "history.csv")
	writeHostileHistory(t, history)
	// A second history, normal, to show the charts do draw on ordinary data as well.
	basic, err := os.ReadFile(filepath.Join("testdata", "basic.csv"))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("inlined echarts draws every chart, no payload runs", func(t *testing.T) {
		for _, src := range []struct {
			name string
			data []byte
		}{{"hostile", nil}, {"basic", basic}} {
			h := history
			if src.data != nil {
				h = filepath.Join(dir, src.name+".csv")
				if err := os.WriteFile(h, src.data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			probe := loadInChromium(t, dir, h, nil)
			for _, id := range []string{chartAttempts, chartGateDays, chartRuns, chartOutcomes} {
				if n := probeInt(t, probe, id); n < 1 {
					t.Errorf("%s: chart %s has %d canvas elements; want it drawn (probe: %s)", src.name, id, n, probe)
				}
			}
			if n := probeInt(t, probe, "missing"); n != 0 {
				t.Errorf("%s: %d series or components of the options are not in the echarts build (probe: %s)", src.name, n, probe)
			}
			if probeInt(t, probe, "pwned") != 0 || probeInt(t, probe, "injected") != 0 {
				t.Errorf("%s: a payload from the history ran or made elements (probe: %s)", src.name, probe)
			}
			// echarts, the options, the drawing code, the probe.
			if n := probeInt(t, probe, "scripts"); n != 4 {
				t.Errorf("%s: the page has %d scripts; want 4 (probe: %s)", src.name, n, probe)
			}
		}
	})

	// The control: with echarts left to the CDN, the blocked network must leave the
	// charts undrawn and the page must say so, or the first test proves nothing.
	t.Run("the network is blocked", func(t *testing.T) {
		probe := loadInChromium(t, dir, history, []byte{})
		if probeInt(t, probe, chartAttempts) != 0 || !strings.Contains(probe, "noecharts=true") {
			t.Errorf("echarts from the CDN loaded, or the page did not notice it missing (probe: %s)", probe)
		}
	})
}

// loadInChromium renders the page for history (echarts as in RenderOptions.Echarts),
// adds the probe, loads it in headless Chromium and returns the probe's text.
func loadInChromium(t testing.TB, dir, history string, echarts []byte, flags ...string) string {
	t.Helper()
	f, err := os.Open(history)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compute(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, m, RenderOptions{Source: history, Echarts: echarts}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	end := strings.LastIndex(page, "</body>") // echarts.min.js holds the string too
	page = page[:end] + probeScript + page[end:]
	path := filepath.Join(dir, "analytics.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--mute-audio", "--disable-crash-reporter", "--disable-breakpad",
		"--user-data-dir="+t.TempDir(),
		// No network: every host name fails to resolve, and anything else goes to a
		// proxy that is not there.
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
	)
	if len(flags) == 0 {
		flags = []string{"--window-size=1280,2000", "--virtual-time-budget=10000"}
	}
	cmd.Args = append(append(cmd.Args, flags...), "--dump-dom", "file://"+path)
	// Files, not pipes: Chromium's helper processes outlive it and would hold a pipe
	// open, making Wait wait for them.
	outFile, errFile := filepath.Join(dir, "dom.html"), filepath.Join(dir, "chromium.log")
	stdout, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(errFile)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	dom, _ := os.ReadFile(outFile)
	log, _ := os.ReadFile(errFile)
	if runErr != nil {
		t.Fatalf("chromium: %v\n%s", runErr, lastChars(string(log), 2000))
	}
	match := probeResult.FindSubmatch(dom)
	if match == nil {
		t.Fatalf("chromium's DOM has no probe result: the page's scripts did not run to the end\nstderr: %s\nDOM: %s",
			lastChars(string(log), 2000), lastChars(string(dom), 2000))
	}
	t.Logf("probe: %s", match[1])
	return string(match[1])
}

func probeInt(t testing.TB, probe, key string) int {
	t.Helper()
	for _, field := range strings.Fields(probe) {
		if k, v, ok := strings.Cut(field, "="); ok && k == key {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("probe %s=%q is not a number", key, v)
			}
			return n
		}
	}
	t.Fatalf("probe has no %s: %s", key, probe)
	return 0
}

func lastChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// TestPageAtScaleInChromium draws the page for one run and for 1,000 runs over a
// year in headless Chromium, the network blocked, and takes a screenshot of each
// (kept in $ORCHESTRATE_SCREENSHOTS when set, to look at).
func TestPageAtScaleInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if requireChromium() {
			t.Fatalf("ORCHESTRATE_REQUIRE_CHROMIUM=1 but %s is missing", chromiumPath)
		}
		t.Skipf("%s is missing (apt-get install -y chromium)", chromiumPath)
	}
	if testing.Short() && !requireChromium() {
		t.Skip("skipped in -short mode")
	}
	start := time.Date(2025, 11, 3, 9, 0, 0, 0, time.UTC)
	for _, sc := range []struct {
		name   string
		runs   int
		span   time.Duration
		charts []string // drawn
		none   []string // not drawn: too few points to say anything
	}{
		{"1-run", 1, time.Hour, []string{chartAttempts, chartOutcomes}, []string{chartWeeks, chartWeekCost, chartRuns, chartGateDays}},
		{"1000-runs-a-year", 1000, 365 * 24 * time.Hour, []string{chartWeeks, chartWeekCost, chartRuns, chartGateDays, chartAttempts, chartOutcomes}, nil},
	} {
		t.Run(sc.name, func(t *testing.T) {
			dir := t.TempDir()
			history := filepath.Join(dir, "history.csv")
			if err := AppendHistory(history, scaleHistory(sc.runs, start, sc.span)...); err != nil {
				t.Fatal(err)
			}
			probe := loadInChromium(t, dir, history, nil)
			if n := probeInt(t, probe, "missing"); n != 0 {
				t.Errorf("%d series or components of the options are not in the echarts build (probe: %s)", n, probe)
			}
			for _, id := range sc.charts {
				if n := probeInt(t, probe, id); n < 1 {
					t.Errorf("chart %s not drawn (probe: %s)", id, probe)
				}
			}
			for _, id := range sc.none {
				if strings.Contains(probe, id+"=") {
					t.Errorf("chart %s is on the page (probe: %s)", id, probe)
				}
			}
			shots := os.Getenv("ORCHESTRATE_SCREENSHOTS")
			if shots == "" {
				shots = dir
			}
			// The page as a user sees it: without the probe, which opens the tooltips.
			page, err := os.ReadFile(filepath.Join(dir, "analytics.html"))
			if err != nil {
				t.Fatal(err)
			}
			clean := filepath.Join(dir, "analytics-"+sc.name+".html")
			if err := os.WriteFile(clean, bytes.Replace(page, []byte(probeScript), nil, 1), 0o644); err != nil {
				t.Fatal(err)
			}
			png := filepath.Join(shots, "analytics-"+sc.name+".png")
			screenshotInChromium(t, clean, png)
			if st, err := os.Stat(png); err != nil || st.Size() < 10000 {
				t.Errorf("screenshot %s: %v (%d bytes)", png, err, st.Size())
			}
		})
	}
}

// screenshotInChromium saves a screenshot of the page at path, the network blocked.
func screenshotInChromium(t *testing.T, path, png string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	logf, err := os.Create(filepath.Join(t.TempDir(), "chromium.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, chromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--mute-audio", "--disable-crash-reporter", "--disable-breakpad",
		"--hide-scrollbars", "--user-data-dir="+t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
		"--window-size=1280,3600", "--virtual-time-budget=10000",
		"--screenshot="+png, "file://"+path,
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(logf.Name())
		t.Fatalf("chromium --screenshot: %v\n%s", err, lastChars(string(log), 2000))
	}
}

// BenchmarkPageFirstDraw loads the page of 1,000 runs over a year in headless
// Chromium, the network blocked, in a laptop's window (1280 by 800), and reports
// when the frame after the page's scripts was drawn, the charts in view and all, in
// milliseconds since the page was asked for (the best of the rounds), and when its
// scripts were done. It fails past a second:
//
//	go test -run '^$' -bench PageFirstDraw -benchtime 3x ./analytics
func BenchmarkPageFirstDraw(b *testing.B) {
	if _, err := os.Stat(chromiumPath); err != nil {
		b.Skipf("%s is missing (apt-get install -y chromium)", chromiumPath)
	}
	dir := b.TempDir()
	history := filepath.Join(dir, "history.csv")
	if err := AppendHistory(history, scaleHistory(1000, time.Date(2025, 11, 3, 9, 0, 0, 0, time.UTC), 365*24*time.Hour)...); err != nil {
		b.Fatal(err)
	}
	drawn, ran := -1, -1
	for b.Loop() {
		// Real time, and time for the probe's own wait to end.
		probe := loadInChromium(b, dir, history, nil, "--window-size=1280,800", "--virtual-time-budget=10000")
		if d := probeInt(b, probe, "drawn"); d >= 0 && (drawn < 0 || d < drawn) {
			drawn, ran = d, probeInt(b, probe, "ran")
		}
	}
	if drawn < 0 {
		b.Fatal("the page's first frame was never drawn")
	}
	info, err := os.Stat(filepath.Join(dir, "analytics.html"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(drawn), "drawn-ms")
	b.ReportMetric(float64(ran), "scripts-done-ms")
	b.ReportMetric(float64(info.Size())/1000, "page-kB")
	if drawn > 1000 {
		b.Errorf("the page of 1,000 runs drew its first frame after %d ms; want at most 1,000", drawn)
	}
}
