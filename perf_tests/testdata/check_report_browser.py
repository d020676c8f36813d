#!/usr/bin/python3
"""Looks at report.html as a user would: in headless Chromium at a laptop's width. The page must
load with no console message and no failed resource, show every image (each decodes to a
picture), and fit the width (no horizontal scrolling, no image or table past the right edge).
Takes a screenshot of the first screen.

  check_report_browser.py WORKDIR --chromium PATH [--report DIR] [--screenshot FILE]
                          [--width 1366] [--height 900]

Without --report, writes a synthetic report into WORKDIR first (make_report_fixture.py
--with-conversion, then the generator). The screenshot goes to FILE (default
WORKDIR/report-summary.png), as a small palette PNG when Pillow is there. A missing Chromium is a
failure with the reason, never a skip: scripts/kacc-bootstrap installs it (Debian: chromium).
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROBE_ID = "kacc-browser-probe"
# Runs before anything else on the page: records failed loads and errors, and on load writes
# what it measured into the page, which --dump-dom then prints.
PROBE = """<script>
window.kaccErrors = [];
window.addEventListener("error", function (e) {
  var t = e.target || {};
  window.kaccErrors.push(t.tagName ? "failed to load " + t.tagName + " " +
                         (t.alt || String(t.src || t.href || "").slice(0, 60)) :
                         "script error: " + e.message);
}, true);
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var wide = Array.prototype.slice.call(document.querySelectorAll("img, table, pre, figure"))
    .filter(function (e) { return e.getBoundingClientRect().right > window.innerWidth + 0.5; })
    .map(function (e) { return e.tagName + " " + (e.alt || e.textContent).slice(0, 50); });
  var out = document.createElement("pre");
  out.id = "%s";
  out.textContent = JSON.stringify({
    images: images.length,
    broken: images.filter(function (i) { return !i.complete || i.naturalWidth === 0; })
                  .map(function (i) { return i.alt.slice(0, 60); }),
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
    beyondRightEdge: wide, errors: window.kaccErrors});
  document.body.appendChild(out);
});
</script>""" % PROBE_ID


def chromium_command(chromium, width, height):
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0", "--window-size=%d,%d" % (width, height),
            "--virtual-time-budget=5000"]


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def make_fixture(workdir):
    shutil.rmtree(workdir, ignore_errors=True)
    py = sys.executable
    r = run([py, os.path.join(HERE, "make_report_fixture.py"), workdir, "--with-conversion"])
    if r.returncode != 0:
        return "writing the fixture failed: " + r.stderr[-2000:]
    r = run([py, "-m", "report.generate", workdir],
            env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "scripts")))
    if r.returncode != 0:
        return "writing the report failed: " + r.stderr[-2000:]
    return None


def check_page(chromium, report_html, width, height):
    """Problems seen when Chromium loads the page (with the probe) at width x height."""
    with open(report_html, encoding="utf-8") as f:
        page = f.read()
    expected_images = len(re.findall(r"<img\b", page))
    probed = re.sub(r"<head>", "<head>" + PROBE, page, count=1)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "report.html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(probed)
        r = run(chromium_command(chromium, width, height) + ["--dump-dom", "file://" + path])
    if r.returncode != 0:
        return ["chromium exited %d: %s" % (r.returncode, r.stderr[-2000:])]
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    problems += ["console message: " + line for line in console]
    m = re.search(r'<pre id="%s">(.*?)</pre>' % PROBE_ID, r.stdout, re.S)
    if not m:
        return problems + ["the page did not finish loading (no probe result in the DOM)"]
    seen = json.loads(html.unescape(m.group(1)))
    problems += ["page error: " + e for e in seen["errors"]]
    if seen["images"] != expected_images or expected_images == 0:
        problems.append("%d images shown, report.html has %d <img>" % (seen["images"],
                                                                       expected_images))
    problems += ["image not shown (does not decode): " + alt for alt in seen["broken"]]
    if seen["scrollWidth"] > width:
        problems.append("the page is %d px wide, more than the %d px screen" % (
            seen["scrollWidth"], width))
    problems += ["past the right edge at %d px: %s" % (width, e) for e in seen["beyondRightEdge"]]
    print("check_report_browser: %d images, page %d px wide at a %d px window, %d console "
          "messages" % (seen["images"], seen["scrollWidth"], seen["innerWidth"], len(console)))
    return problems


def screenshot(chromium, report_html, out, width, height):
    with tempfile.TemporaryDirectory() as tmp:
        shot = os.path.join(tmp, "shot.png")
        r = run(chromium_command(chromium, width, height) + ["--screenshot=" + shot,
                                                              "file://" + report_html])
        if r.returncode != 0 or not os.path.isfile(shot):
            return "screenshot failed: " + r.stderr[-2000:]
        try:  # a palette PNG is a third of the size; the text stays sharp
            from PIL import Image
            Image.open(shot).convert("RGB").quantize(colors=64).save(out, optimize=True)
        except ImportError:
            shutil.copyfile(shot, out)
    print("check_report_browser: screenshot of the first screen: %s (%d bytes)" % (
        out, os.path.getsize(out)))
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workdir")
    p.add_argument("--chromium", default="")
    p.add_argument("--report", help="a report folder to look at instead of a fixture")
    p.add_argument("--screenshot")
    p.add_argument("--width", type=int, default=1366)
    p.add_argument("--height", type=int, default=900)
    a = p.parse_args()
    chromium = a.chromium or shutil.which("chromium") or ""
    if not (chromium and os.access(chromium, os.X_OK)):
        print("check_report_browser: FAILED: no Chromium (%s): install the Debian package "
              "chromium (scripts/kacc-bootstrap does), then re-run cmake" % (
                  chromium or "none found"))
        return 1
    report = a.report
    if not report:
        why = make_fixture(a.workdir)
        if why:
            print("check_report_browser: FAILED: " + why)
            return 1
        report = a.workdir
    report_html = os.path.abspath(os.path.join(report, "report.html"))
    problems = check_page(chromium, report_html, a.width, a.height)
    os.makedirs(a.workdir, exist_ok=True)
    why = screenshot(chromium, report_html, a.screenshot or os.path.join(
        a.workdir, "report-summary.png"), a.width, a.height)
    if why:
        problems.append(why)
    for pr in problems:
        print("check_report_browser: " + pr)
    if problems:
        print("check_report_browser: FAILED: %d problems with %s" % (len(problems), report_html))
        return 1
    print("check_report_browser: %s loads cleanly and fits %d px" % (report_html, a.width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
