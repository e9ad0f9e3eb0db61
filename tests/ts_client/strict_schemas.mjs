// Test-only: compiles every tool schema of several tools/list answers (JSON on stdin: {"label":
// [tool, ...], ...}) with Ajv in strict mode, the validator and the settings strict hosts (Gemini CLI,
// Qwen Code) use, and prints, per list and tool, what Ajv refused or warned about:
// {"label": {"be-read": [], ...}, ...}. One node start for all lists. Used by tests/test_ts_client.py.
import { readFileSync } from "node:fs";
import Ajv from "ajv";

function check(tools) {
  // one Ajv per list (making one costs more than compiling a schema); its logger writes to the
  // problems of the tool being compiled
  let found = [];
  const logger = { log() {}, warn: (...a) => found.push(a.join(" ")), error: (...a) => found.push(a.join(" ")) };
  const ajv = new Ajv({ strict: true, allErrors: true, logger });
  const problems = {};
  for (const tool of tools) {
    found = problems[tool.name] = [];
    for (const key of ["inputSchema", "outputSchema"]) {
      try {
        ajv.compile(tool[key]);
      } catch (error) {
        found.push(`${key}: ${error.message}`);
      }
    }
  }
  return problems;
}

const lists = JSON.parse(readFileSync(0, "utf8"));
const answer = {};
for (const [label, tools] of Object.entries(lists)) answer[label] = check(tools);
process.stdout.write(JSON.stringify(answer));
