"""Task functions for the sweep tests (importable from the tests folder)."""
import os


def flaky(params, seed):
    """Fails for task 1 while the flag file exists."""
    if params["i"] == 1 and os.path.exists(params["flag"]):
        raise RuntimeError("flag file present")
    return 10 * params["i"]


def draws(params, seed):
    """A list of ``params['n']`` numbers fixed by the seed (a stand-in for a chunk of draws)."""
    import numpy as np

    return np.random.default_rng(seed).standard_normal(params["n"]).tolist()


def sleepy(params, seed):
    """Sleeps ``params['s']`` seconds, returns the seed."""
    import time

    time.sleep(params["s"])
    return seed
