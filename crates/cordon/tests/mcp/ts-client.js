// A real MCP client (the TypeScript SDK, the one Claude Code uses) driven by a JSON
// script, for cordon's tests. Usage: NODE_PATH=.../node_modules node ts-client.js SPEC.
// SPEC: {"command": [argv...], "env": {...}, "steps": [...]}, each step one of
// {"call": NAME, "args": {...}}, {"list": "tools"|"resources"|"prompts"}, {"read": URI},
// {"prompt": NAME}, {"complete": true}. Prints {"steps", "raw" (every message the
// client received), "logs", "progress", "sampled", "elicited"}.
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const types = require("@modelcontextprotocol/sdk/types.js");

const spec = JSON.parse(process.argv[2]);
const out = { steps: [], raw: [], logs: [], progress: [], sampled: [], elicited: [] };

class Tap extends StdioClientTransport {
  async start() {
    const inner = this.onmessage;
    this.onmessage = (m, extra) => { out.raw.push(m); if (inner) inner(m, extra); };
    return super.start();
  }
}

async function main() {
  const client = new Client({ name: "cordon-test", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } });
  client.setRequestHandler(types.CreateMessageRequestSchema, async (r) => {
    out.sampled.push(r.params);
    return { role: "assistant", content: { type: "text", text: "sampled" }, model: "m" };
  });
  client.setRequestHandler(types.ElicitRequestSchema, async (r) => {
    out.elicited.push(r.params);
    return { action: "decline" };
  });
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => { out.logs.push(n.params); });
  const [command, ...args] = spec.command;
  await client.connect(new Tap({ command, args, env: spec.env, stderr: "inherit" }));
  const opts = { timeout: 20000, onprogress: (p) => out.progress.push(p) };
  for (const s of spec.steps) {
    try {
      if (s.call) out.steps.push(await client.callTool({ name: s.call, arguments: s.args || {} }, undefined, opts));
      else if (s.list === "tools") out.steps.push(await client.listTools());
      else if (s.list === "resources") out.steps.push(await client.listResources());
      else if (s.list === "prompts") out.steps.push(await client.listPrompts());
      else if (s.read) out.steps.push(await client.readResource({ uri: s.read }));
      else if (s.prompt) out.steps.push(await client.getPrompt({ name: s.prompt, arguments: { a: "x" } }));
      else if (s.complete) out.steps.push(await client.complete({ ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value: "x" } }));
    } catch (e) {
      out.steps.push({ error: String(e && e.message) });
    }
  }
  out.instructions = client.getInstructions ? client.getInstructions() : null;
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
