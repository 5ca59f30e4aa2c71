package analytics

import (
	_ "embed"
	"sync"

	"github.com/go-echarts/go-echarts/v2/charts"
)

// echartsVersion is the echarts release committed in assets/ and the charts are
// written for.
const echartsVersion = "5.6.0"

// echartsJS is the pinned build of the parts of echarts the page uses
// (assets/echarts.min.js), committed in the repository with its SHA-256
// (assets/echarts.min.js.sha256) and its license, so that every build (go
// install, go build, make) draws the charts offline. See assets/README.md.
//
//go:embed assets/echarts.min.js
var echartsJS []byte

// embeddedEcharts returns the echarts.min.js built into the binary.
func embeddedEcharts() []byte { return echartsJS }

// echartsURL is where the page loads echarts from when the caller asks for no inlined
// copy (RenderOptions.Echarts empty, not nil): go-echarts' own asset host.
var echartsURL = sync.OnceValue(func() string {
	bar := charts.NewBar()
	bar.Validate()
	if v := bar.GetAssets().JSAssets.Values; len(v) > 0 {
		return v[0]
	}
	return ""
})
