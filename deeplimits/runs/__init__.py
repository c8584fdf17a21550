"""Sweeps: a grid of tasks registered by name, a resumable run store, local and Dask executors.

A task is a pure function of ``(params, seed)`` whose result is plain JSON; its seed comes from
the run's base seed and the task's place in the grid (:func:`deeplimits._random.chunk_seed`), so
the same command gives the same numbers whichever executor runs it. See docs/sweeps.md.
"""

from .executors import ExecutorError, SweepError, run_sweep
from .store import (SCHEMA, STORE_NAME, DamagedFileWarning, DamagedStoreError, RunStore, RunStoreError, checksum,
                    find_runs)
from .tasks import LEGACY_NAMES, Task, chunk_sizes, register_task, task_function, task_names
from .tidy import tidy_rows, write_csv

__all__ = ["tidy_rows", "write_csv", "Task", "RunStore", "RunStoreError", "DamagedStoreError", "DamagedFileWarning", "SweepError",
           "ExecutorError", "run_sweep", "find_runs", "register_task", "task_function", "task_names", "chunk_sizes",
           "checksum", "STORE_NAME", "SCHEMA", "LEGACY_NAMES"]
