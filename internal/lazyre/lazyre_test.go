package lazyre

import (
	"regexp"
	"slices"
	"sync"
	"testing"
)

// Compiled once, on first use, whoever uses it first; and it reads as the
// expression it holds.
func TestRE(t *testing.T) {
	re := New(`a(b+)`)
	if re.re != nil {
		t.Fatal("compiled before its first use")
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !re.MatchString("xabbby") {
				t.Error("no match")
			}
		}()
	}
	wg.Wait()
	if got := re.FindStringSubmatch("abb"); len(got) != 2 || got[1] != "bb" {
		t.Errorf("FindStringSubmatch = %q", got)
	}
	if got := re.ReplaceAllString("ab abb", "X"); got != "X X" {
		t.Errorf("ReplaceAllString = %q", got)
	}
	if got := re.ReplaceAllStringFunc("ab", func(s string) string { return "<" + s + ">" }); got != "<ab>" {
		t.Errorf("ReplaceAllStringFunc = %q", got)
	}
	if got := re.FindStringIndex("xab"); len(got) != 2 || got[0] != 1 {
		t.Errorf("FindStringIndex = %v", got)
	}
}

// An anchored expression skips a text whose first byte begins no match:
// it finds just what the compiled expression finds, whatever the text.
func FuzzFirstBytes(f *testing.F) {
	for _, seed := range [][2]string{
		{`^ FAIL  (.+)$`, " FAIL  a > b"},
		{`^(?:=+ )?\d+ (?:failed|passed)`, "== 1 failed"},
		{`^(\s*)--- (FAIL|PASS|SKIP): (\S+)`, "    --- FAIL: TestX"},
		{`^([^\s:][^:]*?):(\d+):(?:(\d+):)? (.+)$`, "a.go:1:2: x"},
		{`^(?i)kelvin`, "\u212aelvin"},
		{`^[^a-z]x`, "\xffx"},
		{`^é`, "é"},
		{`^a*b?$`, ""},
		{`^\bword`, "word"},
		{`^(?:|x)y`, "y"},
		{`^.x`, "\nx"},
		{`^(?s).x`, "\nx"},
		{`^(ok  |FAIL|\?   )\t(\S+)`, "?   \tpkg"},
		{`^x{0,2}y`, "y"},
		{`^(a|b)+c`, "bac"},
		{`x^`, "x"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, expr, s string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		l := New(expr)
		if got, want := l.FindStringSubmatch(s), re.FindStringSubmatch(s); !slices.Equal(got, want) {
			t.Fatalf("%q on %q: %q; want %q", expr, s, got, want)
		}
		if got, want := l.MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("%q matches %q: %v; want %v", expr, s, got, want)
		}
		if got, want := l.FindStringIndex(s), re.FindStringIndex(s); !slices.Equal(got, want) {
			t.Fatalf("%q index in %q: %v; want %v", expr, s, got, want)
		}
	})
}

// The bytes an anchored expression can begin with; none for one that is
// not anchored, or can match the empty text.
func TestFirstBytes(t *testing.T) {
	for expr, want := range map[string]string{
		`^ FAIL  (.+)$`:           " ",
		`^(?:=+ )?\d+ (?:failed)`: "0123456789=",
		`^(\s*)--- (FAIL|PASS)`:   "\t\n\f\r -",
		`^(?i)ok`:                 "Oo",
		`^(a|b)+c`:                "ab",
		`^x{0,2}y`:                "xy",
		`a$`:                      "",
		`^a*`:                     "",
		`(?m)^a`:                  "",
		`^a|^b`:                   "ab",
		`^a|b`:                    "",
	} {
		set := firstBytes(expr)
		var got []byte
		if set != nil {
			for b := range 128 {
				if set[b] {
					got = append(got, byte(b))
				}
			}
		}
		if string(got) != want {
			t.Errorf("firstBytes(%q) = %q; want %q", expr, got, want)
		}
	}
}
