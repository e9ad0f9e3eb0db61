"""Views that moved and views whose text was copied (docs/behaviour.md#viewed_code_id), simulated
on this Python's own sources.

    python scripts/view_moves.py MODULE_DIR [CASES] [SEED]

For CASES random views (1 to 25 lines of a real file, some at its edges), two edits of the file
made after the read, each followed by a replace with the view's token:
- attack: a copy of the lines read added up to 50 lines above them, the lines read rewritten where
  they stood, and lines deleted at the end so that the file shrank by exactly the distance to the
  copy (the edit must not go to the copy);
- move: lines added or deleted above the lines read (often right above), sometimes with an edit far
  below (the edit should follow the lines).
Prints how many of each went where. MODULE_DIR holds the better_edit.py to measure (this
checkout's folder, or one with an older version, to compare)."""

import collections
import os
import random
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import better_edit as be

N = int(sys.argv[2]) if len(sys.argv) > 2 else 300
random.seed(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
root = tempfile.mkdtemp()
cache = tempfile.mkdtemp()
ctx = be.Context(root=root, cache_dir=cache, workspace=root, mcp=True)


def call(name, **a):
    return be.call_tool(ctx, be.find_tool(name), a)


src = "/root/.pyenv/versions/3.11.7/lib/python3.11"
files = []
for d, _, fs in os.walk(src):
    for f in fs:
        if f.endswith(".py"):
            files.append(os.path.join(d, f))
files.sort()
out = collections.Counter()
bad = []
path = os.path.join(root, "f.py")
while sum(out.values()) < 2 * N:
    p = random.choice(files)
    try:
        lines = open(p, encoding="utf-8").read().split("\n")[:-1]
    except Exception:
        continue
    if len(lines) < 200:
        continue
    lines += [""] * random.choice([0, 0, 1, 2])  # (some files end with blank lines)
    count = random.randint(1, 25)
    where = random.random()
    if where < 0.15:
        s = len(lines) - count + 1  # the last lines of the file
    elif where < 0.25:
        s = random.randint(2, 5)
    else:
        s = random.randint(60, len(lines) - count - 60)
    e = s + count - 1
    block = lines[s - 1 : e]
    if not any(x.strip() for x in block):
        continue
    open(path, "w").write("\n".join(lines) + "\n")
    tok = call("be-read", file=path, start=s, end=e)["viewed_code_id"]
    if ":u" not in tok:
        continue
    for kind in ("attack", "move"):
        new = list(lines)
        if kind == "attack":
            if s < 3:
                continue
            pp = random.randint(max(1, s - 50), s - 1)  # copy lands at line pp
            c = count
            new = new[: pp - 1] + block + new[pp - 1 :]
            o = s - 1 + c  # original now at index o..o+count-1: rewrite in place (same count)
            for i in range(o, o + count):
                new[i] = new[i] + "  # v2" if new[i].strip() else new[i]
            k = c + (s - pp)  # delete k lines at the end so total changes by pp - s
            if len(lines) - e < k:
                continue  # (the rewritten lines read must survive: else the copy is all that is left)
            new = new[: len(new) - k]
            expect_at = None
        else:
            d = random.choice([-3, -2, -1, 1, 2, 5, 10])
            at = random.choice([random.randint(0, max(0, s - 5)), s - 1, s - 1])
            if d > 0:
                new = new[:at] + [f"x_{i} = {i}" for i in range(d)] + new[at:]
            else:
                at = max(0, at + d)
                new = new[:at] + new[at - d :]
            if random.random() < 0.5:  # an unrelated edit far below
                if e + d + 20 < len(new) - 1:
                    j = random.randint(e + d + 20, len(new) - 1)
                    new[j] = new[j] + "  # later"
            expect_at = s + d
        open(path, "w").write("\n".join(new) + "\n")
        try:
            r = call("be-replace", file=path, start=s, end=e, content="EDITED", viewed_code_id=tok)
            got = r["start"]
            if kind == "attack":
                out[
                    "attack: WRONG PLACE (edit went to the copy)" if got == pp else f"attack: edited {got}"
                ] += 1
                bad.append((p, s, e, pp)) if got == pp else None
            else:
                out["move: relocated right" if got == expect_at else "move: WRONG"] += 1
        except be.ToolError as exc:
            out[f"{kind}: refused {exc.code}"] += 1
for k, v in sorted(out.items()):
    print(f"{v:5d} {k}")
for b in bad[:5]:
    print(b)
