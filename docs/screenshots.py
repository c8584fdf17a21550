"""Screenshots of the documentation site, and what a reader would see wrong in them.

Run by hand after a change to the site (the tests never run it: it needs a browser)::

    pip install playwright && playwright install chromium
    python docs/screenshots.py                 # builds the site, writes screenshots/*.png
    python docs/screenshots.py --site DIR --no-build --out shots --width 1440

It builds the site (``mkdocs build --strict``), serves it on a local port, opens the home,
getting-started, published, theory and command-line pages in headless Chromium at 1280 px,
saves a full-page screenshot of each, and reports

* raw TeX in a page's prose (``$...$``, ``\\(``, ``\\[``, a command such as ``\\Vert``) outside
  ``code``, ``pre`` and ``math``: a formula the build did not render;
* every code block whose content is wider than its box (``scrollWidth > clientWidth``): a line
  the reader has to scroll to.

Exit status 0 when nothing is found, 1 when something is (each on one line), 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import pathlib
import subprocess
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = {"home": "", "getting-started": "getting-started/", "published": "published/", "theory": "theory/",
         "cli": "cli/"}

#: the browser side: raw TeX in the text outside code, pre and math; code blocks that scroll
_RAW_TEX_JS = r"""() => {
  const skip = new Set(["CODE", "PRE", "MATH", "SCRIPT", "STYLE", "TEXTAREA", "KBD", "SAMP"]);
  const walker = document.createTreeWalker(document.querySelector("article") || document.body,
                                           NodeFilter.SHOW_TEXT);
  let text = "";
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    let p = n.parentElement, kept = true;
    for (; p; p = p.parentElement) if (skip.has(p.tagName)) { kept = false; break; }
    if (kept) text += n.data;
  }
  const tex = /\$\$|\$[^$]{1,400}?\$|\\[()\[\]]|\\[A-Za-z]{2,}/g;
  return [...text.matchAll(tex)].map(m => text.slice(Math.max(0, m.index - 30), m.index + m[0].length + 30)
                                           .replace(/\s+/g, " "));
}"""
_WIDE_JS = r"""() => [...document.querySelectorAll("article pre, article pre > code")]
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => ({tag: e.tagName.toLowerCase(), scroll: e.scrollWidth, client: e.clientWidth,
              line: e.innerText.split("\n").reduce((a, b) => b.length > a.length ? b : a, "")}))"""


def _build(site: pathlib.Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=ROOT,
                         capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"screenshots: mkdocs build --strict failed:\n{run.stderr[-3000:]}")


def _serve(site: pathlib.Path) -> http.server.ThreadingHTTPServer:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):  # no line per request
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def shoot(site: pathlib.Path, out: pathlib.Path, width: int, chromium: str | None = None) -> list[str]:
    """Screenshots of :data:`PAGES` into ``out``; the problems found, one line each. ``chromium``:
    a Chromium executable to use instead of playwright's own download."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    server = _serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"] if chromium else None)
            page = browser.new_page(viewport={"width": width, "height": 900})
            for name, path in PAGES.items():
                page.goto(base + path, wait_until="networkidle")
                page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                problems += [f"{name}: raw TeX: {t!r}" for t in page.evaluate(_RAW_TEX_JS)]
                problems += [f"{name}: <{w['tag']}> {w['scroll']} px wide in a {w['client']} px box: {w['line']!r}"
                             for w in page.evaluate(_WIDE_JS)]
                print(f"wrote {out / f'{name}.png'}")
            browser.close()
    finally:
        server.shutdown()
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "screenshots", help="write the PNGs here "
                    "(default: screenshots/ in the checkout)")
    ap.add_argument("--site", type=pathlib.Path, help="the built site (default: a temporary directory)")
    ap.add_argument("--no-build", action="store_true", help="use the site already built in --site")
    ap.add_argument("--width", type=int, default=1280, help="the window width in px (default %(default)s)")
    ap.add_argument("--chromium", metavar="PATH", help="a Chromium executable (default: playwright's, from "
                    "'playwright install chromium'; without the network, e.g. npm's @sparticuz/chromium)")
    args = ap.parse_args(argv)
    try:
        import playwright.sync_api
    except ImportError:
        print("screenshots: playwright is not installed: pip install playwright && playwright install chromium",
              file=sys.stderr)
        return 2
    if args.no_build and args.site is None:
        ap.error("--no-build needs --site")
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or pathlib.Path(tmp) / "site"
        if not args.no_build:
            _build(site)
        try:
            problems = shoot(site, args.out, args.width, args.chromium)
        except playwright.sync_api.Error as e:  # most often: no browser downloaded yet
            print(f"screenshots: cannot run Chromium ({str(e).splitlines()[0]}): playwright install chromium",
                  file=sys.stderr)
            return 2
    for line in problems:
        print(line)
    print(f"{len(problems)} problem(s) on {len(PAGES)} pages")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
