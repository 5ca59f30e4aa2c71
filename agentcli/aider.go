package agentcli

import (
	"regexp"
	"strconv"
	"strings"
)

// Aider is aider's profile. It has no hook that runs when it stops, nor a
// session to resume: orchestrate run drives it, fresh every loop.
const Aider = "aider"

// UsageAiderText is aider's report after each message: "Tokens: 12k sent,
// 133 received. Cost: $0.04 message, $0.10 session."
const UsageAiderText = "aider-text"

var aider = Profile{
	Name:        Aider,
	Command:     `aider --yes-always --no-auto-commits --no-pretty --message-file "$ORCHESTRATE_PROMPT_FILE"`,
	Review:      `aider --chat-mode ask --no-auto-commits --no-pretty --yes-always --message "$ORCHESTRATE_REVIEW_PROMPT"`,
	Usage:       UsageAiderText,
	Permissions: "edits the files it adds to the chat and answers yes to its own questions (--yes-always), commits nothing (--no-auto-commits); no pinned session to resume, so every loop starts fresh",
	Program:     "aider",
	Install:     "python3 -m pip install aider-install && aider-install",
}

// aiderTokens is aider's report after each message: "Tokens: 12k sent, 133
// received. Cost: $0.04 message, $0.10 session." (with cache counts between
// when there are some).
var aiderTokens = regexp.MustCompile(`Tokens: ([0-9.]+k?) sent, (?:[0-9.]+k? cache write, )?(?:([0-9.]+k?) cache hit, )?([0-9.]+k?) received\.(?: Cost: \$([0-9.]+) message, \$([0-9.]+) session\.)?`)

func parseAider(out []byte) Report {
	var r Report
	for _, m := range aiderTokens.FindAllSubmatch(out, -1) {
		r.Usage.Turns++
		r.Usage.InputTokens += aiderCount(string(m[1]))
		r.Usage.CacheReadTokens += aiderCount(string(m[2]))
		r.Usage.OutputTokens += aiderCount(string(m[3]))
		if len(m[5]) > 0 {
			// The session's cost so far: the last one says it all.
			r.Usage.CostUSD, _ = strconv.ParseFloat(string(m[5]), 64)
		}
	}
	return r
}

// aiderCount reads "12k", "1.5k" or "133".
func aiderCount(s string) int64 {
	if s == "" {
		return 0
	}
	mult := 1.0
	if k, ok := strings.CutSuffix(s, "k"); ok {
		s, mult = k, 1000
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(f*mult + 0.5)
}
