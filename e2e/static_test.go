package e2e

import (
	"debug/elf"
	"runtime"
	"testing"
)

// The orchestrate these tests run, the real agent CLIs' and the real
// projects' alike, is the static build make build makes (no program
// interpreter, no C library loaded at each start): what they measure is
// what users run.
func TestOrchestrateBuiltStatic(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("an ELF binary's program interpreter is read on Linux")
	}
	f, err := elf.Open(realBin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: linked with the C library, not static", orchestrateBin)
		}
	}
}
