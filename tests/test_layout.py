"""The package's shape (issue 11): the import graph runs one way (no cycle, nothing imports the
package root from inside, no import hidden behind importlib), no module over 400 lines, no
function over 50 lines."""

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parent.parent / "deeplimits"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50
MODULES = sorted(PKG.rglob("*.py"))


def name_of(path: pathlib.Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: pathlib.Path) -> set[str]:
    """The deeplimits modules ``path`` imports (at any depth of the code, lazy imports included)."""
    me = name_of(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = ".".join(base[:len(base) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod.startswith("deeplimits"):
                for alias in node.names:  # "from . import x" may name a module
                    sub = f"{mod}.{alias.name}"
                    out.add(sub if (PKG.parent / (sub.replace(".", "/") + ".py")).exists()
                            or (PKG.parent / sub.replace(".", "/")).is_dir() else mod)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("deeplimits")}
    out.discard(me)
    return out


GRAPH = {name_of(p): imports(p) for p in MODULES}

# The one documented use of importlib: an activation named 'module:function' (``--activation
# mypkg.acts:cube``) names a module only at run time, so deeplimits.activations imports it by name,
# in exactly one function. The other: an optional dependency (Dask, pandas, mnist1d; never a
# deeplimits module) is imported by name in deeplimits._extras.need, which names its extra when it is
# missing. Nothing else in the package may (module -> the function allowed to).
IMPORTLIB_ALLOWED = {"deeplimits.activations": "_from_module", "deeplimits._extras": "need"}


def _importlib_uses(path: pathlib.Path) -> set[str]:
    """Where ``path`` uses importlib: ``"import"`` for the import statement, else the name of
    the enclosing function of each other use (``"<module>"`` at module level)."""
    tree = ast.parse(path.read_text())
    where = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "importlib" for a in node.names):
            where.add("import")
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        if any(isinstance(n, ast.Name) and n.id == "importlib" for n in ast.walk(fn)):
            where.add(fn.name)
    text_uses = path.read_text().count("importlib")
    if text_uses != 2:  # the import and the one call: not in comments, docstrings or elsewhere
        where.add(f"<{text_uses} mentions>")
    return where


def test_no_module_imports_the_package_root_or_importlib():
    bad = [m for m, deps in GRAPH.items() if m != "deeplimits" and "deeplimits" in deps]
    assert not bad, f"modules importing the package root (an import back up): {bad}"
    hidden = [name_of(p) for p in MODULES if ("importlib" in p.read_text() and name_of(p) not in IMPORTLIB_ALLOWED)
              or "__import__(" in p.read_text()]
    assert not hidden, f"imports hidden behind importlib: {hidden}"
    for module, function in IMPORTLIB_ALLOWED.items():
        path = PKG.parent / (module.replace(".", "/") + ".py")
        assert _importlib_uses(path) == {"import", function}, f"{module}: importlib only in {function}()"


def test_the_import_graph_has_no_cycle():
    """Package ``__init__`` files only re-export their own submodules, so edges into a package's
    ``__init__`` from its own submodules are the only ones that could hide a cycle: none may exist."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(GRAPH.get(m, ())):
            if d not in GRAPH:
                continue
            if state.get(d) == "open":
                cycle = stack[stack.index(d):] + [d]
                if not all(c == "deeplimits" or c.startswith(cycle[0]) for c in cycle):
                    pytest.fail("import cycle: " + " -> ".join(cycle))
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in GRAPH:
        if m not in state:
            visit(m)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG.parent)))
def test_module_and_function_sizes(path):
    lines = path.read_text().splitlines()
    assert len(lines) <= MAX_MODULE_LINES, f"{len(lines)} lines (at most {MAX_MODULE_LINES})"
    long = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body[1:] if ast.get_docstring(node) else node.body  # the docstring does not count
            if body:
                n = body[-1].end_lineno - body[0].lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{node.name} ({n} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
