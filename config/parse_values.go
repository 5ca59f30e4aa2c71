package config

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Scalar readers. Each reports its own problem and says whether the value is good.

func (p *parser) scalar(v *yaml.Node, key, want string) bool {
	if v.Kind != yaml.ScalarNode {
		p.add(v.Line, "%s: want %s, got %s", key, want, describe(v))
		return false
	}
	return true
}

func (p *parser) integer(v *yaml.Node, key string, lo, hi int) (int, bool) {
	if !p.scalar(v, key, "an integer") {
		return 0, false
	}
	if v.ShortTag() != "!!int" {
		p.add(v.Line, "%s: want an integer, got %s", key, describe(v))
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		if hi == math.MaxInt32 {
			p.add(v.Line, "%s: %s is out of range (want at least %d)", key, v.Value, lo)
		} else {
			p.add(v.Line, "%s: %s is out of range (want %d to %d)", key, v.Value, lo, hi)
		}
		return 0, false
	}
	return int(n), true
}

func (p *parser) boolean(v *yaml.Node, key string) (bool, bool) {
	if !p.scalar(v, key, "true or false") {
		return false, false
	}
	if v.ShortTag() == "!!bool" {
		return strings.EqualFold(v.Value, "true"), true
	}
	// YAML 1.1 spellings, still common in hand-written files.
	switch strings.ToLower(v.Value) {
	case "yes", "on":
		return true, true
	case "no", "off":
		return false, true
	}
	p.add(v.Line, "%s: want true or false, got %s", key, describe(v))
	return false, false
}

func (p *parser) str(v *yaml.Node, key string) (string, bool) {
	if !p.scalar(v, key, "a string") {
		return "", false
	}
	return v.Value, true
}

// nonEmpty reads a string that must hold something, on one line.
func (p *parser) nonEmpty(v *yaml.Node, key string) (string, bool) {
	s, ok := p.str(v, key)
	if !ok {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		p.add(v.Line, "%s: must not be empty", key)
		return "", false
	}
	return s, true
}

func (p *parser) enum(v *yaml.Node, key string, allowed ...string) (string, bool) {
	s, ok := p.str(v, key)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	p.add(v.Line, "%s: invalid value %q (want %s)", key, s, strings.Join(allowed, ", "))
	return "", false
}

// duration reads a Go duration ("90s", "5m", "1h30m"); a bare integer is a
// number of seconds, as in seed 001's examples.
func (p *parser) duration(v *yaml.Node, key string) (time.Duration, bool) {
	if !p.scalar(v, key, "a duration") {
		return 0, false
	}
	var d time.Duration
	switch v.ShortTag() {
	case "!!int":
		n, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64)
		if err != nil || n > int64(math.MaxInt64/time.Second) || n < 0 {
			p.add(v.Line, "%s: %s seconds is out of range", key, v.Value)
			return 0, false
		}
		d = time.Duration(n) * time.Second
	case "!!str":
		var err error
		d, err = time.ParseDuration(v.Value)
		if err != nil {
			p.add(v.Line, "%s: invalid duration %q (want e.g. 90s, 5m, 1h30m)", key, v.Value)
			return 0, false
		}
	default:
		p.add(v.Line, "%s: want a duration such as 90s, 5m or 1h30m, got %s", key, describe(v))
		return 0, false
	}
	if d <= 0 {
		p.add(v.Line, "%s: must be longer than zero", key)
		return 0, false
	}
	return d, true
}

// set helpers: read into *dst when the value is good.

func (p *parser) setInt(dst *int, key string, lo, hi int) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if n, ok := p.integer(v, key, lo, hi); ok {
			*dst = n
		}
	}
}

func (p *parser) setDuration(dst *time.Duration, key string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if d, ok := p.duration(v, key); ok {
			*dst = d
		}
	}
}

func (p *parser) setEnum(dst *string, key string, allowed ...string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if s, ok := p.enum(v, key, allowed...); ok {
			*dst = s
		}
	}
}

func (p *parser) setNonEmpty(dst *string, key string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if s, ok := p.nonEmpty(v, key); ok {
			*dst = s
		}
	}
}
