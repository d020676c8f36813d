#!/usr/bin/python3
"""Checks a perf program's --out DIR: a DIR that does not exist yet is created, parents
included, and the program's files land in it; a DIR that cannot be created (below a regular
file) stops the program at once, with a non-zero exit and a message naming --out, before any
measurement.

  check_out_dir.py PROGRAM [ARGUMENT ...]   (ARGUMENTs make a short run of PROGRAM)
"""
import os
import subprocess
import sys
import tempfile


def main():
    program = os.path.abspath(sys.argv[1])
    name = os.path.basename(program)
    problems = []
    with tempfile.TemporaryDirectory() as top:
        fresh = os.path.join(top, "new", "sub")
        r = subprocess.run([program, "--out", fresh] + sys.argv[2:], capture_output=True,
                           text=True, timeout=600, cwd=top)
        if r.returncode != 0:
            problems.append("--out to a new folder: exited %d: %s" %
                            (r.returncode, r.stderr.strip()[-400:]))
        elif not os.path.isdir(fresh) or not os.listdir(fresh):
            problems.append("--out to a new folder: wrote nothing into %s" % fresh)
        blocker = os.path.join(top, "a-file")
        open(blocker, "w").close()
        r = subprocess.run([program, "--out", os.path.join(blocker, "sub")] + sys.argv[2:],
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
