"""The package version (one place; ``deeplimits.__version__`` and the run store read it)."""

__version__ = "0.1.0"
