package analytics

import (
	"embed"
	"sync"

	"github.com/go-echarts/go-echarts/v2/charts"
)

// EchartsVersion is the echarts release that assets/fetch-echarts.sh fetches and the
// charts are written for.
const EchartsVersion = "5.6.0"

// assets holds the assets directory: always its README and fetch script, and
// echarts.min.js when it was fetched before the build (make assets). Embedding the
// directory, not the file, lets the package build either way.
//
//go:embed assets
var assets embed.FS

// embeddedEcharts returns the echarts.min.js built into the binary, or nil.
var embeddedEcharts = sync.OnceValue(func() []byte {
	b, err := assets.ReadFile("assets/echarts.min.js")
	if err != nil {
		return nil
	}
	return b
})

// echartsURL is where the page loads echarts from when none is built in: go-echarts'
// own asset host, so that the fallback follows the library.
var echartsURL = sync.OnceValue(func() string {
	bar := charts.NewBar()
	bar.Validate()
	if v := bar.GetAssets().JSAssets.Values; len(v) > 0 {
		return v[0]
	}
	return ""
})
