"""Task functions for the sweep tests (importable from the tests folder)."""
import os


def flaky(params, seed):
    """Fails for task 1 while the flag file exists."""
    if params["i"] == 1 and os.path.exists(params["flag"]):
        raise RuntimeError("flag file present")
    return 10 * params["i"]
