"""The package's shape (issue 11): the import graph runs one way (no cycle, nothing imports the
package root from inside, no import hidden behind importlib), no module over 400 lines, no
function over 50 lines; (issue 22) every module sits in a declared layer and imports only from
its own layer or those below, no class over 350 lines or 30 methods, and every default
``--help`` prints is read from the code."""

import ast
import copy
import pathlib
import re

import pytest

PKG = pathlib.Path(__file__).resolve().parent.parent / "deeplimits"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50
#: a class may not fill a module (its methods are helpers of one concept: split it when it grows)
MAX_CLASS_LINES = 350
MAX_CLASS_METHODS = 30
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
    out |= {f"{me}.{sub}" for sub in lazy_tables(path)}
    out.discard(me)
    return out


def lazy_tables(path: pathlib.Path) -> set[str]:
    """The submodules a package ``__init__`` loads by name (deeplimits._lazy): the values of its
    table ``_WHERE`` (public name -> submodule), written as ``{"name": "sub", **dict.fromkeys((...), "sub")}``."""
    subs = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_WHERE" for t in node.targets):
            for value in node.value.values:
                if isinstance(value, ast.Call):  # dict.fromkeys(names, "sub")
                    value = value.args[1]
                subs.add(value.value)
    return subs


GRAPH = {name_of(p): imports(p) for p in MODULES}

# The one documented use of importlib: a user's own code named 'module:Name' by the user on the command
# line or in Python (``--activation mypkg.acts:cube``, ``--block mymodels:Gated``) names a module only
# at run time, so deeplimits._user_code imports it by name, in exactly one function (_import, behind load_user_object, which refuses
# while a stored file is read: never because a stored file names it). The other: an optional
# dependency (Dask, pandas, mnist1d; never a deeplimits module) is imported by name in
# deeplimits._extras.need, which names its extra when it is missing. The third: the lazy package roots
# import the submodule of a name in deeplimits._lazy.submodule, from their tables (``_WHERE``), which
# the graph reads (lazy_tables). Nothing else in the package may (module -> the
# function allowed to).
IMPORTLIB_ALLOWED = {"deeplimits._user_code": "_import", "deeplimits._extras": "need",
                     "deeplimits._lazy": "submodule"}


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


# -- declared layers (issue 22): which part of the package may import which ------------------------

#: The layers, lowest first, by top-level module or subpackage of deeplimits ("" is the package
#: root). A module imports only from its own layer or the layers below; within a layer the cycle
#: test above keeps the graph one-way.
LAYERS = (
    ("foundations", {"errors", "_version", "_names", "_files", "_extras", "_resources", "options", "_random", "_user_code",
                     "_bounded", "_plain", "_lazy", "orders", "_validate", "_devices", "_transforms", "_executor", "_stats",
                     "_settings", "_figure_data"}),
    ("runs", {"runs"}),
    ("numerics", {"activations", "blocks", "paths", "networks", "data", "plots", "_figures"}),
    ("models", {"limits", "pairs", "training"}),
    ("uses of the models", {"regimes", "diagnostics", "schemes"}),
    ("studies", {"studies"}),
    ("interface", {"cli", "__main__", ""}),
)
#: imports up the layers allowed, (importer, imported) -> why (none: the run store's check lives in
#: deeplimits.runs.executors, beside the sweep that takes the store)
UPWARD: dict[tuple[str, str], str] = {}


def part_of(module: str) -> str:
    """The top-level module or subpackage of ``module`` ("" for the package root)."""
    return module.split(".")[1] if "." in module else ""


def layer_of(part: str) -> int:
    return next(i for i, (_, parts) in enumerate(LAYERS) if part in parts)


def upward_imports(graph: dict) -> list[str]:
    """The imports of ``graph`` (module -> modules) that go up the declared layers (and are not in
    :data:`UPWARD`)."""
    bad = []
    for module, deps in graph.items():
        for dep in deps:
            a, b = part_of(module), part_of(dep)
            if dep in graph and layer_of(b) > layer_of(a) and (a, b) not in UPWARD:
                bad.append(f"{module} ({LAYERS[layer_of(a)][0]}) imports {dep} ({LAYERS[layer_of(b)][0]})")
    return bad


def test_every_module_sits_in_one_declared_layer():
    parts = [p for _, ps in LAYERS for p in ps]
    assert len(parts) == len(set(parts)), "a part declared in two layers"
    assert {part_of(m) for m in GRAPH} == set(parts), "a part of the package in no layer (or a layer naming none)"
    assert all(layer_of(b) > layer_of(a) for a, b in UPWARD)


def test_imports_go_down_the_declared_layers():
    assert not upward_imports(GRAPH)
    # the rule would see one: the runs importing a study, and a network importing a limit
    bad = upward_imports({**GRAPH, "deeplimits.runs.store": {"deeplimits.studies.plan"},
                          "deeplimits.networks": {"deeplimits.limits.sde"}})
    assert sorted(bad) == ["deeplimits.networks (numerics) imports deeplimits.limits.sde (models)",
                           "deeplimits.runs.store (runs) imports deeplimits.studies.plan (studies)"]


def class_sizes(path: pathlib.Path) -> list[tuple[str, int, int]]:
    """``(name, lines, methods)`` of every class of ``path`` (its docstring counted)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            methods = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in node.body)
            out.append((node.name, node.end_lineno - node.lineno + 1, methods))
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG.parent)))
def test_class_sizes(path):
    big = [f"{name} ({n} lines, {m} methods)" for name, n, m in class_sizes(path)
           if n > MAX_CLASS_LINES or m > MAX_CLASS_METHODS]
    assert not big, f"classes over {MAX_CLASS_LINES} lines or {MAX_CLASS_METHODS} methods: {big}"


def test_the_class_size_rule_sees_a_big_class(tmp_path):
    body = "".join(f"    def m{i}(self):\n        return {i}\n" for i in range(MAX_CLASS_METHODS + 1))
    (tmp_path / "big.py").write_text("class Big:\n" + body)
    assert class_sizes(tmp_path / "big.py") == [("Big", 2 * MAX_CLASS_METHODS + 3, MAX_CLASS_METHODS + 1)]


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


#: the most parameters of a function (issue 41: groups of settings, deeplimits.studies.settings, in place of
#: wide signatures); the command line's parser, which lists its flags, is exempt
MAX_PARAMETERS = 12
WIDE_EXEMPT = {"deeplimits/cli/parser.py"}


def parameter_count(node) -> int:
    """The parameters of a function, ``self``/``cls`` left out, ``*args`` and ``**kwargs`` one each."""
    a = node.args
    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    first = (a.posonlyargs + a.args)[:1]
    return n - bool(first and first[0].arg in ("self", "cls"))


def wide_functions(path: pathlib.Path) -> list[str]:
    """``name (count)`` of the functions of ``path`` over :data:`MAX_PARAMETERS` parameters."""
    return [f"{node.name} ({parameter_count(node)})" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and parameter_count(node) > MAX_PARAMETERS]


@pytest.mark.parametrize("path", [p for p in MODULES if str(p.relative_to(PKG.parent)) not in WIDE_EXEMPT],
                         ids=lambda p: str(p.relative_to(PKG.parent)))
def test_no_function_takes_more_than_twelve_parameters(path):
    wide = wide_functions(path)
    assert not wide, f"functions over {MAX_PARAMETERS} parameters (group them: deeplimits.studies.settings): {wide}"


def test_the_parameter_rule_counts_every_kind(tmp_path):
    (tmp_path / "wide.py").write_text("class C:\n    def m(self, a, /, b, *c, d, **e):\n        pass\n"
                                      "def f(" + ", ".join(f"a{i}" for i in range(MAX_PARAMETERS)) + ", *, z):\n"
                                      "    pass\n")
    assert wide_functions(tmp_path / "wide.py") == [f"f ({MAX_PARAMETERS + 1})"]
    tree = ast.parse((tmp_path / "wide.py").read_text())
    assert parameter_count(next(n for n in ast.walk(tree) if getattr(n, "name", "") == "m")) == 5


# -- every default the help prints is read from the code (issue 22) ---------------------------------

#: "default ..." clauses of the help that state a rule, not a value (nothing to read from the code)
RULES = {
    "default: the library's, the CPU": "the device the library picks when none is given",
    "default: shared for tanh, per-layer for relu": "plan_scaling's rule for delta",
    "default: constant with a shared delta, normal per layer": "plan_scaling's rule for delta_init",
    "default --no-bias: the published h + alpha sigma(W h)": "the propagation studies' rule for --arch inside",
    "default: every configuration of a beta that fits in memory": "plan_training's chunk rule",
    "default: the preset's": "the value of the preset given",
    "default: all in one task per case": "plan_trained_limit's chunk rule",
    "default: the full batch": "plan_trained_limit: gradient descent unless a batch size is given",
    "default: the driver's": "the smooth driver's own length scale",
    "default: one run": "without --budget, one run of the draws given (docs/schemes.md, 'A run sized to decide')",
    "default: --tables, every table an independent run; smaller: the tables share the pool's error, in a shorter run":
        "calibrate's pool rule (pool_factor = tables)",
    "default: only the presets that say so": "plan_phase's corrected is off unless a preset sets it",
    "default: the built-in ones": "the law study's test functions when none is given (deeplimits.studies.law.phis)",
}


def help_texts() -> dict:
    """``{(command, dest): text}``: every command's description and each flag's help as
    ``--help`` prints them (argparse's own ``%(default)s`` expanded), on one line."""
    from deeplimits.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    out = {}
    for name, p in sub.choices.items():
        out[(name, "<description>")] = " ".join((p.description or "").split())
        formatter = p._get_formatter()
        for a in p._actions:
            if a.help:
                out[(name, a.dest)] = " ".join(formatter._expand_help(a).split())
    return out


def default_clauses(text: str) -> list[str]:
    """Each ``default ...`` of a help text: from the word to the parenthesis that closes around
    it, or to the end (``(in [0.05, 100]; default 0.1)`` -> ``default 0.1``)."""
    out = []
    for m in re.finditer(r"\bdefault\b", text, flags=re.I):
        depth, end = 0, len(text)
        for i in range(m.end(), len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth < 0:
                end = i
                break
        out.append(text[m.start():end])
    return out


class Sources:
    """The code's single sources of the defaults the help prints, each replaced by a sentinel
    (numbers, names, lists of them; booleans flipped; a default preset by a renamed copy)."""

    def __init__(self, monkeypatch):
        self.mp, self.n, self.sentinels = monkeypatch, 0, {}  # sentinel text -> the value it replaced

    def value(self, v):
        if isinstance(v, bool):
            return not v
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, (int, float, str)):
            self.n += 1
            s = {int: 70000 + self.n, float: 80000.5 + self.n, str: f"zz{self.n}q"}[type(v)]
            self.sentinels[f"{s:g}" if isinstance(s, float) else str(s)] = v
            return s
        return v

    def mapping(self, d: dict):
        for k, v in list(d.items()):
            if isinstance(v, dict):
                self.mapping(v)
            elif isinstance(v, tuple):
                for x in v:
                    if isinstance(x, dict):
                        self.mapping(x)
            else:
                self.mp.setitem(d, k, self.value(v))

    def perturb_all(self):
        from deeplimits import _names, options
        from deeplimits.cli import execution
        from deeplimits.regimes import REGISTRY
        from deeplimits.studies import presets as P
        from deeplimits.studies.convergence import presets as CP
        from deeplimits.studies.propagation import presets as PP
        from deeplimits.studies.scaling import presets as SP
        from deeplimits.studies.scheme_order import presets as OP
        from deeplimits.studies.training import presets as TP

        for d in (P.WEIGHTS_DEFAULTS, CP.DEFAULTS, CP.STUDY_OPTIONS, PP.DEFAULTS, PP.STABILITY_PRESETS,
                  PP.PHASE_PRESETS, TP.DEFAULTS, TP.CONV_DEFAULTS, TP.TRAIN_PRESETS, SP.DEFAULTS, SP.SCALING_PRESETS,
                  OP.DEFAULTS):
            self.mapping(d)
        from deeplimits.studies.trained_limit import presets as T

        for d in (T.DEFAULTS, T.PRESETS):
            self.mapping(d)
        self.mp.setitem(T.PRESETS, f"zz-{T.DEFAULT_PRESET}", copy.deepcopy(T.PRESETS[T.DEFAULT_PRESET]))
        self.mp.setattr(T, "DEFAULT_PRESET", f"zz-{T.DEFAULT_PRESET}")
        from deeplimits.studies.transfer import presets as TF

        for d in (TF.DEFAULTS, TF.PRESETS):
            self.mapping(d)
        self.mp.setitem(TF.PRESETS, f"zz-{TF.DEFAULT_PRESET}", copy.deepcopy(TF.PRESETS[TF.DEFAULT_PRESET]))
        self.mp.setattr(TF, "DEFAULT_PRESET", f"zz-{TF.DEFAULT_PRESET}")
        from deeplimits.studies.shapes import presets as SH

        for d in (SH.DEFAULTS, SH.PRESETS):
            self.mapping(d)
        self.mp.setitem(SH.PRESETS, f"zz-{SH.DEFAULT_PRESET}", copy.deepcopy(SH.PRESETS[SH.DEFAULT_PRESET]))
        self.mp.setattr(SH, "DEFAULT_PRESET", f"zz-{SH.DEFAULT_PRESET}")
        from deeplimits.studies import equivalence
        from deeplimits.studies.law import presets as W

        for d in (W.DEFAULTS, W.PRESETS, W.FIG2):
            self.mapping(d)
        for module in (W, equivalence):  # the margins of agrees
            self.mp.setattr(module, "MARGIN", self.value(module.MARGIN))
        self.mp.setitem(W.PRESETS, f"zz-{W.DEFAULT_PRESET}", copy.deepcopy(W.PRESETS[W.DEFAULT_PRESET]))
        self.mp.setattr(W, "DEFAULT_PRESET", f"zz-{W.DEFAULT_PRESET}")
        for cmd, name in PP.DEFAULT_PRESET.items():  # a copy of it under another name
            presets = {"stability": PP.STABILITY_PRESETS, "phase": PP.PHASE_PRESETS}[cmd]
            self.mp.setitem(presets, f"zz-{name}", copy.deepcopy(presets[name]))
            self.mp.setitem(PP.DEFAULT_PRESET, cmd, f"zz-{name}")
        self.mp.setitem(SP.SCALING_PRESETS, f"zz-{SP.DEFAULT_PRESET}", copy.deepcopy(SP.SCALING_PRESETS[SP.DEFAULT_PRESET]))
        self.mp.setattr(SP, "DEFAULT_PRESET", f"zz-{SP.DEFAULT_PRESET}")
        for module, names in ((CP, ("REFERENCE_REFINEMENT", "MAX_CHUNK")), (PP, ("TASK_BYTES",)), (P, ("CONV_GRID",)),
                              (execution, ("RUNS",)),
                              (_names, ("DEFAULT_ACTIVATION", "RES3_ACTIVATION", "INSIDE_ACTIVATION"))):
            for name in names:
                self.mp.setattr(module, name, self.value(getattr(module, name)))
        opts = {id(o): o for r in REGISTRY.values() for o in r.options}
        opts.update({id(o): o for o in vars(options).values() if isinstance(o, options.Option)})
        for o in opts.values():  # frozen: the declaration's own attribute
            self.mp.setitem(o.__dict__, "default", self.value(o.default))
        for r in REGISTRY.values():
            self.mapping(r.defaults)
            self.mp.setattr(type(r), "architectures", tuple(reversed(r.architectures)))


def copied_defaults(before: dict, after: dict, sentinels: dict) -> list[str]:
    """The ``default ...`` clauses of ``before`` (help texts) that do not follow their sources
    into ``after`` (the texts with every source replaced), or that do not show the source's value."""
    from deeplimits.cli.values import fmt

    bad = []
    for key, text in before.items():
        old, new = default_clauses(text), default_clauses(after.get(key, ""))
        if len(old) != len(new):
            bad.append(f"{key}: {len(old)} default clauses, {len(new)} once the sources change")
            continue
        for a, b in zip(old, new):
            if a in RULES:
                continue
            if a == b:
                bad.append(f"{key}: {a!r} is not read from the code (it stays when its source changes)")
            shown = [s for s in sentinels if re.search(rf"(?<![\w.]){re.escape(s)}(?![\w]|\.\d)", b)]
            bad += [f"{key}: {a!r} does not show {fmt(sentinels[s])!r}, its source's value" for s in shown
                    if fmt(sentinels[s]) not in a]
    return bad


@pytest.mark.slow
def test_every_default_the_help_prints_is_read_from_the_code(monkeypatch):
    before = help_texts()
    sources = Sources(monkeypatch)
    sources.perturb_all()
    after = help_texts()
    clauses = [c for t in before.values() for c in default_clauses(t)]
    assert len(clauses) > 80 and set(RULES) <= set(clauses)  # every rule listed is still in the help
    assert not copied_defaults(before, after, sources.sentinels)


def test_a_default_copied_into_the_help_is_caught():
    before = {("x", "a"): "width (default 16)", ("x", "b"): "scale (in (0, 1); default 0.1)"}
    after = {("x", "a"): "width (default 16)", ("x", "b"): "scale (in (0, 1); default 80001.5)"}
    assert copied_defaults(before, after, {"80001.5": 0.1}) == [
        "('x', 'a'): 'default 16' is not read from the code (it stays when its source changes)"]
    assert copied_defaults(before, {**after, ("x", "a"): "width (default 70002)"}, {"80001.5": 0.2, "70002": 16}) == [
        "('x', 'b'): 'default 0.1' does not show '0.2', its source's value"]


# -- names only at the edge: a study asks the block and the driver, never their names -----------------

#: where the name of a built-in block or driver may be switched on: the blocks' and the drivers' own
#: modules, and the command line, which turns names into objects
NAMES_AT_HOME = ("deeplimits/blocks/residual.py", "deeplimits/paths/", "deeplimits/cli/")


def _named(node, names) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in names
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(_named(e, names) for e in node.elts)


def named_switches(path: pathlib.Path, names) -> list[str]:
    """The places of ``path`` that switch on one of ``names`` written as a literal: a comparison
    (``==``, ``!=``, ``in``, ``not in``), a subscript (``TABLE['res-1']``) or a ``match`` case."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        hit = (isinstance(node, ast.Compare) and any(_named(x, names) for x in (node.left, *node.comparators))
               or isinstance(node, ast.Subscript) and _named(node.slice, names)
               or isinstance(node, ast.MatchValue) and _named(node.value, names))
        if hit:
            out.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {ast.unparse(node)[:80]}")
    return out


def test_no_block_or_driver_name_is_switched_on_outside_its_own_module():
    from deeplimits._names import ARCHITECTURES, DRIVERS

    names = set(ARCHITECTURES) | set(DRIVERS)
    hits = [h for p in MODULES if not str(p.relative_to(PKG.parent)).startswith(NAMES_AT_HOME)
            for h in named_switches(p, names)]
    assert not hits, f"{len(hits)} switches on a block's or a driver's name outside its own module: {hits}"


def test_the_name_rule_sees_every_kind_of_switch(tmp_path, monkeypatch):
    src = ("def f(arch, law, t):\n    a = arch == 'res-1'\n    b = law in ('x', 'uniform')\n    c = t['inside']\n"
           "    match law:\n        case 'smooth':\n            pass\n    return arch == 'mine', t['x']\n")
    (tmp_path / "deeplimits").mkdir()
    path = tmp_path / "deeplimits" / "m.py"
    path.write_text(src)
    import sys

    monkeypatch.setattr(sys.modules[__name__], "PKG", tmp_path / "deeplimits")
    hits = named_switches(path, {"res-1", "uniform", "inside", "smooth"})
    assert [h.split(":")[1] for h in hits] == ["2", "3", "4", "6"]


# -- one study layout: what studies share lives in studies/_shared, not in a sibling's private names ----

def _study(module: str) -> str | None:
    """The study package of ``module`` (``deeplimits.studies.law.fit`` -> ``law``), ``None`` outside one."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "studies" and (PKG / "studies" / parts[2]).is_dir() and parts[2] != "_shared":
        return parts[2]
    return None


def private_sibling_imports(paths) -> list[str]:
    """``importer imports module.name`` for each name a study imports from ANOTHER study package
    that is private (an underscore name, or a name of an underscore module)."""
    bad = []
    for path in paths:
        me = name_of(path)
        package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package.split(".")
            mod = (".".join(base[:len(base) - node.level + 1]) + (f".{node.module}" if node.module else "")
                   if node.level else node.module or "")
            a, b = _study(me), _study(mod)
            if a is None or b is None or a == b:
                continue
            private = any(p.startswith("_") for p in mod.split(".")[3:])
            bad += [f"{me} imports {mod}.{al.name}" for al in node.names if private or al.name.startswith("_")]
    return bad


def test_no_study_imports_a_private_name_of_a_sibling_study():
    assert not private_sibling_imports(p for p in MODULES if _study(name_of(p)))


def test_the_sibling_rule_sees_a_private_import(tmp_path, monkeypatch):
    import sys

    fake = tmp_path / "deeplimits" / "studies" / "law" / "plots.py"
    fake.parent.mkdir(parents=True)
    (tmp_path / "deeplimits" / "studies" / "scaling").mkdir()
    fake.write_text("from ..scaling.result import _median, family_exponents\nfrom .._shared.stats import median\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", tmp_path / "deeplimits")
    assert private_sibling_imports([fake]) == ["deeplimits.studies.law.plots imports "
                                               "deeplimits.studies.scaling.result._median"]


def test_history_leaves_the_code_and_the_docs():
    """No "(issue N)" in the package, the docs or the README: what the code does is said, not the
    issue it came from (the CHANGELOG keeps the history)."""
    pattern = re.compile(r"\bissues? \d+\b", re.IGNORECASE)
    root = PKG.parent
    files = [*MODULES, *(root / "docs").rglob("*.md"), *(root / "docs").rglob("*.py"), root / "README.md"]
    hits = [f"{p.relative_to(root)}:{i}" for p in files for i, line in enumerate(p.read_text().splitlines(), 1)
            if pattern.search(line) and "numpy issue" not in line]
    assert not hits, f"history in the code or the docs: {hits}"


# -- one study layout: every study package has the same parts, every result holds its plan -------------

#: the parts of a study package (docs/adding-a-study.md): a part may be tiny, its name is the same everywhere
STUDY_PARTS = ("study", "result", "report", "plots", "memory", "presets")


def study_packages(root: pathlib.Path) -> list[str]:
    """The study packages under ``root/studies`` (every sub-package but the shared one)."""
    return sorted(p.name for p in (root / "studies").iterdir()
                  if p.is_dir() and not p.name.startswith("_") and (p / "__init__.py").exists())


def missing_parts(root: pathlib.Path) -> list[str]:
    """``'studies/<package>: no <part>.py'`` for each part a study package lacks."""
    return [f"studies/{pkg}: no {part}.py" for pkg in study_packages(root) for part in STUDY_PARTS
            if not (root / "studies" / pkg / f"{part}.py").is_file()]


def test_every_study_package_has_the_same_parts():
    assert len(study_packages(PKG)) >= 9
    assert not missing_parts(PKG)


def test_the_parts_rule_sees_a_missing_part(tmp_path):
    pkg = tmp_path / "studies" / "growth"
    pkg.mkdir(parents=True)
    (tmp_path / "studies" / "_shared").mkdir()
    for part in ("__init__",) + STUDY_PARTS:
        if part != "report":
            (pkg / f"{part}.py").write_text("")
    assert study_packages(tmp_path) == ["growth"] and missing_parts(tmp_path) == ["studies/growth: no report.py"]


def test_every_result_holds_its_plan():
    """One result convention: what every registered plan's ``summarise`` returns is a
    :class:`~deeplimits.studies.result.PlanResult` holding the plan in ``plan`` (its ``spec`` the
    plan's spec, a property), never a spec dict of its own."""
    import dataclasses
    import typing

    from deeplimits import studies
    from deeplimits.studies.plan import _PLANS
    from deeplimits.studies.result import PlanResult

    studies._register_plans()  # every study's plan class registered
    assert len(_PLANS) >= 10
    for study, plan in _PLANS.items():
        result = typing.get_type_hints(plan.summarise)["return"]
        fields = {f.name for f in dataclasses.fields(result)}
        assert issubclass(result, PlanResult) and "plan" in fields and "spec" not in fields, (study, result)
        assert isinstance(inspect_property(result, "spec"), property), (study, result)


def inspect_property(cls, name: str):
    return next(vars(c)[name] for c in cls.__mro__ if name in vars(c))
