"""Start-up of the CLI as users run it: the pip-installed console script (issue 14, item 1).

    python bench/bench_startup.py [--runs 41] [--venv bench/_work/venv] [--json]

Makes (once) a clean virtual environment with `python -m venv` and `pip install` of this checkout
(not editable: an editable install adds an import hook to every start), then measures, each as the
median and the minimum of RUNS timed runs after 3 warm-up runs, in one session:
- the floor: `python -S -E -c pass` of the same interpreter;
- `python -c pass` of the venv (what site and the venv's .pth files add);
- the console script `better-edit-tools read -f FILE` of a 20-line file;
- `python -m better_edit read -f FILE` with cached bytecode (this interpreter's site: slower when
  it loads editable installs and .pth files);
measured in turn (one run of each, RUNS times over, so that all see the same machine load) and in
blocks (each RUNS times in a row, as a script's loop calls one command), and prints each as a ratio
to the floor of the same mode (target for the console script: <= 3, with plain stdlib use: docs/decisions.md). Also prints where
the console script's time goes (`-X importtime`, the minimum of 15 runs per module). Use the real
interpreter: python3 -c 'import sys; print(sys.executable)'.
"""

import argparse
import importlib.util
import json
import os
import py_compile
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "better_edit.py"
TARGET = 3.0


def timed_in_blocks(commands, cwd, runs):
    """{name: (median ms, min ms)} of `commands`, each run RUNS times in a row after 3 warm-ups (a
    script calling one command in a loop)."""
    times = {}
    for name, (command, env) in commands.items():
        for _ in range(3):
            subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
        runs_ = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
            runs_.append(time.perf_counter() - start)
        times[name] = (statistics.median(runs_) * 1000, min(runs_) * 1000)
    return times


def timed_together(commands, cwd, runs):
    """{name: (median ms, min ms)} of `commands` ({name: (argv, env)}), run in turn: one run of each,
    RUNS times over, after 3 warm-up rounds, so that all of them see the same machine load."""
    times = {name: [] for name in commands}
    for round_ in range(runs + 3):
        for name, (command, env) in commands.items():
            start = time.perf_counter()
            subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
            if round_ >= 3:
                times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(t) * 1000, min(t) * 1000) for name, t in times.items()}


def make_venv(venv):
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", str(REPO)], check=True
    )
    subprocess.run([str(python), "-m", "pip", "install", "-q", "platformdirs"], check=True)
    return python, venv / "bin" / "better-edit-tools"


def import_breakdown(script, env, cwd, target):
    best = {}
    for _ in range(15):
        proc = subprocess.run(
            [str(script.parent / "python"), "-X", "importtime", str(script), "read", "-f", target],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
        )
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, _cumulative, name = (part.strip() for part in line[len("import time:") :].split("|"))
            best[name] = min(best.get(name, 10**9), int(own))
    return sorted(best.items(), key=lambda item: -item[1])


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--venv", type=Path, default=REPO / "bench" / "_work" / "venv")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    python, script = make_venv(options.venv)
    with tempfile.TemporaryDirectory() as work:
        target = Path(work) / "small.py"
        target.write_text("".join(f"line_{n} = {n}\n" for n in range(20)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
        env["BETTER_EDIT_CACHE_DIR"] = str(Path(work) / "cache")
        module_env = dict(env, PYTHONPATH=str(REPO))
        # -m loads __pycache__: write it, PYTHONDONTWRITEBYTECODE may be set
        py_compile.compile(str(MODULE), cfile=importlib.util.cache_from_source(str(MODULE)), doraise=True)
        commands = {
            "floor: python -S -E -c pass": ([sys.executable, "-S", "-E", "-c", "pass"], env),
            "venv python -c pass": ([str(python), "-c", "pass"], env),
            "console script read": ([str(script), "read", "-f", str(target)], env),
            "python -m better_edit read": (
                [sys.executable, "-m", "better_edit", "read", "-f", str(target)],
                module_env,
            ),
        }
        modes = {
            "in turn": timed_together(commands, work, options.runs),
            "in blocks": timed_in_blocks(commands, work, options.runs),
        }
        result = {}
        for mode, rows in modes.items():
            floor = rows["floor: python -S -E -c pass"][0]
            result[mode] = {
                name: {"median_ms": m, "min_ms": n, "ratio": m / floor} for name, (m, n) in rows.items()
            }
        breakdown = import_breakdown(script, env, work, str(target))
    if options.json:
        print(json.dumps({"interpreter": sys.executable, "figures": result, "imports_us": breakdown[:15]}))
        return
    print(f"interpreter {sys.executable}; {options.runs} runs each, median (min)")
    for mode, rows in result.items():
        print(f"{mode}:")
        for name, row in rows.items():
            print(
                f"  {name:32s} {row['median_ms']:7.1f} ms ({row['min_ms']:5.1f})  = {row['ratio']:4.2f}x floor"
            )
        ratio = rows["console script read"]["ratio"]
        print(f"  console script read / floor: {ratio:.2f} (target <= {TARGET})")
    print("largest imports of the console script (self time, us, min of 15):")
    for name, micros in breakdown[:12]:
        print(f"  {micros:6d}  {name}")


if __name__ == "__main__":
    main()
