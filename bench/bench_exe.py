"""Size and start-up of the one-file executable against PyInstaller's one-file floor (issue 1).

    python bench/bench_exe.py [--exe dist/better-edit-tools] [--trivial PATH] [--runs 31]
                              [--also 'COMMAND …'] [--check] [--json]

A one-file program unpacks itself into a temporary folder and starts a second process at every
start, whatever it does. The floor is measured with a trivial program (`import sys; sys.exit(0)`)
built by the same PyInstaller with the same options as build.spec (one file, console, stripped
except on Windows, no UPX, build.spec's bytecode optimize level) but PyInstaller's default module
set (none of our excludes, nothing unpacked on import). It is built once into build/bench-trivial/KEY/ (KEY: PyInstaller and Python versions,
platform, spec text) with the PyInstaller of build/venv (scripts/build.sh), else of this Python;
--trivial PATH uses a program built elsewhere.

Measured, each as the median (and minimum) of RUNS timed runs after 3 warm-up runs, our runs
alternating with the trivial program's so that both see the same machine load:
- `--version`: spawn to exit;
- `read` of a 20-line file (CLI, text output): spawn to exit;
- MCP: spawn, send `initialize`, until its reply line (the trivial program: until it exits);
for the executable, the trivial program (given the same arguments and input, which it ignores),
and, for comparison, `python better_edit.py` and each --also command (e.g. a pip-installed
`better-edit-tools`).
Targets: read <= 0.75x the trivial program (issue 1), executable <= 8 MiB; on Linux x86-64 also
issue 5's absolute ones (--version <= 100 ms, read <= 130 ms, initialize <= 150 ms). --check exits 1
when one is missed. Nothing here touches the real cache: the runs use a private
BETTER_EDIT_CACHE_DIR.
"""

import argparse
import hashlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXE_SUFFIX = ".exe" if os.name == "nt" else ""
MEASURES = ("version", "read", "initialize")
TARGET_RATIO = {"read": 0.75}
TARGETS_MS = {"version": 100.0, "read": 130.0, "initialize": 150.0}
TARGET_SIZE = 8 * 1024 * 1024
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}

TRIVIAL_SCRIPT = "import sys; sys.exit(0)\n"
# build.spec's build options, without its module choices (excludes, hidden imports, unpacking on
# import, version file). {optimize} is build.spec's.
TRIVIAL_SPEC = """\
import sys
a = Analysis(["trivial.py"], optimize={optimize})
pyz = PYZ(a.pure)
exe = EXE(pyz, a.scripts, a.binaries, a.datas, [], name="trivial", console=True, debug=False,
          strip=sys.platform != "win32", upx=False, runtime_tmpdir=None)
"""


# ---- the trivial program ---------------------------------------------------------------------------


def build_python():
    """The interpreter whose PyInstaller builds the trivial program: scripts/build.sh's, else ours."""
    for candidate in (
        REPO / "build" / "venv" / "bin" / "python",
        REPO / "build" / "venv" / "Scripts" / "python.exe",
    ):
        if candidate.is_file():
            return str(candidate)
    return sys.executable


def pyinstaller_version(python):
    result = subprocess.run(
        [python, "-c", "import sys, PyInstaller; print(PyInstaller.__version__, sys.version.split()[0])"],
        capture_output=True, text=True,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"bench_exe: no PyInstaller in {python} (bash scripts/build.sh installs it)")
    return result.stdout.split()  # [PyInstaller version, Python version]


def trivial_spec():
    match = re.search(r"^\s*optimize=(\d)", (REPO / "build.spec").read_text(encoding="utf-8"), re.M)
    return TRIVIAL_SPEC.format(optimize=match.group(1) if match else 0)


def trivial_program(python):
    """Path of the trivial one-file program, built now unless an identical build is cached."""
    pyi_version, py_version = pyinstaller_version(python)
    spec = trivial_spec()
    key_text = "\0".join([pyi_version, py_version, sys.platform, platform.machine(), spec])
    key = f"pyi{pyi_version}-py{py_version}-" + hashlib.sha256(key_text.encode()).hexdigest()[:10]
    home = REPO / "build" / "bench-trivial" / key
    exe = home / "dist" / ("trivial" + EXE_SUFFIX)
    if exe.is_file():
        return exe, pyi_version
    home.mkdir(parents=True, exist_ok=True)
    (home / "trivial.py").write_text(TRIVIAL_SCRIPT)
    (home / "trivial.spec").write_text(spec)
    print(
        f"bench_exe: building the trivial program with PyInstaller {pyi_version} into {home}", file=sys.stderr
    )
    result = subprocess.run(
        [python, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
         "--distpath", str(home / "dist"), "--workpath", str(home / "work"), "trivial.spec"],
        cwd=str(home), capture_output=True, text=True,
    )  # fmt: skip
    if result.returncode != 0 or not exe.is_file():
        raise SystemExit(f"bench_exe: building the trivial program failed:\n{result.stdout}\n{result.stderr}")
    return exe, pyi_version


# ---- timing ----------------------------------------------------------------------------------------


def time_exit(command, env, cwd):
    start = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, check=True,
    )  # fmt: skip
    return time.perf_counter() - start


def time_initialize(command, env, cwd, reply=True):
    """Spawn, send initialize, read one line: the reply, or end of output (reply=False)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
    except BrokenPipeError:  # the trivial program may be gone already
        pass
    line = process.stdout.readline()
    elapsed = time.perf_counter() - start
    try:
        process.stdin.close()
    except BrokenPipeError:
        pass
    process.wait(timeout=30)
    process.stdout.close()
    if reply and b'"protocolVersion"' not in line:
        raise RuntimeError(f"no initialize reply from {command}: {line!r}")
    return elapsed


def measures(prefix, env, work, small, reply=True):
    """{measure: zero-argument function timing one run of it, in seconds}."""
    return {
        "version": lambda: time_exit([*prefix, "--version"], env, work),
        "read": lambda: time_exit([*prefix, "read", "--file", str(small)], env, work),
        "initialize": lambda: time_initialize(prefix, env, work, reply),
    }


def run_interleaved(programs, runs, warmup=3):
    """programs: {label: {measure: fn}} -> {label: {measure: (median ms, min ms)}}.

    For each measure the programs take turns run by run, so a change of machine load hits all."""
    samples = {label: {m: [] for m in MEASURES} for label in programs}
    for measure in MEASURES:
        for n in range(warmup + runs):
            for label, fns in programs.items():
                elapsed = fns[measure]()
                if n >= warmup:
                    samples[label][measure].append(elapsed * 1000)
    return {
        label: {m: (statistics.median(s), min(s)) for m, s in by_measure.items()}
        for label, by_measure in samples.items()
    }


# ---- main ------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exe", default=str(REPO / "dist" / ("better-edit-tools" + EXE_SUFFIX)))
    parser.add_argument("--trivial", help="a trivial one-file program built elsewhere (default: build it)")
    parser.add_argument("--runs", type=int, default=31)
    parser.add_argument(
        "--also", action="append", default=[], metavar="COMMAND",
        help="another way to run the program to time beside it, e.g. 'venv/bin/better-edit-tools'",
    )  # fmt: skip
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    exe = Path(args.exe)
    if not exe.is_file():
        parser.error(f"{exe} does not exist: build it first (bash scripts/build.sh)")
    if args.trivial:
        trivial, pyi_version = Path(args.trivial), "?"
        if not trivial.is_file():
            parser.error(f"{trivial} does not exist")
    else:
        trivial, pyi_version = trivial_program(build_python())

    with tempfile.TemporaryDirectory(prefix="be-bench-") as tmp:
        work = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("BETTER_EDIT_")}
        env.update(BETTER_EDIT_CACHE_DIR=str(work / "cache"), BETTER_EDIT_WORKSPACE=str(work), LANG="C.UTF-8")
        small = work / "small.py"
        small.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 21)))
        programs = {
            "executable": measures([str(exe.resolve())], env, work, small),
            "trivial": measures([str(trivial.resolve())], env, work, small, reply=False),
            "module": measures([sys.executable, str(REPO / "better_edit.py")], env, work, small),
        }
        for command in args.also:
            programs[command] = measures(shlex.split(command), env, work, small)
        results = run_interleaved(programs, args.runs)

    size, trivial_size = exe.stat().st_size, trivial.stat().st_size
    ratios = {m: results["executable"][m][0] / results["trivial"][m][0] for m in MEASURES}
    absolute = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")
    missed = [f"{m} ratio" for m, limit in TARGET_RATIO.items() if ratios[m] > limit]
    missed += ["size"] if size > TARGET_SIZE else []
    if absolute:
        missed += [f"{m} ms" for m, limit in TARGETS_MS.items() if results["executable"][m][0] > limit]

    if args.json:
        report = {
            "size": size, "trivial_size": trivial_size, "pyinstaller": pyi_version, "runs": args.runs,
            "ratios": ratios, "missed": missed, **results,
        }  # fmt: skip
        print(json.dumps(report, indent=2))
    else:
        print(f"executable: {exe} ({size / 1e6:.2f} MB, {size / 2**20:.2f} MiB; target <= 8 MiB)")
        print(f"trivial:    {trivial} ({trivial_size / 1e6:.2f} MB; PyInstaller {pyi_version})")
        print(
            f"runs: {args.runs} per measure, medians (min) in ms; module = {Path(sys.executable).name} better_edit.py\n"
        )
        others = [label for label in results if label not in ("executable", "trivial")]
        print("| measure | executable | trivial | exe/trivial | target | " + " | ".join(others) + " |")
        print("|---|---|---|---|---|" + "---|" * len(others))
        for m in MEASURES:
            cells = [f"{results[label][m][0]:.1f} ({results[label][m][1]:.1f})" for label in others]
            target = f"<= {TARGET_RATIO[m]:.2f}" if m in TARGET_RATIO else ""
            print(
                f"| {m} | {results['executable'][m][0]:.1f} ({results['executable'][m][1]:.1f}) "
                f"| {results['trivial'][m][0]:.1f} ({results['trivial'][m][1]:.1f}) | {ratios[m]:.2f} | {target} | "
                + " | ".join(cells)
                + " |"
            )
        if absolute:
            print(
                "\nabsolute targets (Linux x86-64): "
                + ", ".join(f"{m} <= {v:.0f} ms" for m, v in TARGETS_MS.items())
            )
        print("\nall targets met" if not missed else f"\ntargets missed: {', '.join(missed)}")
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
