"""Griffe extension (mkdocs.yml, mkdocstrings ``extensions``): the docstrings' cross-references as links.

The docstrings cite each other with Sphinx roles (``:func:`~deeplimits.runs.run_sweep```,
``:class:``, ``:meth:``, ``:mod:``, ..., also ``:meth:`title <target>```) and the documentation pages as ``docs/NAME.md`` (with a
section as ``docs/NAME.md, "Section"``). Once the package is loaded, every docstring is rewritten:

* a role naming an object the reference renders becomes an autorefs link to where it is rendered,
  ``[`run_sweep`][deeplimits.runs.run_sweep]`` (``~`` shows the last part of the name, as Sphinx
  does); a role naming a module with a reference page links to that page; names are resolved as
  Python would in the docstring's scope (its class, its module's imports), then by a unique short
  name among the rendered objects;
* a role naming anything else (a private helper, ``torch.Generator``) is shown as code, so
  ``mkdocs build --strict`` has no unresolved reference to warn about;
* ``docs/NAME.md`` becomes a relative link to that page (reference pages sit in
  ``docs/reference/``), to the named section when the page has a heading of that title.
"""

from __future__ import annotations

import pathlib
import re

import griffe

_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|obj|exc|const):`([^`]+)`")
_TARGET = re.compile(r"(?:(?P<title>[^<]*?) <)?(?P<tilde>~?)\.?(?P<name>[\w.]+?)(?P<call>\(\))?>?$")
_PAGE = re.compile(r"(?<![\w/`\[])docs/([\w-]+)\.md(?:(, )\"([^\"]+)\")?")
DOCS = pathlib.Path(__file__).resolve().parent.parent


def _slug(title: str) -> str:
    """The anchor Python-Markdown's ``toc`` gives a heading (its default slugify)."""
    from markdown.extensions.toc import slugify

    return slugify(re.sub(r"[`*]", "", title), "-")


class CrossReferences(griffe.Extension):
    """Rewrites Sphinx roles and ``docs/NAME.md`` mentions of every docstring (module docstring)."""

    def __init__(self, reference: str = "reference") -> None:
        self.reference = DOCS / reference

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        if pkg.name != "deeplimits":
            return
        self.collection = loader.modules_collection
        self.rendered: dict[str, str] = {}  # canonical path -> the path the reference renders it at
        self.pages: dict[str, str] = {}  # module path -> its reference page
        for page in sorted(self.reference.glob("*.md")):
            for path in re.findall(r"^::: ([\w.]+)", page.read_text(), flags=re.M):
                self._render(path, page.name)
        self.short: dict[str, list[str]] = {}
        for public in self.rendered.values():
            self.short.setdefault(public.rsplit(".", 1)[-1], []).append(public)
        self.headings = {p.stem: {_slug(h) for h in re.findall(r"^#+ (.+?)\s*$", p.read_text(), flags=re.M)}
                         for p in DOCS.glob("*.md")}
        self._rewrite(pkg, set())

    # -- what the reference renders (as tests/test_docstrings.py reads it) -------------------------

    def _render(self, path: str, page: str) -> None:
        obj = self._get(path)
        if obj is None:
            return
        if obj.is_module:
            self.pages.setdefault(obj.path, page)
            names = ([str(n) for n in obj.exports] if obj.exports is not None
                     else [n for n, m in obj.members.items() if not n.startswith("_") and not m.is_alias])
            for name in names:
                member = self._get(f"{path}.{name}")
                if member is not None and not member.is_module:
                    self._add(member, f"{path}.{name}")
        else:
            self._add(obj, path)

    def _add(self, obj, public: str) -> None:
        self.rendered.setdefault(obj.path, public)
        if obj.is_class:
            for name, member in obj.members.items():
                if not name.startswith("_") and not member.is_alias:
                    self._add(member, f"{public}.{name}")

    def _get(self, path: str):
        """The object at ``path`` (aliases followed), or None."""
        try:
            obj = self.collection[path]
            return obj.final_target if obj.is_alias else obj
        except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            return self._lazy(path)

    def _lazy(self, path: str):
        """The root package's names are lazy (PEP 562): ``deeplimits.X`` is where ``_WHERE`` says."""
        parts = path.split(".")
        if len(parts) < 2 or parts[0] != "deeplimits":
            return None
        import deeplimits

        where = deeplimits._WHERE.get(parts[1])
        return None if where is None or parts[1] == path else self._get(".".join(["deeplimits", where, *parts[1:]]))

    # -- the rewrite -------------------------------------------------------------------------------

    def _rewrite(self, obj, seen: set[str]) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.docstring is not None:
            obj.docstring.value = self.rewrite(obj.docstring.value, obj)
        for member in obj.members.values():
            if not member.is_alias:
                self._rewrite(member, seen)

    def rewrite(self, text: str, scope) -> str:
        text = _ROLE.sub(lambda m: self._role(m, scope), text)
        return _PAGE.sub(self._page, text)

    def _role(self, match: re.Match, scope) -> str:
        parts = _TARGET.match(match.group(1).strip())
        if parts is None:
            return f"`{match.group(1)}`"
        name, call = parts["name"], parts["call"] or ""
        shown = parts["title"] or (name.rsplit(".", 1)[-1] if parts["tilde"] else name) + call
        target = self._resolve(name, scope, match.group(0)[1:].split(":", 1)[0])
        if target is None:
            return f"`{shown}`"
        if target.is_module and target.path not in self.pages and target.name in target.members:
            target = self._get(f"{target.path}.{target.name}")  # deeplimits.training.train: the function
        if target.is_module:
            page = self.pages.get(target.path)
            return f"[`{shown}`]({page})" if page else f"`{shown}`"
        public = self.rendered.get(target.path)
        return f"[`{shown}`][{public}]" if public else f"`{shown}`"

    def _resolve(self, name: str, scope, role: str = ""):
        head, _, rest = name.partition(".")
        if head == "deeplimits":
            return self._get(name)
        try:
            full = scope.resolve(head)
        except (griffe.NameResolutionError, griffe.AliasResolutionError, KeyError):
            full = None
        if full is not None:
            found = self._get(f"{full}.{rest}" if rest else full)
            if found is not None:
                return found
        candidates = {c for c in self.short.get(name.rsplit(".", 1)[-1], []) if c.endswith("." + name)}
        if len(candidates) > 1 and role in ("func", "meth"):  # a function or a method, as the role says
            candidates = {c for c in candidates if self._get(c).parent.is_class == (role == "meth")}
        return self._get(candidates.pop()) if len(candidates) == 1 else None

    def _page(self, match: re.Match) -> str:
        page, sep, section = match.group(1), match.group(2), match.group(3)
        if page not in self.headings:
            return match.group(0)
        anchor = _slug(section) if section else ""
        if anchor in self.headings[page]:
            return f'[docs/{page}.md{sep}"{section}"](../{page}.md#{anchor})'
        return f"[docs/{page}.md](../{page}.md)" + (f'{sep}"{section}"' if section else "")
