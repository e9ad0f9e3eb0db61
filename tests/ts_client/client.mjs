// The official TypeScript MCP SDK as a client of better-edit-tools (used by tests/test_ts_client.py).
//
//   node client.mjs COMMAND [ARG...] < calls.json
//
// Starts COMMAND ARG... as an MCP server over stdio (in this process's cwd and environment),
// lists the tools (so the SDK caches and compiles their outputSchemas: it validates every later
// structuredContent against them), then runs each call of the JSON array on stdin,
// [{"name": ..., "arguments": {...}}, ...], with client.callTool.
// Output, one JSON line each: first {"tools": {NAME: HAS_OUTPUT_SCHEMA}}, then per call either
// {"isError": ..., "structuredContent": ..., "text": ...} or, when the SDK threw,
// {"thrown": {"code": ..., "message": ...}}.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node client.mjs COMMAND [ARG...] < calls.json");
  process.exit(2);
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const calls = JSON.parse(input);

const print = (value) => process.stdout.write(JSON.stringify(value) + "\n");

const transport = new StdioClientTransport({
  command,
  args,
  env: process.env,
  cwd: process.cwd(),
  stderr: "inherit",
});
const client = new Client({ name: "better-edit-tools-ts-test", version: "0.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
print({ tools: Object.fromEntries(tools.map((tool) => [tool.name, Boolean(tool.outputSchema)])) });

for (const { name, arguments: callArguments } of calls) {
  try {
    const result = await client.callTool({ name, arguments: callArguments ?? {} });
    print({
      isError: result.isError ?? false,
      structuredContent: result.structuredContent ?? null,
      text: result.content
        .filter((item) => item.type === "text")
        .map((item) => item.text)
        .join("\n"),
    });
  } catch (error) {
    print({ thrown: { code: error?.code ?? null, message: String(error?.message ?? error) } });
  }
}

await client.close();
