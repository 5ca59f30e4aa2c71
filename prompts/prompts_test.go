package prompts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	embedded, err := Load("", "feedback.md")
	if err != nil || !strings.Contains(embedded, "Quality Gate Failures") {
		t.Fatalf("Load(feedback.md) = %.40q, %v", embedded, err)
	}
	if got, err := Load("", "feedback"); err != nil || got != embedded {
		t.Errorf(`Load("feedback") = %.40q, %v; want the same as feedback.md`, got, err)
	}

	dir := t.TempDir()
	if got, err := Load(dir, "feedback.md"); err != nil || got != embedded {
		t.Errorf("Load with no override = %.40q, %v; want the embedded one", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "feedback.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Load(dir, "feedback.md"); err != nil || got != "mine" {
		t.Errorf("Load with an override = %q, %v; want %q", got, err, "mine")
	}

	for _, name := range []string{"nope.md", "../feedback.md", "/etc/passwd", "", "."} {
		if _, err := Load(dir, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Load(%q) error = %v; want fs.ErrNotExist", name, err)
		}
	}

	// An override that exists but cannot be read is an error, not a fallback.
	if err := os.Mkdir(filepath.Join(dir, "broken.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, "broken.md"); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(unreadable override) error = %v; want a read error", err)
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if !slices.Contains(names, "feedback.md") || !slices.IsSorted(names) {
		t.Errorf("Names() = %q; want sorted, with feedback.md", names)
	}
	for _, n := range names {
		if _, err := Load("", n); err != nil {
			t.Errorf("Load(%q) from Names: %v", n, err)
		}
	}
}
