"""Task functions for the sweep tests, registered by name (importable from the tests folder, also by
Dask workers, which receive the functions pickled by reference)."""
import os

from deeplimits.runs import register_task


@register_task("test-flaky")
def flaky(params, seed):
    """Fails for task 1 while the flag file exists."""
    if params["i"] == 1 and os.path.exists(params["flag"]):
        raise RuntimeError("flag file present")
    return 10 * params["i"]


@register_task("test-draws")
def draws(params, seed):
    """A list of ``params['n']`` numbers fixed by the seed (a stand-in for a chunk of draws)."""
    import numpy as np

    return np.random.default_rng(seed).standard_normal(params["n"]).tolist()


@register_task("test-sleepy")
def sleepy(params, seed):
    """Sleeps ``params['s']`` seconds, returns the seed."""
    import time

    time.sleep(params["s"])
    return seed
