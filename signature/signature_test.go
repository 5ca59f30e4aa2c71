package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClassOf(t *testing.T) {
	for _, tt := range []struct {
		code int
		want Class
	}{
		{0, Fail}, {1, Fail}, {2, Fail}, {125, Fail}, {128, Fail}, {193, Fail}, {255, Fail}, {256, Fail},
		{126, NonRetryable}, {127, NonRetryable},
		{124, Infra}, {129, Infra}, {130, Infra}, {134, Infra}, {137, Infra}, {143, Infra}, {192, Infra},
		{-1, Infra}, {-9, Infra},
	} {
		if got := ClassOf(tt.code); got != tt.want {
			t.Errorf("ClassOf(%d) = %q; want %q", tt.code, got, tt.want)
		}
	}
}

// Each case is a line of real output (most from testdata/corpus) and what
// its rule makes of it; the cases that must stay as they are come last in
// each group.
var normalizeTests = []struct {
	rule string
	in   string
	opt  Options
	want string
}{
	// Terminal control.
	{"crlf", "FAIL\r\nFAIL\texample.com/calc\t0.003s\r\n", Options{}, "FAIL\nFAIL\texample.com/calc\t<dur>\n"},
	{"cr", "\rdownloading fixtures...  17%\rdownloading fixtures... 100%\nchecksum mismatch", Options{}, "downloading fixtures... 100%\nchecksum mismatch\n"},
	{"cr", "half done\r\r\n", Options{}, "half done\n"},
	{"ansi", "\x1b[01;31m\x1b[K--- FAIL\x1b[m\x1b[K: TestAdd (0.00s)", Options{}, "--- FAIL: TestAdd (<dur>)\n"},
	{"ansi", "\x1b[01m\x1b[Kcalc.c:7:29:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: \x1b[m\x1b[K‘\x1b[01m\x1b[Kcount\x1b[m\x1b[K’ undeclared", Options{},
		"calc.c:N:N: error: ‘count’ undeclared\n"},
	{"ansi", "\x1b]8;;file:///x/y.go\x1b\\y.go\x1b]8;;\x1b\\ failed", Options{}, "y.go failed\n"},
	{"ansi", "\x1b(Bplain\x1b", Options{}, "plain\n"},
	{"control", "a\x00b\x07c\x08d\x7fe\u0085f", Options{}, "abcdef\n"},
	{"utf8", "bad \xff byte", Options{}, "bad \uFFFD byte\n"},
	{"blank", "\n\n  \nfirst\n\n\t\n\nsecond  \n\n", Options{}, "first\n\nsecond\n"},

	// Timestamps and dates.
	{"time", "2026/11/22 03:05:05 probing", Options{}, "<time> probing\n"},
	{"time", "2026-11-22 03:08:56,630 WARNING app: loaded", Options{}, "<time> WARNING app: loaded\n"},
	{"time", "[2026-11-22 03:05:09] smoke test starting", Options{}, "[<time>] smoke test starting\n"},
	{"time", "2026-11-22T03:05:09.367784328Z server listening", Options{}, "<time> server listening\n"},
	{"time", "2026-11-22T03:05:09+01:00 up", Options{}, "<time> up\n"},
	{"time", "building at Sun Nov 22 03:05:09 UTC 2026", Options{}, "building at <time>\n"},
	{"time", "building at Sun Nov  2 03:05:09 UTC 2026", Options{}, "building at <time>\n"},
	{"time", "rfc2822: Sun, 22 Nov 2026 03:05:09 +0000", Options{}, "rfc2822: <time>\n"},
	{"time", "Nov 22 03:05:09 host sshd: ERROR", Options{}, "<time> host sshd: ERROR\n"},
	{"time", "retrying at 03:05:09.123", Options{}, "retrying at <time>\n"},
	{"date", "report for 2026-11-22 is empty", Options{}, "report for <date> is empty\n"},
	{"date", "2026-11-222026-11-22 and duration_ms 0duration_ms 0", Options{}, "2026-11-222026-11-22 and duration_ms 0duration_ms 0\n"},
	{"time", "ratio 3:4 at 12:30", Options{}, "ratio 3:4 at 12:30\n"},

	// Durations and rates.
	{"duration", "--- FAIL: TestAdd (0.00s)", Options{}, "--- FAIL: TestAdd (<dur>)\n"},
	{"duration", "FAIL\texample.com/calc\t2.005s", Options{}, "FAIL\texample.com/calc\t<dur>\n"},
	{"duration", "Ran 4 tests in 0.001s", Options{}, "Ran 4 tests in <dur>\n"},
	{"duration", "\t\tTestHang (2s)", Options{}, "\t\tTestHang (<dur>)\n"},
	{"duration", "  ✖ multiplies (1.023336ms)", Options{}, "  ✖ multiplies (<dur>)\n"},
	{"duration", "      duration_ms: 1.243374", Options{}, "      duration_ms: <dur>\n"},
	{"duration", "ℹ duration_ms 102.978818", Options{}, "ℹ duration_ms <dur>\n"},
	{"duration", "took 1m30.5s to fail", Options{}, "took <dur> to fail\n"},
	{"duration", "curl: (7) Failed to connect to localhost port 42413 after 0 ms: Couldn't connect to server", Options{},
		"curl: (7) Failed to connect to localhost port <port> after <dur>: Couldn't connect to server\n"},
	{"rate", "4194304000 bytes (4.2 GB, 3.9 GiB) copied, 0.120921 s, 34.7 GB/s", Options{},
		"4194304000 bytes (4.2 GB, 3.9 GiB) copied, <dur>, <rate>\n"},
	{"duration", "goroutine 7 [select, 2 minutes]:", Options{}, "goroutine N [select, <dur>]:\n"},
	{"duration", "timeout: 5s, want 2s, got 3 retries", Options{}, "timeout: 5s, want 2s, got 3 retries\n"},

	// Paths.
	{"tmp", "    calc_test.go:24: loading config: stat /tmp/TestConfig1875342514/001/config.yaml: no such file or directory", Options{},
		"    calc_test.go:N: loading config: stat <tmp>/001/config.yaml: no such file or directory\n"},
	{"tmp", "scratch dir /tmp/tmpoj60fu8d object", Options{}, "scratch dir <tmp> object\n"},
	{"tmp", "state saved to /tmp/tmp.7RMk7CRSAD", Options{}, "state saved to <tmp>\n"},
	{"tmp", "fork/exec /tmp/go-build3456/b001/exe/probe: permission denied", Options{}, "fork/exec <tmp>/b001/exe/probe: permission denied\n"},
	{"tmp", "open /private/var/folders/xy/k2j3h4/T/TestX99/001/f: denied", Options{}, "open <tmp>/001/f: denied\n"},
	{"tmp", "('/tmp/sigcorpus.SiLg99', 3)", Options{}, "('<tmp>', 3)\n"},
	{"tmp", "see /root/tmp/notes and /tmpfile", Options{}, "see /root/tmp/notes and /tmpfile\n"},
	{"tmp", "/tmp/a/tmp/b x/tmp/c ~/tmp/d -/tmp/e //tmp/f /tmp/ 2>/tmp/g!/tmp/h", Options{}, "<tmp>/tmp/b x/tmp/c ~/tmp/d -/tmp/e /<tmp> /tmp/ 2><tmp><tmp>\n"},
	{"tmp", "/private/etc /var/folders/a/b/X/c /var/folders/a/b/T/c/d <tmp>/tmp/x", Options{}, "/private/etc /var/folders/a/b/X/c <tmp>/d <tmp>/tmp/x\n"},
	{"tmp", "/home/u/p/tmp/x", Options{Workdir: "/home/u/p"}, "<workdir>/tmp/x\n"},
	{"tmp", "12:00:00/tmp/x and /w12:00:00", Options{Workdir: "/w"}, "<time><tmp> and /w12:00:00\n"},
	{"workdir", "\t/root/sigcorpus.OzMU8a/index_test.go:7", Options{Workdir: "/root/sigcorpus.OzMU8a"}, "\t<workdir>/index_test.go:N\n"},
	{"workdir", "at TestContext.<anonymous> (file:///root/sigcorpus.IpcMpn/calc.test.mjs:11:43)", Options{Workdir: "/root/sigcorpus.IpcMpn/"},
		"at TestContext.<anonymous> (file://<workdir>/calc.test.mjs:N:N)\n"},
	{"workdir", "make[1]: Entering directory '/tmp/sigcorpus.lX0mdU/sub'", Options{Workdir: "/tmp/sigcorpus.lX0mdU"},
		"make[1]: Entering directory '<workdir>/sub'\n"},
	{"workdir", "/home/u/project/x.go and /x/home/u/proj", Options{Workdir: "/home/u/proj"}, "/home/u/project/x.go and /x/home/u/proj\n"},
	{"workdir", "cd /home/u/proj", Options{Workdir: "/home/u/proj", Home: "/home/u"}, "cd <workdir>\n"},
	{"home", `  File "/home/u/.pyenv/versions/3.11.7/lib/python3.11/unittest/case.py", line 58`, Options{Home: "/home/u"},
		`  File "~/.pyenv/versions/3.11.7/lib/python3.11/unittest/case.py", line N` + "\n"},
	{"workdir", "/ is not masked", Options{Workdir: "/", Home: "."}, "/ is not masked\n"},
	{"workdir", "a/b and C:\\w\\x.go and C:\\", Options{Workdir: "a/b", Home: `C:\w`}, "a/b and ~\\x.go and C:\\\n"},
	{"workdir", "/w/ƙ", Options{Workdir: "/w/\xc6"}, "/w/ƙ\n"},

	// PIDs, ports.
	{"pid", "[<time>] smoke test starting, pid=11827", Options{}, "[<time>] smoke test starting, pid=<pid>\n"},
	{"pid", "check (pid 11088): add(1, 2) = 3", Options{}, "check (pid <pid>): add(1, 2) = 3\n"},
	{"pid", "==11118==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000020", Options{},
		"==<pid>==ERROR: AddressSanitizer: heap-buffer-overflow on address <addr>\n"},
	{"pid", "(node:18206) [DEP0005] DeprecationWarning: Buffer() is deprecated", Options{}, "(node:<pid>) [DEP0005] DeprecationWarning: Buffer() is deprecated\n"},
	{"port", `health check: Get "http://127.0.0.1:45007/health": dial tcp 127.0.0.1:45007: connect: connection refused`, Options{},
		`health check: Get "http://127.0.0.1:<port>/health": dial tcp 127.0.0.1:<port>: connect: connection refused` + "\n"},
	{"port", "listening on [::1]:61000 and localhost:40000", Options{}, "listening on [::1]:<port> and localhost:<port>\n"},
	{"port", "dial tcp 127.0.0.1:5432 and localhost:8080 and localhost:12345 and port 443", Options{},
		"dial tcp 127.0.0.1:5432 and localhost:8080 and localhost:12345 and port 443\n"},

	// Addresses, goroutines, IDs.
	{"addr", "testing.tRunner(0xcda2849a008, 0x595230)", Options{}, "testing.tRunner(...)\n"},
	{"addr", "testing.runTests({0x589e69, 0x10}, {0x589e69, 0x10}, 0xcda283f4060, {0x6d3320, 0x6, 0x6}, {0xc2b8b4d59fcb97b3, 0x7737ae31, ...})", Options{},
		"testing.runTests(...)\n"},
	{"addr", "example.com/calc.TestHang(0xcda2849a248?)", Options{}, "example.com/calc.TestHang(...)\n"},
	{"addr", "\t/tmp/sigcorpus.TKBxRP/index_test.go:14 +0x45", Options{}, "\t<tmp>/index_test.go:N +<off>\n"},
	{"addr", "    #4 0x561805f270b0 in _start (/tmp/sigcorpus.xlfmod/overflow+0x10b0)", Options{}, "    #4 <addr> in _start (<tmp>/overflow+<off>)\n"},
	{"addr", "scratch object <object object at 0x7effa806c710>", Options{}, "scratch object <object object at <addr>>\n"},
	{"addr", "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a5b3c]", Options{},
		"[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=<addr>]\n"},
	{"addr", "Add(0x1, 2) = 0x3", Options{}, "Add(0x1, 2) = 0x3\n"},
	{"goroutine", "goroutine 20 [running]:", Options{}, "goroutine N [running]:\n"},
	{"goroutine", "created by example.com/calc.TestIndex in goroutine 19", Options{}, "created by example.com/calc.TestIndex in goroutine N\n"},
	{"race", "Read at 0x00c00009c1d8 by goroutine 9:", Options{}, "Access at <addr> by goroutine N:\n"},
	{"race", "Previous write at 0x00c00009c1d8 by goroutine 11:", Options{}, "Previous access at <addr> by goroutine N:\n"},
	{"race", "Goroutine 11 (finished) created at:", Options{}, "Goroutine N (<state>) created at:\n"},
	{"uuid", "request 7fb186e3-ac4c-4160-8de0-b4115be26a9d cache key 4c188552dff7953a876b71724fd8b924a6c0c7a15087580b6dbbb02fe9724917", Options{},
		"request <uuid> cache key <hex>\n"},
	{"hex", "got 12345678901234567890, commit abc1234, id deadbeef", Options{}, "got 12345678901234567890, commit abc1234, id deadbeef\n"},

	// Line and column numbers.
	{"fileline", "    calc_test.go:11: Add(1, 2): got 3 want 4", Options{}, "    calc_test.go:N: Add(1, 2): got 3 want 4\n"},
	{"fileline", "./calc.go:5:41: undefined: c", Options{}, "./calc.go:N:N: undefined: c\n"},
	{"fileline", "check: check.c:9: main: Assertion `add(1, 2) == 4' failed.", Options{}, "check: check.c:N: main: Assertion `add(1, 2) == 4' failed.\n"},
	{"fileline", "make: *** [Makefile:8: test] Error 2", Options{}, "make: *** [Makefile:N: test] Error 2\n"},
	{"fileline", "        Test.run (node:internal/test_runner/test:796:25)", Options{}, "        Test.run (node:internal/test_runner/test:N:N)\n"},
	{"fileline", "test at calc.test.mjs:11:11", Options{}, "test at calc.test.mjs:N:N\n"},
	{"pyline", `  File "/tmp/sigcorpus.SiLg99/test_calc.py", line 18, in test_ratio`, Options{}, `  File "<tmp>/test_calc.py", line N, in test_ratio` + "\n"},
	{"gutter", "    7 |         total = add(1, 2) + count;", Options{}, "    N |         total = add(1, 2) + count;\n"},
	{"gutter", "  123 | x", Options{}, "    N | x\n"},
	{"shline", "sh: 1: gotestsum: not found", Options{}, "sh: N: gotestsum: not found\n"},
	{"shline", "./run.sh: line 5: foo: command not found", Options{}, "./run.sh: line N: foo: command not found\n"},
	{"fileline", "panic: runtime error: index out of range [5] with length 3", Options{}, "panic: runtime error: index out of range [5] with length 3\n"},
	{"fileline", "version 1.2:3 and 10.0.0.1:22", Options{}, "version 1.2:3 and 10.0.0.1:22\n"},

	// Lines of passing tests.
	{"noise", "=== RUN   TestMul\n--- PASS: TestMul (0.00s)\nPASS\nok  \texample.com/calc/util\t0.002s\n", Options{}, ""},
	{"noise", "?   \texample.com/calc/cmd/probe\t[no test files]\n-test.shuffle 1795316676000060754\nok  \texample.com/x\t(cached)\n", Options{}, ""},
	{"noise", "F.EF\ntest_ok (__main__.CalcTest.test_ok) ... ok\n", Options{}, ""},
	{"noise", "✔ adds (1.008143ms)\n  ✔ squares (0.117265ms)\n", Options{}, ""},
	{"tap", "    not ok 2 - multiplies", Options{}, "    not ok N - multiplies\n"},

	// pytest: the summary keeps failures, errors and warnings, not passes, and
	// not the padding that follows the duration.
	{"pytest", "========================= 1 failed, 2 passed in 0.06s ==========================", Options{}, "== 1 failed in <dur> ==\n"},
	{"pytest", "=== 2 failed, 10 passed, 1 skipped, 3 warnings in 12.50s (0:00:12) ===", Options{}, "== 2 failed, 3 warnings in <dur> ==\n"},
	{"pytest", "1 failed, 14 passed in 0.14s", Options{}, "1 failed in <dur>\n"},
	{"pytest", "1 error in 0.10s", Options{}, "1 error in <dur>\n"},
	{"pytest", "collecting ... collected 15 items", Options{}, "collecting ... collected N items\n"},
	{"pytest", "test_calc.py::test_add FAILED                                            [ 66%]", Options{}, "test_calc.py::test_add FAILED\n"},
	{"pytest", "test_calc.py::test_sub PASSED                                            [ 33%]", Options{}, ""},
	{"pytest", "test_calc.py .F.                                                         [100%]", Options{}, ""},
	{"pytest", "[gw1] [ 50%] FAILED test_calc.py::test_add", Options{}, "FAILED test_calc.py::test_add\n"},
	{"pytest", "[gw0] linux -- Python 3.11.2 /usr/bin/python3", Options{}, "[gw<N>] linux -- Python 3.11.2 /usr/bin/python3\n"},
	{"pytest", "gw0 [10] / gw1 [10]", Options{}, ""},
	{"pytest", "3 passed, 2 skipped in 0.11s", Options{}, "no failures in <dur>\n"},
	{"pytest", "found 2 failed, 3 candidates in total", Options{}, "found 2 failed, 3 candidates in total\n"},
	// cargo test.
	{"cargo", "thread 'tests::adds' (19173) panicked at src/lib.rs:16:10:", Options{}, "thread 'tests::adds' (<tid>) panicked at src/lib.rs:N:N:\n"},
	{"cargo", "running 7 tests", Options{}, "running N tests\n"},
	{"cargo", "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.51s", Options{},
		"test result: FAILED. 2 failed; finished in <dur>\n"},
	{"cargo", ".... 5/6", Options{}, ""},
	{"cargo", "left: 5/6", Options{}, "left: 5/6\n"},
	// node --test counts, and TAP's plan.
	{"node", "# pass 12\n# fail 1\nℹ tests 13\n    1..3", Options{}, "# pass N\n# fail 1\nℹ tests N\n    1..N\n"},
	// go test -json: the output events' text, nothing of the others.
	{"gojson", `{"Time":"2026-11-23T23:55:55.7Z","Action":"run","Package":"p","Test":"TestAdd"}` + "\n" +
		`{"Time":"2026-11-23T23:55:55.7Z","Action":"output","Package":"p","Test":"TestAdd","Output":"    calc_test.go:16: got 3\n"}` + "\n" +
		`{"Time":"2026-11-23T23:55:55.7Z","Action":"fail","Package":"p","Test":"TestAdd","Elapsed":0.003}`, Options{}, "    calc_test.go:N: got 3\n"},
	{"gojson", `{"Action":"output"` + "\n" + `{"not":"go test"}`, Options{}, "{\"Action\":\"output\"\n{\"not\":\"go test\"}\n"},
	// Random directory names outside the temporary directory.
	{"rand", "ls: cannot access '/w/work/tmp.syyUvcAkkh/calc.o'", Options{}, "ls: cannot access '/w/work/tmp.<rand>/calc.o'\n"},
	{"rand", "building in /w/work/tmp.syyUvcAkkh", Options{}, "building in /w/work/tmp.<rand>\n"},
	{"rand", "in /w/build-aZimz1z5/out and /w/Ab3xYz9Q1/out", Options{}, "in /w/build-<rand>/out and /w/<rand>/out\n"},
	{"rand", "created by example.com/calc.TestHang in /w/MyProject/x and /w/build-Release/x", Options{},
		"created by example.com/calc.TestHang in /w/MyProject/x and /w/build-Release/x\n"},
	{"rand", "/w/work/tmp.syyUvcAkk /w/work/tmp.syyUvcAkkhh", Options{}, "/w/work/tmp.syyUvcAkk /w/work/tmp.syyUvcAkkhh\n"},

	// The mark that gate puts where it dropped the middle of a long output.
	{"omitted", "head\n… 12345 bytes omitted …\ntail", Options{}, "head\n… N bytes omitted …\ntail\n"},
}

func TestNormalizeRules(t *testing.T) {
	for _, tt := range normalizeTests {
		if got, want := Normalize([]byte(tt.in), tt.opt), noBlankLines(tt.want); got != want {
			t.Errorf("%s: Normalize(%q) = %q; want %q", tt.rule, tt.in, got, want)
		}
	}
}

// The passes over several lines.
var structureTests = []struct {
	name string
	in   []string // outputs that are one failure: each must normalize to want
	want string
}{
	{
		name: "go test blocks in any order, subtests too",
		in: []string{
			"--- FAIL: TestB (0.00s)\n    b_test.go:3: b\n--- FAIL: TestA (0.01s)\n    --- FAIL: TestA/y (0.00s)\n        a_test.go:9: y\n    --- FAIL: TestA/x (0.00s)\n        a_test.go:8: x\nFAIL\n",
			"--- FAIL: TestA (0.00s)\n    --- FAIL: TestA/x (0.00s)\n        a_test.go:8: x\n    --- FAIL: TestA/y (0.00s)\n        a_test.go:9: y\n--- FAIL: TestB (0.00s)\n    b_test.go:3: b\nFAIL\n",
		},
		want: "--- FAIL: TestA (<dur>)\n    --- FAIL: TestA/x (<dur>)\n        a_test.go:N: x\n    --- FAIL: TestA/y (<dur>)\n        a_test.go:N: y\n--- FAIL: TestB (<dur>)\n    b_test.go:N: b\nFAIL\n",
	},
	{
		name: "go test -v goes back to the shape of go test",
		in: []string{
			"=== RUN   TestA\n=== PAUSE TestA\n=== RUN   TestB\n    b_test.go:3: b\n--- FAIL: TestB (0.00s)\n=== CONT  TestA\n    a_test.go:8: x\n        more\n--- FAIL: TestA (0.00s)\nFAIL\n",
			"--- FAIL: TestA (0.00s)\n    a_test.go:8: x\n        more\n--- FAIL: TestB (0.00s)\n    b_test.go:3: b\nFAIL\n",
		},
		want: "--- FAIL: TestA (<dur>)\n    a_test.go:N: x\n        more\n--- FAIL: TestB (<dur>)\n    b_test.go:N: b\nFAIL\n",
	},
	{
		name: "go test -v drops what passing tests logged",
		in: []string{
			"=== RUN   TestOK\n    ok_test.go:3: fine\n--- PASS: TestOK (0.00s)\n=== RUN   TestA\n    a_test.go:8: x\n--- FAIL: TestA (0.00s)\nFAIL\n",
		},
		want: "--- FAIL: TestA (<dur>)\n    a_test.go:N: x\nFAIL\n",
	},
	{
		name: "unittest blocks in any order",
		in: []string{
			"FF\n" + strings.Repeat("=", 70) + "\nFAIL: test_b (m.T.test_b)\n" + strings.Repeat("-", 70) + "\nAssertionError: 2 != 1\n\n" +
				strings.Repeat("=", 70) + "\nFAIL: test_a (m.T.test_a)\n" + strings.Repeat("-", 70) + "\nAssertionError: 3 != 4\n\n" +
				strings.Repeat("-", 70) + "\nRan 2 tests in 0.001s\n\nFAILED (failures=2)\n",
			"FF\n" + strings.Repeat("=", 70) + "\nFAIL: test_a (m.T.test_a)\n" + strings.Repeat("-", 70) + "\nAssertionError: 3 != 4\n\n" +
				strings.Repeat("=", 70) + "\nFAIL: test_b (m.T.test_b)\n" + strings.Repeat("-", 70) + "\nAssertionError: 2 != 1\n\n" +
				strings.Repeat("-", 70) + "\nRan 2 tests in 0.002s\n\nFAILED (failures=2)\n",
		},
		want: strings.Repeat("=", 70) + "\nFAIL: test_a (m.T.test_a)\n" + strings.Repeat("-", 70) + "\nAssertionError: 3 != 4\n\n" +
			strings.Repeat("=", 70) + "\nFAIL: test_b (m.T.test_b)\n" + strings.Repeat("-", 70) + "\nAssertionError: 2 != 1\n\n" +
			strings.Repeat("-", 70) + "\nRan 2 tests in <dur>\n\nFAILED (failures=2)\n",
	},
	{
		name: "TAP: passing subtests go, failing ones are sorted",
		in: []string{
			"TAP version 13\n# Subtest: s\n    # Subtest: b\n    not ok 1 - b\n      ---\n      duration_ms: 1.2\n      ...\n    # Subtest: ok\n    ok 2 - ok\n      ---\n      duration_ms: 0.1\n      ...\n    # Subtest: a\n    not ok 3 - a\n      ---\n      duration_ms: 0.3\n      ...\n    1..3\nnot ok 1 - s\n1..1\n",
			"TAP version 13\n# Subtest: s\n    # Subtest: a\n    not ok 1 - a\n      ---\n      duration_ms: 1.2\n      ...\n    # Subtest: b\n    not ok 2 - b\n      ---\n      duration_ms: 0.1\n      ...\n    # Subtest: ok\n    ok 3 - ok\n    1..3\nnot ok 1 - s\n1..1\n",
		},
		want: "TAP version 13\n# Subtest: s\n    # Subtest: a\n    not ok N - a\n      ---\n      duration_ms: <dur>\n      ...\n    # Subtest: b\n    not ok N - b\n      ---\n      duration_ms: <dur>\n      ...\n    1..N\nnot ok N - s\n1..N\n",
	},
	{
		name: "node spec: failing tests sorted, with their test at lines",
		in: []string{
			"✖ failing tests:\n\ntest at t.mjs:9:1\n✖ b (1ms)\n  Error: b\n\ntest at t.mjs:3:1\n✖ a (2ms)\n  Error: a\n",
			"✖ failing tests:\n\ntest at t.mjs:3:1\n✖ a (1ms)\n  Error: a\n\ntest at t.mjs:9:1\n✖ b (2ms)\n  Error: b\n",
		},
		want: "✖ failing tests:\n\ntest at t.mjs:N:N\n✖ a (<dur>)\n  Error: a\n\ntest at t.mjs:N:N\n✖ b (<dur>)\n  Error: b\n",
	},
	{
		name: "blocks sort as they will be written, blank-line runs squeezed",
		in: []string{
			"--- FAIL: TestA (0s)\n    x\n\n\n    z\n--- FAIL: TestA (0s)\n    x\n\n    y\n",
			"--- FAIL: TestA (0s)\n    x\n\n    y\n--- FAIL: TestA (0s)\n    x\n\n    z\n",
		},
		want: "--- FAIL: TestA (<dur>)\n    x\n\n    y\n--- FAIL: TestA (<dur>)\n    x\n\n    z\n",
	},
	{
		name: "pytest: failure blocks and the short summary in any order",
		in: []string{
			"==== FAILURES ====\n____ test_b ____\nE assert 1 == 2\n____ test_a ____\nE assert 3 == 4\n==== short test summary info ====\nFAILED t.py::test_b - x\nFAILED t.py::test_a - y\n== 2 failed in 1.0s ==\n",
			"==== FAILURES ====\n____ test_a ____\nE assert 3 == 4\n____ test_b ____\nE assert 1 == 2\n==== short test summary info ====\nFAILED t.py::test_a - y\nFAILED t.py::test_b - x\n== 2 failed in 2.0s ==\n",
		},
		want: "==== FAILURES ====\n____ test_a ____\nE assert 3 == 4\n____ test_b ____\nE assert 1 == 2\n==== short test summary info ====\nFAILED t.py::test_a - y\nFAILED t.py::test_b - x\n== 2 failed in <dur> ==\n",
	},
	{
		name: "data races: sorted, repeats dropped",
		in: []string{
			"==================\nWARNING: DATA RACE\nWrite at 0x00c0000182c8 by goroutine 9:\n  p.f()\n==================\n==================\nWARNING: DATA RACE\nRead at 0x00c0000182c8 by goroutine 7:\n  p.f()\n==================\n--- FAIL: TestRace (0.00s)\n",
			"==================\nWARNING: DATA RACE\nRead at 0x00c0000941d8 by goroutine 8:\n  p.f()\n==================\n--- FAIL: TestRace (0.00s)\n",
		},
		want: "==================\nWARNING: DATA RACE\nAccess at <addr> by goroutine N:\n  p.f()\n==================\n--- FAIL: TestRace (<dur>)\n",
	},
}

func TestNormalizeStructure(t *testing.T) {
	for _, tt := range structureTests {
		for _, in := range tt.in {
			if got, want := Normalize([]byte(in), Options{}), noBlankLines(tt.want); got != want {
				t.Errorf("%s: Normalize(%q) =\n%s\nwant\n%s", tt.name, in, got, want)
			}
		}
	}
}

// Things that are not the same failure must stay apart.
func TestNormalizeKeepsDifferences(t *testing.T) {
	for _, pair := range [][2]string{
		{"calc_test.go:11: got 3 want 4", "calc_test.go:11: got 5 want 4"},
		{"--- FAIL: TestAdd (0.00s)", "--- FAIL: TestAddition (0.00s)"},
		{"./calc.go:5:41: undefined: c", "./report.go:5:41: undefined: c"},
		{"dial tcp 127.0.0.1:5432: connection refused", "dial tcp 127.0.0.1:6379: connection refused"},
		{"index out of range [5] with length 3", "index out of range [7] with length 3"},
		{"ERROR: expected status 200, got 000", "ERROR: expected status 204, got 000"},
	} {
		a, b := Normalize([]byte(pair[0]), Options{}), Normalize([]byte(pair[1]), Options{})
		if a == b {
			t.Errorf("Normalize(%q) = Normalize(%q) = %q; want them to differ", pair[0], pair[1], a)
		}
	}
}

func TestCompute(t *testing.T) {
	out := []byte("--- FAIL: TestAdd (0.00s)\n    calc_test.go:11: got 3 want 4\n")
	norm := Normalize(out, Options{})
	if got, want := Compute(out, Fail, Options{}), hashOf(Fail, norm); got != want {
		t.Errorf("Compute(%q, Fail) = %s; want %s", out, got, want)
	}
	if Compute(out, "", Options{}) != Compute(out, Fail, Options{}) {
		t.Errorf("Compute with an empty class differs from Fail")
	}
	if Compute(out, Fail, Options{}) == Compute(out, Infra, Options{}) {
		t.Errorf("Compute(%q): Fail and Infra give one signature", out)
	}
	sig, n := Of(out, NonRetryable, Options{})
	if sig != Compute(out, NonRetryable, Options{}) || n != norm {
		t.Errorf("Of(%q) = %s, %q; want %s, %q", out, sig, n, Compute(out, NonRetryable, Options{}), norm)
	}
}

func TestEmpty(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"", true},
		{"\r\n \t\n\x1b[0m\n", true},
		{"PASS\nok  \texample.com/calc/util\t0.002s\n", true},
		{"exit status 1\n", false},
	} {
		if got := Empty(Normalize([]byte(tt.in), Options{})); got != tt.want {
			t.Errorf("Empty(Normalize(%q)) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

// hashOf is the signature layout: SHA256 of "sig-v3 CLASS\n" and the SHA256
// of the normalized text.
func hashOf(class Class, normalized string) string {
	inner := sha256.Sum256([]byte(normalized))
	outer := sha256.Sum256(append([]byte(Version+" "+string(class)+"\n"), inner[:]...))
	return hex.EncodeToString(outer[:])
}

// TestWriterBounded writes far more than Window and MaxLine through a
// Writer: lines without a newline are cut, the kept text stops at
// KeepNormalized, and the result does not depend on how the writes were cut.
func TestWriterBounded(t *testing.T) {
	block := []byte("--- FAIL: TestAdd (0.00s)\n    calc_test.go:11: got 3 want 4\nplain line 12345\n")
	var all []byte
	for len(all) < 3*Window {
		all = append(all, block...)
	}
	all = append(all, bytes.Repeat([]byte("z"), 3*MaxLine+5)...)
	one := NewWriter(Options{})
	one.Write(all)
	d1 := one.Digest()
	pieces := NewWriter(Options{})
	for i := 0; i < len(all); i += 4093 {
		pieces.Write(all[i:min(i+4093, len(all))])
	}
	d2 := pieces.Digest()
	if d1.Signature(Fail) != d2.Signature(Fail) {
		t.Fatalf("one write and writes of 4093 bytes sign differently")
	}
	if !d1.Cut || len(d1.Normalized) > KeepNormalized || d1.Empty || d1.Bytes != int64(len(all)) {
		t.Fatalf("Digest: cut %v, %d bytes kept, empty %v, %d bytes; want cut, <= %d, not empty, %d",
			d1.Cut, len(d1.Normalized), d1.Empty, d1.Bytes, KeepNormalized, len(all))
	}
	var b strings.Builder
	w := NewWriter(Options{})
	w.Explain(&b)
	w.Write(all)
	w.Digest()
	if !strings.HasSuffix(b.String(), "\n"+strings.Repeat("z", MaxLine)+"\n"+strings.Repeat("z", 5)+"\n") {
		t.Fatalf("a line of %d bytes was not cut into lines of MaxLine", 3*MaxLine+5)
	}
	// Another byte in the last window changes the signature.
	other := NewWriter(Options{})
	other.Write(append(all[:len(all):len(all)], 'z'))
	if other.Digest().Signature(Fail) == d1.Signature(Fail) {
		t.Fatalf("one more byte at the end did not change the signature")
	}
}

func TestSyslogPID(t *testing.T) {
	for in, want := range map[string]string{
		"Nov 22 03:05:09 host sshd[1234]: Accepted key": "<time> host sshd[<pid>]: Accepted key\n",
		"Nov 22 03:05:09 host sshd[99]: Accepted key":   "<time> host sshd[<pid>]: Accepted key\n",
		"myservice[4242]: listening":                    "myservice[<pid>]: listening\n",
		"make[1]: *** [Makefile:3: all] Error 1":        "make[1]: *** [Makefile:N: all] Error 1\n",
		"got values: a b c x[12]: 3":                    "got values: a b c x[12]: 3\n",
		"[12]: nothing":                                 "[12]: nothing\n",
		"]: x":                                          "]: x\n",
		"a b sshd[12x]: no":                             "a b sshd[12x]: no\n",
		// A level padded to a width, or a tab, is one separator.
		"INFO  svc[20667]: starting":                    "INFO  svc[<pid>]: starting\n",
		"Nov 22 03:05:09 INFO  svc[20667]: starting":    "<time> INFO  svc[<pid>]: starting\n",
		"Nov 22 03:05:09\tINFO\tsvc[20667]\tstarting":   "<time>\tINFO\tsvc[<pid>]\tstarting\n",
		"Nov 22 03:05:09 INFO \t svc[20667]:\tstarting": "<time> INFO \t svc[<pid>]:\tstarting\n",
		// An indented line is a test's message, not a log line.
		"    shard_test.go:7: shard[3]: checksum mismatch": "    shard_test.go:N: shard[3]: checksum mismatch\n",
		" sshd[12]: not a log line":                        " sshd[12]: not a log line\n",
	} {
		if got := Normalize([]byte(in), Options{}); got != want {
			t.Errorf("Normalize(%q) = %q; want %q", in, got, want)
		}
	}
}

// noBlankLines returns s without its blank lines, which Normalize drops.
func noBlankLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(l)
		}
	}
	return b.String()
}

func TestHeadline(t *testing.T) {
	corpus := loadCorpus(t)
	for name, want := range map[string]string{
		"go-assert.1.txt":     "--- FAIL: TestAdd",
		"pytest.1.txt":        "FAILED test_calc.py::test_add - assert 3 == 4",
		"cargo-test.1.txt":    "tests::adds --- FAILED",
		"py-unittest-v.1.txt": "test_add (__main__.CalcTest.test_add) ... FAIL",
		"node-tap.1.txt":      "not ok N - ",
		"gcc.1.txt":           "error:",
		"empty-silent.2.txt":  "",
	} {
		c := corpus[name]
		got := Headline(Normalize(c.output, c.opt))
		if want == "" && got != "" || !strings.Contains(got, want) || strings.Contains(got, "\n") || len(got) > maxHeadline+len("…") {
			t.Errorf("Headline(%s) = %q; want it to hold %q", name, got, want)
		}
	}
	if got := Headline("--- FAIL: TestX (<dur>)\n    x_test.go:N: got 3 want 4\n"); got != "--- FAIL: TestX (<dur>): x_test.go:N: got 3 want 4" {
		t.Errorf("Headline = %q", got)
	}
	if got := Headline("____ test_add ____\n    def test_add():\n>       assert add(1, 2) == 4\nE       assert 3 == 4\n"); got != "____ test_add ____: assert 3 == 4" {
		t.Errorf("Headline(pytest block) = %q", got)
	}
	if got := Headline("FAIL: " + strings.Repeat("é", 200)); len(got) > maxHeadline+len("…") || !utf8.ValidString(got) {
		t.Errorf("Headline of a long line = %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}

// A line with "]:" and no name[pid] before it is text: the syslog rule
// once sliced it out of bounds, and every gate whose output held one made
// orchestrate panic.
func TestSyslogRuleOddBrackets(t *testing.T) {
	for _, out := range []string{"]: 1\n", "[]: 2\n", "svc[]: 3\n", "x ]: 4 ]: 5\n"} {
		_, got := Of([]byte(out), Fail, Options{})
		if want := strings.TrimSpace(out); strings.TrimSpace(got) != want {
			t.Errorf("Of(%q) normalized to %q; want it as it is", out, got)
		}
	}
}
