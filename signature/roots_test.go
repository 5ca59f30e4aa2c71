package signature

import (
	"strings"
	"testing"
)

func TestGoFrameRoot(t *testing.T) {
	for _, tt := range []struct {
		frame, file, want string
	}{
		{"github.com/x/y/pkg.Func(...)", "\t/abs/wt-a-0XIPUPMY/pkg/file.go:12", "/abs/wt-a-0XIPUPMY"},
		{"github.com/x/y/pkg.(*T).Method(0xc000012345)", "\t/abs/co/pkg/file.go:12 +0x1d", "/abs/co"},
		{"github.com/x/y.TestX(0xc000012345?)", "\t/abs/co/x_test.go:7 +0x1d\r", "/abs/co"},
		{"github.com/x/y/pkg_test.TestX(0xc000012345?)", "\t/abs/co/pkg/x_test.go:7 +0x1d", "/abs/co"},
		{"gopkg.in/yaml%2ev3.Unmarshal(...)", "\t/abs/co/yaml.v3/decode.go:7", "/abs/co"},
		// The module's last element names the checkout: its parent holds it.
		{"github.com/x/y/pkg.Func(...)", "\t/abs/y/pkg/file.go:12", "/abs"},
		// The standard library, package main, GOPATH, the module cache.
		{"time.Sleep(0x34630b8a000)", "\t/usr/local/go/src/runtime/time.go:363 +0x165", ""},
		{"runtime.gopanic({0x5a, 0xc0})", "\t/usr/local/go/src/runtime/panic.go:860 +0x13a", ""},
		{"main.main()", "\t/abs/co/cmd/x/main.go:10 +0xb", ""},
		{"github.com/x/y/pkg.Func(...)", "\t/root/go/src/github.com/x/y/pkg/file.go:12", ""},
		{"github.com/x/y/pkg.Func(...)", "\t/root/go/pkg/mod/github.com/x/y@v1.2.3/pkg/file.go:12", ""},
		{"github.com/x/y.Func(...)", "\t/y/file.go:3", ""},
		// Not a frame, not a file line.
		{"got values(3)", "\t/abs/co/pkg/file.go:12", ""},
		{"github.com/x/y/pkg.Func(...)", "\t/abs/co/pkg/file.py:12", ""},
	} {
		got, ok := goFrameRoot(tt.frame, tt.file)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("goFrameRoot(%q, %q) = %q, %v; want %q", tt.frame, tt.file, got, ok, tt.want)
		}
	}
}

// A root found in a Go stack is masked in the lines of its window before
// the frame too, and a root that is the workdir's parent or the home
// directory is not masked at all.
func TestFoundRoots(t *testing.T) {
	out := "    x_test.go:7: reading /root/wt-a-0XIPUPMY/testdata/in.json\n" +
		"panic: boom\n" +
		"github.com/x/y/pkg.Func(...)\n" +
		"\t/root/wt-a-0XIPUPMY/pkg/file.go:12\n" +
		"exit status 2\n"
	got := Normalize([]byte(out), Options{Home: "/root"})
	want := "    x_test.go:N: reading <workdir>/testdata/in.json\n" +
		"panic: boom\n" +
		"github.com/x/y/pkg.Func(...)\n" +
		"\t<workdir>/pkg/file.go:N\n" +
		"exit status 2\n"
	if got != want {
		t.Errorf("Normalize:\n%s", lineDiff(want, got))
	}
	// The frame says /abs holds github.com/x: /abs/z is no checkout of it.
	out = "github.com/x/y/pkg.Func(...)\n\t/abs/y/pkg/file.go:12\nopen /abs/z/data.json: no such file\n"
	for _, opt := range []Options{{Workdir: "/abs/y"}, {Home: "/abs/q"}, {Home: "/abs"}, {Roots: []string{"/abs/y/pkg"}}} {
		if got := Normalize([]byte(out), opt); strings.Contains(got, tokWorkdir+"/z/") {
			t.Errorf("with %+v, a root found over a known one was masked: %q", opt, got)
		}
	}
}
