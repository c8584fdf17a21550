"""A script of the repository (a benchmark, a docs hook) loaded as a module by the tests that read
its functions: the scripts are not a package."""

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_script(relative: str):
    """The module of the script at ``relative`` (to the repository's root), executed once here."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
