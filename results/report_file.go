package results

import (
	"bytes"
	"errors"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// ReadReport reads a report file a gate wrote, the format found from the
// content: JUnit XML (ReadJUnit), go test -json lines (ReadGoJSON), or a
// runner's text output (Read). failed says whether the gate failed (see
// Reader.Report). The error says why the file is not a report: the caller
// then reads the gate's output instead.
func ReadReport(gate string, data []byte, failed bool, opt signature.Options) (Report, error) {
	trimmed := bytes.TrimSpace(data)
	var rep Report
	switch {
	case len(trimmed) == 0:
		return Report{}, errors.New("it is empty")
	case trimmed[0] == '<':
		if rep = ReadJUnit(gate, data, opt); rep.Runner == "" {
			return Report{}, errors.New("it is not JUnit XML")
		}
	case trimmed[0] == '{':
		if rep = ReadGoJSON(gate, data, opt); rep.Runner == "" {
			return Report{}, errors.New("it holds no go test -json event")
		}
	default:
		if rep = Read(gate, data, opt); rep.Runner == "" {
			return Report{}, errors.New("it is neither JUnit XML, go test -json nor the output of a runner orchestrate reads")
		}
	}
	return settle(rep, failed, opt), nil
}

// settle makes a report read without the gate's exit status agree with
// it: the failures of a gate that passed are not failures, and a gate
// that failed with no failure listed failed whole.
func settle(rep Report, failed bool, opt signature.Options) Report {
	switch {
	case !failed:
		rep.Failed, rep.More = nil, 0
	case rep.Passing():
		rep.Whole = true
		f := Failed{Unit: Unit{Gate: rep.Gate}}
		f.Signature, _ = Sign([]Failed{f}, opt)
		rep.Failed = []Failed{f}
	}
	return rep
}
