package results

import (
	"cmp"
	"slices"
	"strings"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// Text is the failure text of some failed units: each unit's block under a
// line naming it, in the order of the units' names, so that the same units
// failing the same way are the same text whatever order the runner printed
// them in. It is what an issue's failure records, and what its signature
// is over.
func Text(failed []Failed) string {
	sorted := slices.Clone(failed)
	slices.SortStableFunc(sorted, func(a, b Failed) int { return cmp.Compare(a.Unit.String(), b.Unit.String()) })
	var b strings.Builder
	for _, f := range sorted {
		b.WriteString("== " + f.Unit.String() + " ==\n")
		b.WriteString(strings.TrimRight(f.Block, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}

// Sign returns the signature and the normalized text of some failed units
// (see Text): one unit's alone is its Failed.Signature, and an attempt
// whose own units fail the same way as when they were filed signs the same.
func Sign(failed []Failed, opt signature.Options) (sig, normalized string) {
	return signature.Of([]byte(Text(failed)), signature.Fail, opt)
}
