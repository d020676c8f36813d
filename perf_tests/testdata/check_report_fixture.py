#!/usr/bin/python3
"""Runs the report pipeline on a synthetic fixture and checks check_report.py's verdict: the
fixture and the report must be written, then check_report must pass (--expect pass) or fail
(--expect fail). A fixture or generator that breaks fails the test either way, so an expected
failure of check_report cannot be mistaken for a broken pipeline.

  check_report_fixture.py WORKDIR --expect pass|fail [--error-budget E]
      [--tamper-recommendation] [--hide-wrong-claims] [--expect-reason KERNEL:SHAPE:REASON]...
      [make_report_fixture.py options...]

--tamper-recommendation rewrites one recommended choice in report_recommendation.csv after the
report is written (check_report must then fail); --hide-wrong-claims deletes the dense-solve
section's lines that name a solve reporting success with a wrong answer (it must fail too);
--expect-reason checks that the 1e-06 budget's
reason for a shape starts with REASON (the fixture's causes, built in on purpose).
"""
import csv
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
    p.add_argument("--error-budget", action="append", default=[])
    p.add_argument("--tamper-recommendation", action="store_true")
    p.add_argument("--hide-wrong-claims", action="store_true")
    p.add_argument("--expect-reason", action="append", default=[])
    a, fixture_args = p.parse_known_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    py = sys.executable
    if run([py, os.path.join(HERE, "make_report_fixture.py"), a.workdir] + fixture_args) != 0:
        print("check_report_fixture: writing the fixture failed")
        return 1
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "scripts"))
    budgets = ["--error-budget=" + b for b in a.error_budget]
    if run([py, "-m", "report.generate", a.workdir] + budgets, env=env) != 0:
        print("check_report_fixture: writing the report failed")
        return 1
    rec_path = os.path.join(a.workdir, "report_recommendation.csv")
    with open(rec_path, newline="") as f:
        recs = list(csv.DictReader(f))
    for expected in a.expect_reason:
        kernel, shape, reason = expected.split(":", 2)
        row = next((r for r in recs if (r["kernel"], r["shape"], r["budget"]) ==
                    (kernel, shape, "1e-06")), None)
        if row is None or not row["reason"].startswith(reason):
            print("check_report_fixture: %s %s at 1e-06: expected reason '%s', got %s" % (
                kernel, shape, reason, row["reason"] if row else "no row"))
            return 1
    if a.tamper_recommendation:
        row = next(r for r in recs if r["pays_off"] == "yes")
        row["choice"] = "fp64"
        print("check_report_fixture: tampered: %s %s %s now says fp64" % (
            row["kernel"], row["shape"], row["budget"]))
        with open(rec_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(recs[0].keys()))
            w.writeheader()
            w.writerows(recs)
    if a.hide_wrong_claims:
        md_path = os.path.join(a.workdir, "report.md")
        with open(md_path) as f:
            lines = f.read().splitlines(True)
        kept = [line for line in lines if "Reported success, wrong answer" not in line]
        print("check_report_fixture: tampered: %d wrong-claim lines removed from report.md" % (
            len(lines) - len(kept)))
        with open(md_path, "w") as f:
            f.writelines(kept)
    verdict = run([py, os.path.join(ROOT, "perf_tests", "check_report.py"), a.workdir])
    if (verdict == 0) != (a.expect == "pass"):
        print("check_report_fixture: check_report.py exited %d, expected it to %s" % (
            verdict, a.expect))
        return 1
    print("check_report_fixture: check_report.py did %s, as expected" % a.expect)
    return 0


if __name__ == "__main__":
    sys.exit(main())
