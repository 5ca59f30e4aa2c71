package results

import (
	"bytes"
	"errors"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// ReadReport reads a report file a gate wrote, JUnit XML or go test -json
// lines, the format found from the content; failed says whether the gate
// failed (see Reader.Report). The error says why the file is not a report
// of either kind: the caller then reads the gate's output instead.
func ReadReport(gate string, data []byte, failed bool, opt signature.Options) (Report, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return Report{}, errors.New("it is empty")
	case trimmed[0] == '<':
		return readJUnit(gate, data, &failed, opt)
	case trimmed[0] == '{':
		r := &Reader{gate: gate, opt: opt, parsers: []parser{newGoJSON()}, keep: headTail{max: MaxBlock / 2}}
		r.Write(data)
		if !r.parsers[0].recognized() {
			return Report{}, errors.New("it holds no go test -json event")
		}
		return r.report(&failed), nil
	}
	return Report{}, errors.New("it is neither JUnit XML nor go test -json")
}
