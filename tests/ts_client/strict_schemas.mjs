// Test-only: compiles every tool schema of a tools/list answer (JSON on stdin) with Ajv in strict
// mode, the validator and the settings strict hosts (Gemini CLI, Qwen Code) use, and prints, per
// tool, what Ajv refused or warned about: {"be-read": [], ...}. Used by tests/test_ts_client.py.
import { readFileSync } from "node:fs";
import Ajv from "ajv";

const tools = JSON.parse(readFileSync(0, "utf8"));
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
process.stdout.write(JSON.stringify(problems));
