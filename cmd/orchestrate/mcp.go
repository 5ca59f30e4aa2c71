package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
)

var mcpCmd = &command{
	name:    "mcp",
	summary: "serve the queue, the gates and the claims as MCP tools over stdio",
	usage: `Usage: orchestrate mcp

Serves the Model Context Protocol over stdio (newline-delimited JSON-RPC on
stdin and stdout) for an agent client: Claude Code, Codex, Gemini CLI,
opencode, Cursor. The workspace is the one every command finds (--dir,
$ORCHESTRATOR_DIR, or .orchestrator here or in the nearest parent, as
the server starts).

Its tools read (status, issue_show, history_summary) and write (gates,
issue_add, claim_next, claim_renew, claim_release, record_failure,
resolve, decide, approve) through the same code as the commands of the
same names, under the same lock. A tool that names an issue takes the
caller's claim epoch (epoch, or $ORCHESTRATE_CLAIM): its change is
refused once another holds the issue. Bad arguments are tool errors
(isError), never a crash. Cancelling a gates call kills the gates'
process groups, as Ctrl-C does to orchestrate gate. The prompt templates
are its prompts; the queue, the session state and the analytics page its
resources. Logs go to stderr; stdout carries the protocol only.

See docs/mcp.md for each tool, what it may change, and how a mid-turn
gates call spares the Stop hook a second run on an unchanged tree.

Examples:
  claude mcp add orchestrate -- orchestrate mcp
  orchestrate --dir /path/to/repo/.orchestrator mcp

Exit codes: 0 the client closed the connection, 1 error, 2 usage.
`,
	run: runMCP,
}

func runMCP(e *env, args []string) error {
	fs := e.flags("mcp")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	in, ok := e.stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(e.stdin)
	}
	s := newMCPServer(e)
	atRest() // what making the server's tools left behind
	err := s.Run(e.ctx, &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{e.stdout}})
	if err != nil && (e.ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed)) {
		return nil // the client went away, or the command was interrupted
	}
	return err
}

// nopWriteCloser is stdout for the protocol: the server's end does not
// close it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newMCPServer makes the server with every tool, prompt and resource, over
// the workspace of e.
func newMCPServer(e *env) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "orchestrate", Title: "orchestrate", Version: readBuildVersion().Version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Capabilities: &mcp.ServerCapabilities{},
	})
	addReadTools(s, e)
	addWriteTools(s, e)
	addPromptsAndResources(s, e)
	return s
}

// mcpInstructions tell a client's model what the server is for.
const mcpInstructions = `orchestrate keeps the fix-and-retry loop honest: quality gates check the work, failures are issues in .orchestrator/issue_queue.md with retry limits. Call gates to check your work before you stop (record: false only reports); fix what its structured results say. Use claim, record_failure and resolve when you share the queue with other agents, and pass your claim's epoch with every change to an issue you hold.`

// mcpReadOnly and mcpWrites are the annotations of the tools that read and of
// those that write.
var (
	mcpReadOnly = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	mcpWrites   = &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}
)

// addTool adds a tool whose handler works with a copy of e for the call:
// its context the call's (cancelled when the client cancels), no stdin,
// no stdout (the protocol's), and the claim fence of the server's
// environment. An error, or a panic, is the call's tool error (isError),
// its message clean text; refresh starts the analytics page's refresh
// after a call that succeeded, as the command of the same name does.
func addTool[In, Out any](s *mcp.Server, e *env, t *mcp.Tool, refresh bool, h func(ce *env, in In) (Out, error)) {
	mcp.AddTool(s, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (_ *mcp.CallToolResult, out Out, err error) {
		err = e.serve(ctx, t.Name, func(ce *env) (err error) {
			out, err = h(ce, in)
			if err == nil && refresh {
				refreshAnalytics(ce.ws())
			}
			return err
		})
		return nil, out, err
	})
}

// serve runs a tool call's work f with a copy of e for the call. A panic
// is an error, and an error's message is clean text.
func (e *env) serve(ctx context.Context, name string, f func(ce *env) error) (err error) {
	ce := *e
	ce.ctx, ce.stdin, ce.stdout, ce.json = ctx, strings.NewReader(""), io.Discard, true
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(e.stderr, "orchestrate: mcp: tool %s: panic: %v\n", name, p)
			err = fmt.Errorf("internal error in %s: %v", name, p)
		}
		if err != nil {
			err = errors.New(textclean.Line(err.Error()))
		}
	}()
	defer atRest()
	return f(&ce)
}

// addJSONTool adds a tool that reads and whose handler writes its result's
// JSON itself, as the command writes it for --json: a large result is not
// decoded, encoded again and checked against its schema (Out's, which the
// client sees) as addTool's are. It takes no arguments.
func addJSONTool[Out any](s *mcp.Server, e *env, t *mcp.Tool, h func(ce *env) ([]byte, error)) {
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(err)
	}
	t.InputSchema, t.OutputSchema = json.RawMessage(`{"type":"object","additionalProperties":false}`), out
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var data []byte
		err := e.serve(ctx, t.Name, func(ce *env) (err error) {
			var args map[string]any
			if len(req.Params.Arguments) > 0 && json.Unmarshal(req.Params.Arguments, &args) != nil {
				return fmt.Errorf("validating \"arguments\": not an object")
			}
			if len(args) > 0 {
				return fmt.Errorf("validating \"arguments\": %s takes no arguments", t.Name)
			}
			data, err = h(ce)
			return err
		})
		res := &mcp.CallToolResult{}
		if err != nil {
			res.SetError(err)
			return res, nil
		}
		res.StructuredContent, res.Content = json.RawMessage(data), []mcp.Content{&mcp.TextContent{Text: string(data)}}
		return res, nil
	})
}

// restAfter is how long the server waits with no call before it gives
// its free memory back to the system.
const restAfter = 500 * time.Millisecond

// rest is the timer of atRest.
var rest struct {
	sync.Mutex
	timer *time.Timer
}

// atRest gives the heap's free memory back to the system once the server
// has had no call for restAfter: a server at rest between an agent's
// calls holds little, whatever its last call read.
func atRest() {
	rest.Lock()
	defer rest.Unlock()
	if rest.timer == nil {
		rest.timer = time.AfterFunc(restAfter, debug.FreeOSMemory)
		return
	}
	rest.timer.Reset(restAfter)
}

// fence makes the call's changes to issue id carry the caller's claim at
// epoch, when it gives one (0: the server's own, $ORCHESTRATE_CLAIM).
func (e *env) fence(id string, epoch int) error {
	if epoch < 0 {
		return fmt.Errorf("epoch %d: want the epoch of your claim of %s (a number from 1), or none", epoch, id)
	}
	if epoch > 0 {
		e.fenceID, e.fenceEpoch = id, epoch
	}
	return nil
}

// checkName refuses a name (an issue's ID, a gate's, a holder's) that is
// empty, long, or holds a control character or a space: such a name is
// no name the queue holds, and does not reach it.
func checkName(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty", what)
	case len(s) > 200:
		return fmt.Errorf("%s is %d bytes long: want a name of at most 200", what, len(s))
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) || r == unicode.ReplacementChar }):
		return fmt.Errorf("%s %q has a space or a control character", what, s)
	}
	return nil
}

// checkText refuses text (a summary, a comment) with a control character
// but tab and newline, or invalid UTF-8: the queue holds clean text.
func checkText(what, s string) error {
	if p, at, bad := textclean.Problem(s); bad {
		return fmt.Errorf("%s: %s at byte %d: the queue holds text without control characters", what, p, at)
	}
	return nil
}
