"""Every public definition has a docstring (issue 28): what the API reference renders is what a
reader can use, so nothing in it may be a bare signature.

"Public definitions" are what mkdocstrings renders (mkdocs.yml: ``filters: ["!^_"]``,
``show_if_no_docstring: true``), read with griffe as mkdocstrings reads them, without building the
site:

* every object a reference page documents with ``::: deeplimits.X`` (docs/reference/*.md), and
  the root package ``deeplimits``;
* for each such module, every name of its ``__all__`` (without ``__all__``: its public members
  that are defined there, not imported) -- functions, classes, constants;
* for each public class, recursively, its own public members (names not starting with ``_``):
  methods, properties, class attributes and dataclass fields.

A docstring is present when griffe finds a non-blank one: for functions, classes and properties the
usual docstring; for attributes and fields the string literal right after the assignment (the
convention of this package: an ``Attributes:`` section of the class docstring is NOT read). An
overriding method with no docstring of its own inherits its base class's, as the site shows it
(the griffe extension ``griffe_inherited_docstrings`` configured in mkdocs.yml).
"""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"


def documented() -> list[str]:
    """The objects the reference pages render, plus the root package."""
    names = []
    for page in sorted(REFERENCE.glob("*.md")):
        names += re.findall(r"^::: ([\w.]+)", page.read_text(), flags=re.M)
    return names + ["deeplimits"]


def _doc(obj) -> bool:
    return obj.docstring is not None and bool(obj.docstring.value.strip())


def _public_names(module) -> list[str]:
    if module.exports is not None:
        return [str(n) for n in module.exports if str(n) != "__version__"]
    return [n for n, m in module.members.items() if not n.startswith("_") and not m.is_alias and not m.is_module]


def _walk(obj, path: str, out: set[str], seen: set[str] | None = None) -> None:
    """``obj`` (a public object rendered as ``path``) and, for a class, its own public members;
    an object re-exported under several paths is reported once (``seen``: canonical paths)."""
    target = obj.final_target if obj.is_alias else obj
    seen = set() if seen is None else seen
    if target.path in seen:
        return
    seen.add(target.path)
    if not _doc(target):
        out.add(f"{path} ({target.kind.value})")
    if target.is_class:
        for name, member in target.members.items():
            if name.startswith("_") or member.is_alias:
                continue
            _walk(member, f"{path}.{name}", out, seen)


def undocumented() -> list[str]:
    """Every public definition without a docstring, as ``path (kind)``."""
    griffe = pytest.importorskip("griffe", reason="the docs extra: pip install 'deeplimits[docs]'")
    pytest.importorskip("griffe_inherited_docstrings", reason="the docs extra: pip install 'deeplimits[docs]'")
    package = griffe.load("deeplimits", search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False,
                          extensions=griffe.load_extensions("griffe_inherited_docstrings"))
    out: set[str] = set()
    seen: set[str] = set()
    for path in documented():
        obj = package if path == "deeplimits" else package[path.removeprefix("deeplimits.")]
        obj = obj.final_target if obj.is_alias else obj
        if not obj.is_module:
            _walk(obj, path, out, seen)
            continue
        if not _doc(obj):
            out.add(f"{path} (module)")
        for name in _public_names(obj):
            _walk(_member(package, obj, name), f"{path}.{name}", out, seen)
    return sorted(out)


def _member(package, module, name: str):
    """``module.name``; the root package's names are lazy (PEP 562), found where ``_WHERE`` says."""
    if name in module.all_members or module is not package:
        return module[name]
    import deeplimits

    return package[deeplimits._WHERE[name]][name]


@pytest.mark.slow
def test_every_public_definition_has_a_docstring():
    missing = undocumented()
    assert not missing, f"{len(missing)} public definitions without a docstring:\n" + "\n".join(missing)


def test_the_check_sees_what_it_must(tmp_path):
    """The walk reaches module constants, class methods, properties and dataclass fields: a toy
    package with one of each undocumented is reported in full, and once documented, not at all."""
    griffe = pytest.importorskip("griffe")
    pkg = tmp_path / "toy"
    pkg.mkdir()
    bare = ('"""Toy."""\nimport dataclasses\n__all__ = ["C", "K", "f"]\nK = 1\n'
            "def f():\n    pass\n"
            "@dataclasses.dataclass\nclass C:\n    x: int = 0\n    def m(self):\n        pass\n"
            "    @property\n    def p(self):\n        return 1\n    def _hidden(self):\n        pass\n")
    (pkg / "__init__.py").write_text(bare)
    toy = griffe.load("toy", search_paths=[str(tmp_path)])
    out: set[str] = set()
    for name in _public_names(toy):
        _walk(toy[name], f"toy.{name}", out)
    assert {o.split(" ")[0] for o in out} == {"toy.K", "toy.f", "toy.C", "toy.C.x", "toy.C.m", "toy.C.p"}
    documented_src = ('"""Toy."""\nimport dataclasses\n__all__ = ["C", "K", "f"]\nK = 1\n"""k."""\n'
                      'def f():\n    """f."""\n'
                      '@dataclasses.dataclass\nclass C:\n    """c."""\n    x: int = 0\n    """x."""\n'
                      '    def m(self):\n        """m."""\n'
                      '    @property\n    def p(self):\n        """p."""\n        return 1\n')
    (pkg / "__init__.py").write_text(documented_src)
    toy = griffe.load("toy", search_paths=[str(tmp_path)])
    out = set()
    for name in _public_names(toy):
        _walk(toy[name], f"toy.{name}", out)
    assert out == set()


def test_inherited_docstrings_count_and_attributes_sections_do_not(tmp_path):
    """An override without a docstring is documented by its base's (as the site shows it, with
    ``griffe_inherited_docstrings``); a field described only in an ``Attributes:`` section of
    the class docstring is not (the convention here: a string literal after the field)."""
    griffe = pytest.importorskip("griffe")
    pytest.importorskip("griffe_inherited_docstrings")
    (tmp_path / "toy2.py").write_text(
        '"""Toy."""\n__all__ = ["Base", "Child", "Fields"]\n'
        'class Base:\n    """b."""\n    def step(self):\n        """One step."""\n'
        'class Child(Base):\n    """c."""\n    def step(self):\n        pass\n'
        'class Fields:\n    """f.\n\n    Attributes:\n        x: the x.\n    """\n    x: int = 0\n')
    toy = griffe.load("toy2", search_paths=[str(tmp_path)],
                      extensions=griffe.load_extensions("griffe_inherited_docstrings"))
    out: set[str] = set()
    for name in _public_names(toy):
        _walk(toy[name], f"toy2.{name}", out)
    assert out == {"toy2.Fields.x (attribute)"}
