"""MkDocs hook: the mathematics rendered at build time, so the site needs no network to show it.

``pymdownx.arithmatex`` (generic mode) leaves ``\\( ... \\)`` in ``<span class="arithmatex">``
and ``\\[ ... \\]`` in ``<div class="arithmatex">``; this hook turns each into MathML with
``latex2mathml`` (pure Python, installed by the ``docs`` extra), which browsers render natively:
no script, no CDN. A formula that cannot be converted fails the build, naming the page.
"""

from __future__ import annotations

import html
import re

_MATH = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.S)
_DELIMS = {"span": (r"\(", r"\)"), "div": (r"\[", r"\]")}


def _tex(tag: str, body: str) -> str:
    text = html.unescape(body).strip()
    left, right = _DELIMS[tag]
    if not (text.startswith(left) and text.endswith(right)):
        raise ValueError(f"unexpected arithmatex content {text[:60]!r}")
    return text[len(left):-len(right)].strip()


def render(page_html: str, where: str = "") -> str:
    """``page_html`` with every arithmatex formula replaced by its MathML."""
    from latex2mathml.converter import convert

    def one(m):
        tag = m.group(1)
        tex = _tex(tag, m.group(2))
        try:
            mathml = convert(tex, display="block" if tag == "div" else "inline")
        except Exception as e:  # noqa: BLE001 - the build fails on the formula, with its page
            raise ValueError(f"{where}: cannot render {tex!r} ({type(e).__name__}: {e})") from None
        return f'<{tag} class="arithmatex">{mathml}</{tag}>'

    return _MATH.sub(one, page_html)


def on_page_content(html_text, page, config, files):
    return render(html_text, page.file.src_path)
