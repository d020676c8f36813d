#!/usr/bin/python3
"""Checks a perf program's help: --help prints kacc's usage first (the program's name on the
first line), says where Kokkos' options are and does not list them; --kokkos-help prints
Kokkos' options. Both exit 0 without measuring anything (they write no file).

  check_help.py PROGRAM
"""
import os
import subprocess
import sys
import tempfile


def main():
    program = os.path.abspath(sys.argv[1])
    name = os.path.basename(program)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for flag in ("--help", "--kokkos-help"):
            r = subprocess.run([program, flag, "--out", tmp], capture_output=True, text=True,
                               timeout=60, cwd=tmp)
            text = r.stdout + r.stderr
            lines = [line for line in text.splitlines() if line.strip()]
            kokkos_lines = [line for line in lines if "--kokkos-" in line and
                            "--kokkos-help" not in line]
            if r.returncode != 0:
                problems.append("%s %s exited %d" % (name, flag, r.returncode))
            if flag == "--help":
                if not lines or not lines[0].startswith(name):
                    problems.append("%s --help: first line is not kacc's usage: %r" % (
                        name, lines[0] if lines else ""))
                if "--kokkos-help" not in text:
                    problems.append("%s --help does not say where Kokkos' options are" % name)
                if len(kokkos_lines) > 1:
                    problems.append("%s --help lists Kokkos' options (%d lines)" % (
                        name, len(kokkos_lines)))
            elif len(kokkos_lines) < 3:
                problems.append("%s --kokkos-help does not print Kokkos' options" % name)
            if os.listdir(tmp):
                problems.append("%s %s measured something: wrote %s" % (
                    name, flag, ", ".join(sorted(os.listdir(tmp)))))
            print("--- %s %s (exit %d):\n%s" % (name, flag, r.returncode, "\n".join(lines[:6])))
    for p in problems:
        print("check_help: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
