package agentcli

// Opencode is opencode's profile. It has no hook that runs when it stops:
// orchestrate run drives it.
const Opencode = "opencode"

// UsageOpencodeJSON is opencode run --format json: events with sessionID,
// step tokens and cost.
const UsageOpencodeJSON = "opencode-json"

var opencode = Profile{
	Name:        Opencode,
	Command:     `opencode run --format json "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
	Resume:      `opencode run --format json --session "$ORCHESTRATE_SESSION_ID" "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
	Review:      `OPENCODE_CONFIG_CONTENT='{"agent":{"plan":{"permission":{"edit":"deny","bash":"deny","task":"deny","webfetch":"deny"}}}}' opencode run --agent plan "$ORCHESTRATE_REVIEW_PROMPT"`,
	Session:     SessionReported,
	Usage:       UsageOpencodeJSON,
	Permissions: "does what the permission section of opencode.json allows (its build agent edits and runs commands by default; narrow it there)",
	Program:     "opencode",
	Install:     "npm install -g opencode-ai",
	failures:    opencodeStartFailures,
}

var opencodeStartFailures = []StartFailure{
	// opencode retries on its own for about a minute and a half, then
	// says it once ({"type":"error",…,"message":"Cannot connect to
	// API: Unable to connect. …","isRetryable":true}) and ends, its
	// exit code saying nothing: the line itself stops the launch.
	{Match: `cannot connect to api`, Stall: 1, Until: `"type":"step_finish"`,
		What: "opencode could not reach its model API (it was stopped)",
		Fix:  "check the network and the provider's baseURL in opencode's config, then run again"},
}

// parseOpencode reads opencode run --format json's events: each carries the
// sessionID; a step_finish part has the step's tokens and cost; text parts
// the answer.
func parseOpencode(out []byte) Report {
	var r Report
	for _, o := range jsonObjects(out) {
		part := obj(o, "part")
		if s := str(o, "sessionID"); s != "" {
			r.Usage.Session = s
		} else if s := str(part, "sessionID"); s != "" {
			r.Usage.Session = s
		}
		switch str(o, "type") {
		case "step_finish":
			t := obj(part, "tokens")
			r.Usage.Turns++
			r.Usage.InputTokens += int64(num(t, "input"))
			r.Usage.OutputTokens += int64(num(t, "output"))
			r.Usage.CacheReadTokens += int64(num(obj(t, "cache"), "read"))
			r.Usage.CostUSD += num(part, "cost")
		case "text":
			if s := str(part, "text"); s != "" {
				r.Result = s
			}
		}
	}
	return r
}
