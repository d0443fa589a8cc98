#!/usr/bin/env python3
"""Load an HTML page in a real headless browser (Debian's chromium) and check it.

usage: browser_check.py PAGE.html SHOT.png [--title-prefix TEXT] [--min-colours N]
                        [--min-ink F] [--canary]

Checks, each a failure (exit 1) with the reason:
- the page loads and its DOM comes back whole (--dump-dom ends in </html>);
- the browser reported nothing on the page's console: chromium started with
  --enable-logging=stderr --v=0 writes every console message (a script error,
  an SVG attribute it could not parse such as cx="nan", a load the page's
  Content-Security-Policy blocked) as an "INFO:CONSOLE" line on stderr;
- the loaded DOM holds no <script> element (hostile names arrive as text);
- the title starts with --title-prefix;
- a screenshot at 1200x3000 is 1200x3000 pixels, has at least --min-colours
  distinct colours and at least --min-ink of its pixels not white (a blank or
  unstyled page fails).
--canary first loads a copy of the page with planted faults (an SVG
coordinate "nan", an image from the network, a console.error) and fails if
the console check does not see all three: a check that cannot fail is none.

Exits 77 with "skipped: ..." only when chromium is not installed or cannot
start at all (about:blank does not load).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

WIDTH, HEIGHT = 1200, 3000


def fail(msg):
    print("browser_check: FAIL: " + msg)
    sys.exit(1)


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(exe, profile, args, url, timeout=120):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run",
           "--disable-extensions", "--disable-background-networking",
           "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0"] + args + [url]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        fail("chromium did not finish within %d s: %s" % (timeout, " ".join(cmd)))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def console_lines(stderr):
    return [l for l in stderr.splitlines() if "CONSOLE" in l]


def canary(exe, profile, page):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    planted = text.replace(
        "</body>",
        '<svg width="10" height="10"><circle cx="nan" cy="1" r="1"/></svg>'
        '<img src="http://192.0.2.1/tunefarm-canary.png" alt=""></body>', 1)
    # console.error through an inline script, which the copy's policy permits
    # so that the message itself is what is logged
    policy = "style-src 'unsafe-inline'"
    if policy not in planted:
        fail("canary: the page has no Content-Security-Policy with %r" % policy)
    planted = planted.replace(policy, policy + "; script-src 'unsafe-inline'", 1)
    planted = planted.replace("</body>", "<script>console.error('tunefarm canary')</script>"
                              "</body>", 1)
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, encoding="utf-8") as f:
        f.write(planted)
        path = f.name
    try:
        _, _, err = run_browser(exe, profile, ["--dump-dom"], "file://" + path)
    finally:
        os.unlink(path)
    lines = "\n".join(console_lines(err))
    for what, needle in (("an SVG attribute 'nan'", "nan"),
                         ("a blocked network load", "192.0.2.1"),
                         ("console.error", "tunefarm canary")):
        if needle not in lines:
            fail("the console check is blind: it did not see %s in a planted page "
                 "(console lines seen: %r)" % (what, lines[:2000]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("shot")
    ap.add_argument("--title-prefix", default="")
    ap.add_argument("--min-colours", type=int, default=20)
    ap.add_argument("--min-ink", type=float, default=0.03)
    ap.add_argument("--canary", action="store_true")
    a = ap.parse_args()

    exe = chromium()
    if exe is None:
        print("skipped: chromium cannot run: not installed (scripts/deps.sh test installs it)")
        sys.exit(77)
    profile = tempfile.mkdtemp(prefix="tf-chromium-")
    try:
        rc, out, err = run_browser(exe, profile, ["--dump-dom"], "about:blank", timeout=90)
        if rc != 0 or "</html>" not in out:
            tail = "\n".join(err.strip().splitlines()[-5:])
            print("skipped: chromium cannot run: about:blank did not load (exit %d): %s"
                  % (rc, tail))
            sys.exit(77)
        if a.canary:
            canary(exe, profile, a.page)

        url = "file://" + os.path.abspath(a.page)
        rc, dom, err = run_browser(exe, profile, ["--dump-dom"], url)
        if rc != 0 or not dom.rstrip().endswith("</html>"):
            fail("the page did not load whole (exit %d, %d bytes of DOM)" % (rc, len(dom)))
        lines = console_lines(err)
        if lines:
            fail("the browser reported on the console:\n  " + "\n  ".join(lines[:10]))
        if "<script" in dom.lower():
            fail("the loaded page holds a <script> element")
        start = dom.find("<title>")
        title = dom[start + 7:dom.find("</title>", start)] if start >= 0 else ""
        if not title.startswith(a.title_prefix):
            fail("title %r does not start with %r" % (title, a.title_prefix))

        if os.path.exists(a.shot):
            os.unlink(a.shot)
        rc, _, err = run_browser(exe, profile, ["--hide-scrollbars", "--screenshot=" + a.shot,
                                                "--window-size=%d,%d" % (WIDTH, HEIGHT)], url)
        if rc != 0 or not os.path.exists(a.shot):
            fail("no screenshot (exit %d)" % rc)
        lines = console_lines(err)
        if lines:
            fail("the browser reported on the console while drawing:\n  " +
                 "\n  ".join(lines[:10]))
    finally:
        shutil.rmtree(profile, ignore_errors=True)

    from PIL import Image
    img = Image.open(a.shot).convert("RGB")
    if img.size != (WIDTH, HEIGHT):
        fail("screenshot is %dx%d, expected %dx%d" % (img.size + (WIDTH, HEIGHT)))
    colours = img.getcolors(maxcolors=WIDTH * HEIGHT)
    white = sum(n for n, c in colours if min(c) >= 250)
    ink = 1.0 - white / float(WIDTH * HEIGHT)
    if len(colours) < a.min_colours:
        fail("screenshot has %d distinct colours, expected at least %d" %
             (len(colours), a.min_colours))
    if ink < a.min_ink:
        fail("screenshot is %.1f%% non-white, expected at least %.1f%%" %
             (ink * 100, a.min_ink * 100))
    print("browser_check: %s: loaded, no console message, title %r; screenshot %dx%d, "
          "%d colours, %.1f%% non-white" % (a.page, title, img.size[0], img.size[1],
                                           len(colours), ink * 100))


if __name__ == "__main__":
    main()
