// An MCP client on the official TypeScript SDK: it starts orchestrate mcp
// in a scratch repository (argv[2], the orchestrate binary; argv[3], the
// repository), lists the tools, calls each one, and prints one JSON line
// per call: {"tool", "isError", "structured", "text"}. The Go test reads
// them and checks the repository's files.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, repo] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: bin, args: ["mcp"], cwd: repo, stderr: "inherit",
  env: { ...process.env, ORCHESTRATE_NO_BACKGROUND: "1" } });
const client = new Client({ name: "ts-client", version: "1.0.0" });
await client.connect(transport);

const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const { tools } = await client.listTools();
out({ tool: "tools/list", structured: tools.map((t) => ({ name: t.name, readOnly: t.annotations?.readOnlyHint === true, output: !!t.outputSchema })) });

async function call(name, args) {
  const r = await client.callTool({ name, arguments: args });
  const text = (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
  out({ tool: name, args, isError: r.isError === true, structured: r.structuredContent ?? null, text });
  return r.structuredContent;
}

// Each tool, in an order that leaves its mark in the files.
await call("status", {});
await call("gates", {});
await call("gates", { record: true });
const added = await call("issue_add", { summary: "Parser drops tabs", priority: "high", details: "parse_test.go:9: tab lost\n", exit_code: 1 });
await call("issue_show", { id: added.id });
const c = await call("claim", { as: "ts-agent", id: added.id });
await call("claim_renew", { id: c.id, epoch: c.epoch, as: "ts-agent", lease: "15m" });
await call("record_failure", { id: c.id, output: "parse_test.go:9: tab lost\n", exit_code: 1, epoch: c.epoch });
await call("resolve", { id: c.id, epoch: c.epoch });
await call("claim_release", { id: c.id, epoch: c.epoch });
const other = await call("issue_add", { summary: "Flaky retry" });
await call("decide", { action: "skip", id: other.id });
await call("decide", { action: "abort" });
const approval = await call("issue_add", { summary: "Sign off the release", type: "approval", fields: { Gate: "signoff" } });
await call("approve", { id: approval.id, comment: "Looks right." });
await call("history_summary", {});

// Bad arguments: tool errors, each.
await call("issue_show", { id: 42 });
await call("issue_show", { id: "ISSUE-19990101-001" });
await call("issue_add", { summary: "bell \u0007" });
await call("claim_renew", { id: c.id });
await call("decide", { action: "later", id: c.id });
await call("gates", { names: ["nosuch"] });

await client.close();
