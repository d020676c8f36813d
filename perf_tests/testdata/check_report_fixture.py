#!/usr/bin/python3
"""Runs the report pipeline on a synthetic fixture and checks check_report.py's verdict: the
fixture and the report must be written, then check_report must pass (--expect pass) or fail
(--expect fail). A fixture or generator that breaks fails the test either way, so an expected
failure of check_report cannot be mistaken for a broken pipeline.

  check_report_fixture.py WORKDIR --expect pass|fail [make_report_fixture.py options...]
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw).returncode


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workdir")
    p.add_argument("--expect", choices=("pass", "fail"), required=True)
    a, fixture_args = p.parse_known_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    py = sys.executable
    if run([py, os.path.join(HERE, "make_report_fixture.py"), a.workdir] + fixture_args) != 0:
        print("check_report_fixture: writing the fixture failed")
        return 1
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "scripts"))
    if run([py, "-m", "report.generate", a.workdir], env=env) != 0:
        print("check_report_fixture: writing the report failed")
        return 1
    verdict = run([py, os.path.join(ROOT, "perf_tests", "check_report.py"), a.workdir])
    if (verdict == 0) != (a.expect == "pass"):
        print("check_report_fixture: check_report.py exited %d, expected it to %s" % (
            verdict, a.expect))
        return 1
    print("check_report_fixture: check_report.py did %s, as expected" % a.expect)
    return 0


if __name__ == "__main__":
    sys.exit(main())
