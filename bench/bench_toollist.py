"""The size of the tools/list answer (issue 12): what every agent session pays in context.

    python bench/bench_toollist.py

Counted as json.dumps(result, separators=(",", ":"), ensure_ascii=False) of the whole `tools/list`
result with default flags in English, and in every naming mode. Reference: the official MCP
filesystem server's 14 tools take about 13,400 characters; ours must stay under that.
"""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE = 13_400


def listed_size(*flags):
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    done = subprocess.run(
        [sys.executable, "-m", "better_edit", "--lang", "en", *flags],
        input="".join(json.dumps(m) + "\n" for m in messages).encode(),
        capture_output=True,
        cwd=REPO,
        check=True,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    result = replies[1]["result"]
    size = len(json.dumps(result, separators=(",", ":"), ensure_ascii=False))
    instructions = len(replies[0]["result"]["instructions"])
    return size, len(result["tools"]), instructions


def main():
    for flags in ((), ("--no-prefix",), ("--underscore-names",), ("--no-prefix", "--underscore-names")):
        size, count, instructions = listed_size(*flags)
        label = " ".join(flags) or "(default)"
        print(
            f"{label:34} {count} tools, tools/list {size:6,} chars = {size / REFERENCE:.2f}x the reference "
            f"({REFERENCE:,}); instructions {instructions:,} chars"
        )


if __name__ == "__main__":
    main()
