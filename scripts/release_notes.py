"""Release notes grouped from Conventional Commits.

    python scripts/release_notes.py TAG [--previous TAG] [--repo-url URL] > notes.md

Takes the commits after the previous tag reachable from TAG (all commits when there is none) and
groups their subjects by type: `feat(cli)!: drop --x` -> "Breaking changes", `fix: …` -> "Bug
fixes", and so on; subjects that follow no convention go under "Other changes". A commit is
breaking when its type ends with `!` or its body has a `BREAKING CHANGE:` footer.

`group_commits` and `render_notes` are pure, so tests call them without git.
"""

import argparse
import re
import subprocess
import sys

SECTIONS = [
    ("breaking", "Breaking changes"),
    ("feat", "Features"),
    ("fix", "Bug fixes"),
    ("perf", "Performance"),
    ("docs", "Documentation"),
    ("refactor", "Refactoring"),
    ("test", "Tests"),
    ("build", "Build and CI"),
    ("other", "Other changes"),
]
TYPE_TO_SECTION = {"ci": "build", "chore": "other", "style": "other", "revert": "other"}
SUBJECT = re.compile(r"^(?P<type>[a-zA-Z]+)(?:\((?P<scope>[^()]*)\))?(?P<bang>!)?:\s*(?P<text>.+)$")


def classify(subject, body=""):
    """-> (section key, scope or None, text). Non-conventional subjects are kept whole."""
    match = SUBJECT.match(subject.strip())
    if not match:
        return "other", None, subject.strip()
    kind = match["type"].lower()
    section = kind if kind in dict(SECTIONS) else TYPE_TO_SECTION.get(kind, "other")
    if match["bang"] or re.search(r"^BREAKING[ -]CHANGE:", body, re.MULTILINE):
        section = "breaking"
    return section, (match["scope"] or None), match["text"].strip()


def group_commits(commits):
    """commits: iterable of (short_hash, subject, body) -> {section: [line, …]} in input order."""
    groups = {}
    for short_hash, subject, body in commits:
        if subject.startswith(("Merge pull request", "Merge branch")):
            continue
        section, scope, text = classify(subject, body)
        line = f"**{scope}:** {text}" if scope else text
        groups.setdefault(section, []).append(f"- {line} ({short_hash})")
    return groups


def render_notes(groups, tag, previous=None, repo_url=None):
    parts = []
    for key, title in SECTIONS:
        if groups.get(key):
            parts.append(f"## {title}\n\n" + "\n".join(groups[key]) + "\n")
    if not parts:
        parts.append("No changes since the previous release.\n")
    if previous and repo_url:
        parts.append(f"**Full changelog:** {repo_url}/compare/{previous}...{tag}\n")
    parts.append(
        "Install: download the archive for your platform and check it against `checksums.txt`, or "
        "run `install.sh` (see docs/install.md).\n"
    )
    return "\n".join(parts)


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def previous_tag(tag):
    try:
        return git("describe", "--tags", "--abbrev=0", "--match", "v*", f"{tag}^").strip() or None
    except subprocess.CalledProcessError:
        return None  # the first release


def commits_between(previous, tag):
    span = f"{previous}..{tag}" if previous else tag
    out = git("log", "--no-merges", "--format=%h%x1f%s%x1f%b%x1e", span)
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) == 3:
            yield fields[0], fields[1], fields[2]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag")
    parser.add_argument("--previous", help="previous tag (default: found with git describe)")
    parser.add_argument("--repo-url", help="https://github.com/OWNER/REPO, for a compare link")
    args = parser.parse_args(argv)
    previous = args.previous or previous_tag(args.tag)
    groups = group_commits(commits_between(previous, args.tag))
    sys.stdout.write(render_notes(groups, args.tag, previous, args.repo_url))
    return 0


if __name__ == "__main__":
    sys.exit(main())
