// Test-only: compiles every tool schema of several tools/list answers (JSON on stdin: {"label":
// [tool, ...], ...}) with Ajv in strict mode, the validator and the settings strict hosts (Gemini CLI,
// Qwen Code) use, and prints, per list and tool, what Ajv refused or warned about:
// {"label": {"be-read": [], ...}, ...}. One node start for all lists. Used by tests/test_ts_client.py.
import { readFileSync } from "node:fs";
import Ajv from "ajv";

function check(tools) {
  const problems = {};
  for (const tool of tools) {
    const found = [];
    const logger = { log() {}, warn: (...a) => found.push(a.join(" ")), error: (...a) => found.push(a.join(" ")) };
    for (const key of ["inputSchema", "outputSchema"]) {
      const ajv = new Ajv({ strict: true, allErrors: true, logger });
      try {
        ajv.compile(tool[key]);
      } catch (error) {
        found.push(`${key}: ${error.message}`);
      }
    }
    problems[tool.name] = found;
  }
  return problems;
}

const lists = JSON.parse(readFileSync(0, "utf8"));
const answer = {};
for (const [label, tools] of Object.entries(lists)) answer[label] = check(tools);
process.stdout.write(JSON.stringify(answer));
