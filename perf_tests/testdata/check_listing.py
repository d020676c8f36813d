#!/usr/bin/python3
"""Checks a perf program's --benchmark_list_tests run: it exits 0, prints its benchmarks'
names (Google Benchmark's "/iterations:" or "/repeats:" lines), each once, and writes no
file, neither into --out nor into the folder it runs in.

  check_listing.py PROGRAM [ARGUMENT ...]
"""
import collections
import os
import subprocess
import sys
import tempfile


def main():
    program = os.path.abspath(sys.argv[1])
    name = os.path.basename(program)
    problems = []
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as cwd:
        command = [program, "--quick", "--benchmark_list_tests", "--out", out] + sys.argv[2:]
        r = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=cwd)
        names = [line.strip() for line in r.stdout.splitlines()
                 if "/iterations:" in line or "/repeats:" in line or "/manual_time" in line]
        if r.returncode != 0:
            problems.append("exited %d: %s" % (r.returncode, r.stderr.strip()[-400:]))
        if not names:
            problems.append("listed no benchmark")
        repeated = [n for n, count in collections.Counter(names).items() if count > 1]
        if repeated:
            problems.append("listed %d names more than once, e.g. %s" % (len(repeated),
                                                                        repeated[0]))
        for folder, what in ((out, "--out"), (cwd, "its working folder")):
            if os.listdir(folder):
                problems.append("wrote %s into %s" % (", ".join(sorted(os.listdir(folder))), what))
        print("--- %s: %d names listed, exit %d" % (" ".join([name] + command[1:2] + command[2:3]),
                                                    len(names), r.returncode))
    for p in problems:
        print("check_listing: %s %s" % (name, p))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
