package lazyre

import (
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
