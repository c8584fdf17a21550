"""Screenshots of every page of the documentation site, and what a reader would see wrong in them.

Run by hand after a change to the site (the tests never run it: it needs a browser)::

    pip install -e ".[screenshots]"   # playwright; a Chromium: Debian's, or: playwright install chromium
    python docs/screenshots.py                 # builds the site, writes screenshots/*.png
    python docs/screenshots.py --chromium /usr/bin/chromium --report screenshots/report.txt
    python docs/screenshots.py --site DIR --no-build --out shots --width 1440 --page schemes

It builds the site (``mkdocs build --strict``), serves it on a local port, opens every page of
the built site (the API reference included) in headless Chromium at 1280 px, saves a full-page
screenshot of each, prints one line per page (what it measured there) and reports, one line each,

* raw TeX in a page's prose (``$...$``, ``\\(``, ``\\[``, a command such as ``\\Vert``) outside
  ``code``, ``pre`` and ``math``: a formula the build did not render;
* every code block whose content is wider than its box (``scrollWidth > clientWidth``): a line
  the reader has to scroll to, or that a screenshot cuts;
* every table wider than its box: wider than the page's column, or than the box that holds it
  (the theme wraps a table's cells to fit the column, docs/stylesheets/extra.css; a table that
  still does not fit is reported);
* every display formula wider than its box, any other block (a figure, an admonition) past the
  column, and a page wider than the window (a sideways scroll bar).

Cut means wider than its box, whether the box hides the rest or scrolls to it: a screenshot shows
neither. It prints how many code blocks, tables and formulas it measured on how many pages.
Exit status 0 when nothing is found, 1 when something is, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: Chromium's flags on a machine without a screen or a network (no GPU, no background connections)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: the browser side: raw TeX in the text outside code, pre and math
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
#: the browser side: every code block, table and display formula of the article against its box,
#: any other block past the column, and the page against the window. What counts as cut: content
#: wider than its box, whether the box hides it or scrolls to it (the theme wraps instead,
#: docs/stylesheets/extra.css), and a page wider than the window. Not counted: the theme's own
#: 0.8rem bleed of a table's wrapper past the column (by design), and the padding of an inline
#: ``code`` broken at a line's end (a few px of background, no text).
_MEASURE_JS = r"""() => {
  const article = document.querySelector("article") || document.body;
  const column = article.getBoundingClientRect();
  const code = [...article.querySelectorAll("pre > code")];
  const tables = [...article.querySelectorAll("table")];
  const formulas = [...article.querySelectorAll('math[display="block"]')];
  const past = e => e.getBoundingClientRect().right > column.right + 1;
  const longest = s => s.split("\n").reduce((a, b) => b.length > a.length ? b : a, "");
  const wide = code.filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => ({kind: "code block", scroll: e.scrollWidth, client: e.clientWidth, text: longest(e.innerText)}));
  for (const t of tables) {
    const box = t.parentElement, r = t.getBoundingClientRect();
    const head = (t.querySelector("tr") || t).innerText.replace(/\s+/g, " ").slice(0, 80);
    if (r.right > column.right + 1 || r.width > column.width + 1)
      wide.push({kind: "table", scroll: Math.round(r.width), client: Math.round(column.width), text: head});
    else if (box && box.scrollWidth > box.clientWidth + 1)
      wide.push({kind: "table", scroll: box.scrollWidth, client: box.clientWidth, text: head});
  }
  for (const f of formulas) {
    const box = f.parentElement;
    if (past(f) || (box && box.scrollWidth > box.clientWidth + 1))
      wide.push({kind: "formula", scroll: Math.round(f.getBoundingClientRect().width),
                 client: box ? box.clientWidth : Math.round(column.width), text: f.textContent.slice(0, 80)});
  }
  for (const e of article.querySelectorAll("*")) {  // any other block: a figure, an admonition, a list
    if (e.closest("table, pre, math, .md-typeset__scrollwrap") || !past(e)
        || getComputedStyle(e).display.startsWith("inline") || (e.parentElement && past(e.parentElement)))
      continue;
    wide.push({kind: `<${e.tagName.toLowerCase()}> block`, scroll: Math.round(e.getBoundingClientRect().right - column.left),
               client: Math.round(column.width), text: (e.innerText || e.getAttribute("src") || "").slice(0, 80)});
  }
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1)
    wide.push({kind: "page", scroll: doc.scrollWidth, client: doc.clientWidth, text: "scrolls sideways"});
  return {code: code.length, tables: tables.length, formulas: formulas.length, wide};
}"""


def _build(site: pathlib.Path) -> None:
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    if run.returncode:
        sys.exit(f"screenshots: mkdocs build --strict failed:\n{run.stderr[-3000:]}")


def pages(site: pathlib.Path) -> dict[str, str]:
    """``{name: path}`` of every page of the built ``site``: each ``index.html`` (``home`` for the
    top one; ``reference-studies.law`` for ``reference/studies.law/``), the error page left out."""
    out = {}
    for f in sorted(site.rglob("index.html")):
        rel = f.parent.relative_to(site).as_posix()
        if rel.startswith(("assets", "search")):
            continue
        out["home" if rel == "." else rel.replace("/", "-")] = "" if rel == "." else rel + "/"
    return out


def _serve(site: pathlib.Path) -> http.server.ThreadingHTTPServer:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):  # no line per request
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def shoot(site: pathlib.Path, out: pathlib.Path, width: int, chromium: str | None = None,
          only: list[str] | None = None, log=None) -> tuple[list[str], dict]:
    """Screenshots of every page of ``site`` (or of the pages named in ``only``) into ``out``;
    ``(problems, counts)``: the problems found, one line each, and how many pages, code blocks,
    tables and display formulas were measured. ``chromium``: a Chromium executable to use instead
    of playwright's own download. ``log(line)``: called with one line per page as it is measured."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    todo = pages(site)
    if only:
        unknown = sorted(set(only) - set(todo))
        if unknown:
            raise ValueError(f"no such page: {', '.join(unknown)} (the pages: {', '.join(todo)})")
        todo = {name: path for name, path in todo.items() if name in only}
    server = _serve(site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems, counts = [], {"pages": 0, "code blocks": 0, "tables": 0, "formulas": 0}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": width, "height": 900})
            for name, path in todo.items():
                page.goto(base + path, wait_until="load")
                page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                found = [f"{name}: raw TeX: {t!r}" for t in page.evaluate(_RAW_TEX_JS)]
                m = page.evaluate(_MEASURE_JS)
                found += [f"{name}: {w['kind']} {w['scroll']} px wide in a {w['client']} px box: {w['text']!r}"
                          for w in m["wide"]]
                problems += found
                counts["pages"] += 1
                for key, n in (("code blocks", "code"), ("tables", "tables"), ("formulas", "formulas")):
                    counts[key] += m[n]
                if log:
                    log(f"{name}: {m['code']} code blocks, {m['tables']} tables, {m['formulas']} formulas: "
                        + (f"{len(found)} problem(s)" if found else "ok"))
            browser.close()
    finally:
        server.shutdown()
    return problems, counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "screenshots", help="write the PNGs here "
                    "(default: screenshots/ in the checkout)")
    ap.add_argument("--site", type=pathlib.Path, help="the built site (default: a temporary directory)")
    ap.add_argument("--no-build", action="store_true", help="use the site already built in --site")
    ap.add_argument("--width", type=int, default=1280, help="the window width in px (default %(default)s)")
    ap.add_argument("--chromium", metavar="PATH", default=shutil.which("chromium"),
                    help="a Chromium executable (default: Debian's chromium when installed, else playwright's, "
                         "from 'playwright install chromium')")
    ap.add_argument("--page", action="append", metavar="NAME", help="only this page (repeatable): its "
                    "screenshot's name, e.g. schemes, home, reference-studies.law")
    ap.add_argument("--report", type=pathlib.Path, metavar="FILE", help="also write the report to FILE")
    args = ap.parse_args(argv)
    try:
        import playwright.sync_api
    except ImportError:
        print("screenshots: playwright is not installed: pip install -e '.[screenshots]' (and a Chromium: "
              "Debian's chromium, or playwright install chromium)", file=sys.stderr)
        return 2
    if args.no_build and args.site is None:
        ap.error("--no-build needs --site")
    lines = []

    def log(line):
        lines.append(line)
        print(line, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or pathlib.Path(tmp) / "site"
        if not args.no_build:
            _build(site)
        try:
            problems, counts = shoot(site, args.out, args.width, args.chromium, args.page, log)
        except ValueError as e:
            ap.error(str(e))
        except playwright.sync_api.Error as e:  # most often: no browser downloaded yet
            print(f"screenshots: cannot run Chromium ({str(e).splitlines()[0]}): playwright install chromium, "
                  "or --chromium PATH", file=sys.stderr)
            return 2
    for line in problems:
        log(line)
    log(f"{len(problems)} problem(s) on {counts['pages']} pages at {args.width} px ({counts['code blocks']} "
        f"code blocks, {counts['tables']} tables and {counts['formulas']} display formulas measured); "
        f"screenshots in {args.out}")
    if args.report:
        args.report.write_text("\n".join(lines) + "\n")
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main())
