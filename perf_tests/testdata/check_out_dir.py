#!/usr/bin/python3
"""Checks a perf program's --out DIR: a DIR that does not exist yet is created, parents
included, and the program's files land in it; a DIR that cannot be created (below a regular
file) stops the program at once, with a non-zero exit and a message naming --out, before any
measurement. With --revision-of SOURCE_DIR, the git_revision of the program's JSON names
SOURCE_DIR's HEAD (the revision it was built from, if it was built since the last commit).

  check_out_dir.py [--revision-of SOURCE_DIR] PROGRAM [ARGUMENT ...]
  (ARGUMENTs make a short run of PROGRAM)
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def head_revision(source_dir):
    """SOURCE_DIR's short HEAD revision, or "unknown" as the build writes it without git."""
    try:
        r = subprocess.run(["git", "-C", source_dir, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True)
    except OSError:
        return "unknown"
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "unknown"


def revision_problems(out_dir, source_dir):
    want = head_revision(source_dir)
    found = []
    for path in sorted(glob.glob(os.path.join(out_dir, "*.json"))):
        with open(path) as f:
            data = json.load(f)
        if "git_revision" in data:
            found.append((os.path.basename(path), data["git_revision"]))
    if not found:
        return ["no JSON in --out names a git_revision"]
    return ["%s: git_revision %r, but the source tree's HEAD is %s" % (f, rev, want)
            for f, rev in found if rev.split("-dirty")[0] != want]


def main():
    args = sys.argv[1:]
    source_dir = None
    if args[:1] == ["--revision-of"]:
        source_dir, args = args[1], args[2:]
    program = os.path.abspath(args[0])
    name = os.path.basename(program)
    problems = []
    with tempfile.TemporaryDirectory() as top:
        fresh = os.path.join(top, "new", "sub")
        r = subprocess.run([program, "--out", fresh] + args[1:], capture_output=True,
                           text=True, timeout=600, cwd=top)
        if r.returncode != 0:
            problems.append("--out to a new folder: exited %d: %s" %
                            (r.returncode, r.stderr.strip()[-400:]))
        elif not os.path.isdir(fresh) or not os.listdir(fresh):
            problems.append("--out to a new folder: wrote nothing into %s" % fresh)
        elif source_dir:
            problems += revision_problems(fresh, source_dir)
        blocker = os.path.join(top, "a-file")
        open(blocker, "w").close()
        r = subprocess.run([program, "--out", os.path.join(blocker, "sub")] + args[1:],
                           capture_output=True, text=True, timeout=60, cwd=top)
        if r.returncode == 0:
            problems.append("--out below a regular file: exited 0")
        elif "--out" not in r.stderr:
            problems.append("--out below a regular file: the message does not name --out: %s" %
                            r.stderr.strip()[-400:])
        print("--- %s: %s" % (name, "ok" if not problems else "failed"))
    for p in problems:
        print("check_out_dir: %s %s" % (name, p))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
