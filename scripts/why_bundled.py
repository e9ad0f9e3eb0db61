"""Why is a module in the executable? Answers from PyInstaller's cross-reference file.

    python scripts/why_bundled.py [build/pyinstaller/build/xref-build.html] [MODULE …]

With no MODULE: every bundled top-level module, with the shortest import chain from the program
that pulls it in. With MODULEs: the chain for each. build.spec's EXCLUDES were chosen this way:
a module belongs there when its only chains run through code paths the program never takes
(e.g. `tempfile -> shutil -> bz2`). See docs/install.md ("Building the executable").
"""

import html
import re
import sys
from collections import deque
from pathlib import Path

DEFAULT_XREF = Path("build") / "pyinstaller" / "build" / "xref-build.html"
NODE = re.compile(r'<div class="node">\s*<a name="([^"]+)"></a>(.*?)\n</div>', re.S)
IMPORTS = re.compile(r"imports:(.*?)</div>", re.S)
LINK = re.compile(r'<a href="#([^"]+)">')
KIND = re.compile(r'<span class="moduletype">([^<]+)</span>')


def parse_xref(text):
    """-> ({module: [imported modules]}, {module: kind}, [roots])."""
    graph, kinds, roots = {}, {}, []
    for name, body in NODE.findall(text):
        name = html.unescape(name)
        match = IMPORTS.search(body)
        graph[name] = [html.unescape(m) for m in LINK.findall(match.group(1))] if match else []
        kind = KIND.search(body)
        kinds[name] = kind.group(1).strip() if kind else ""
        if kinds[name] == "Script":
            roots.append(name)
    return graph, kinds, roots


def shortest_chains(graph, roots):
    """Breadth-first from the scripts: {module: [root, …, module]}."""
    chains = {root: [root] for root in roots}
    queue = deque(roots)
    while queue:
        current = queue.popleft()
        for child in graph.get(current, []):
            if child not in chains:
                chains[child] = [*chains[current], child]
                queue.append(child)
    return chains


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    xref = Path(args.pop(0)) if args and args[0].endswith(".html") else DEFAULT_XREF
    graph, kinds, roots = parse_xref(xref.read_text(encoding="utf-8"))
    chains = shortest_chains(graph, roots)
    wanted = args or sorted({name.split(".")[0] for name in chains if kinds.get(name) != "Script"})
    for name in wanted:
        chain = chains.get(name)
        if chain is None:
            print(f"{name}: not bundled")
        elif kinds.get(name) not in ("MissingModule", "ExcludedModule"):
            print(f"{name} [{kinds.get(name)}]: {' -> '.join(chain)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
