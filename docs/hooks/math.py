"""MkDocs hook: the mathematics rendered at build time, so the site needs no network to show it.

``pymdownx.arithmatex`` (generic mode) leaves ``\\( ... \\)`` in ``<span class="arithmatex">``
and ``\\[ ... \\]`` in ``<div class="arithmatex">``; this hook turns each into MathML with
``latex2mathml`` (pure Python, installed by the ``docs`` extra), which browsers render natively:
no script, no CDN. A formula that cannot be converted fails the build, naming the page.

A ``$...$`` that arithmatex leaves as text (its inline rule wants no space just inside the
dollars, so ``$\\Vert h_L\\Vert $`` in a table cell stayed raw) is rendered the same way: in the text
between tags, outside ``<pre>``, ``<code>``, ``<math>``, ``<script>``, ``<style>`` and
``<textarea>``.
"""

from __future__ import annotations

import html
import re

_MATH = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
#: an element whose text is not prose, or a tag: the pieces of a page that keep their dollars
_KEPT = re.compile(r"(<(pre|code|math|script|style|textarea)\b.*?</\2\s*>|<[^>]*>)", re.S | re.I)
#: ``$...$`` left in the text: single dollars, not escaped, around something other than space
_DOLLARS = re.compile(r"(?<![\\$])\$(?!\$)(?=[^$]*?\S)([^$]+?)(?<!\\)\$(?!\$)")
_DELIMS = {"span": (r"\(", r"\)"), "div": (r"\[", r"\]")}


def _tex(tag: str, body: str) -> str:
    text = html.unescape(body).strip()
    left, right = _DELIMS[tag]
    if not (text.startswith(left) and text.endswith(right)):
        raise ValueError(f"unexpected arithmatex content {text[:60]!r}")
    return text[len(left):-len(right)].strip()


def _mathml(tex: str, display: str, where: str) -> str:
    from latex2mathml.converter import convert

    try:
        return convert(tex, display=display)
    except Exception as e:  # noqa: BLE001 - the build fails on the formula, with its page
        raise ValueError(f"{where}: cannot render {tex!r} ({type(e).__name__}: {e})") from None


def _left_dollars(page_html: str, where: str) -> str:
    """``page_html`` with each ``$...$`` arithmatex left in the prose made an inline formula."""

    def one(m):
        tex = html.unescape(m.group(1)).strip()
        return f'<span class="arithmatex">{_mathml(tex, "inline", where)}</span>'

    pieces = _KEPT.split(page_html)  # text, kept piece, its tag name, text, ...
    for i in range(0, len(pieces), 3):
        if "$" in pieces[i]:
            pieces[i] = _DOLLARS.sub(one, pieces[i])
    return "".join(p for j, p in enumerate(pieces) if j % 3 != 2)


def render(page_html: str, where: str = "") -> str:
    """``page_html`` with every arithmatex formula, and every ``$...$`` it left in the prose,
    replaced by its MathML."""

    def one(m):
        tag = m.group(1)
        mathml = _mathml(_tex(tag, m.group(2)), "block" if tag == "div" else "inline", where)
        return f'<{tag} class="arithmatex">{mathml}</{tag}>'

    return _left_dollars(_MATH.sub(one, page_html), where)


def on_page_content(html_text, page, config, files):
    return render(html_text, page.file.src_path)
