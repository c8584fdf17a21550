"""Bad command lines and bad library calls, as a new user would type them (issue 10).

Every bad command line exits with status 2 (usage) or 1 (runtime) and exactly one line on
stderr, no traceback, nothing left on disk, in well under 10 s; every bad library call raises
a ValueError (or the named subclass) whose message names the parameter, before any work.

Most rows run in-process (``main(argv)``, fast); rows that could hang or use the network or a
pipe run as subprocesses with a hard ``timeout=``. Rows marked ``pending`` need the merged work
of the sibling branches (plan-time ``ResourceError``; Dask ``timeout``/``ExecutorError``):
flip :data:`NEEDS_MERGE` once they are in.
"""

import argparse
import os
import sqlite3
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import sweep_tasks  # noqa: F401 - registers the test task functions
import torch

import deeplimits as dl
from deeplimits import _validate as V
from deeplimits._executor import executor
from deeplimits.errors import ParameterError
from deeplimits.cli import main
from deeplimits.training import BatchedAdam, BatchedSGD

NEEDS_MERGE = False  # the executor checks and the Dask timeout are in run_sweep
# until then those rows would hang up to their time limit: marked, not run. The size refusals run.
pending = pytest.mark.xfail(NEEDS_MERGE, reason="needs the executor checks and Dask timeout in run_sweep",
                            strict=False, run=not NEEDS_MERGE)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = 10.0  # CPU seconds per bad command line (the size refusals included)
#: a hang guard only (no test compares wall time with a limit: a loaded machine stretches it); the
#: CPU time of the command is what is bounded
HANG = 300


def _children_cpu() -> float:
    """User and system CPU seconds of the finished child processes (``resource.getrusage``)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
SUB = "sub"  # run as a subprocess (hang-prone, pipes, schedulers)

C = ["convergence", "--regime", "sde", "--width", "2", "--depths", "4,8", "--draws", "2"]  # a tiny valid base
S = ["stability", "--width", "2", "--n-in", "2", "--depths", "2,4", "--betas", "0.5", "--draws", "2"]
SC = ["scaling", "--depths", "4,8", "--max-epochs", "1"]
TL = ["trained-limit", "--preset", "quick", "--depths", "2,4", "--reference", "8", "--epochs", "1"]
LW = ["law", "--preset", "quick", "--depths", "4,8", "--fine", "32", "--draws", "280"]
SH = ["shapes", "--preset", "quick"]
TR = ["train", "--depth", "4", "--width", "3", "--epochs", "1"]
TF = ["transfer", "--preset", "quick", "--depths", "2,4,8", "--lrs=-1,1", "--seeds", "2", "--width", "2", "--samples",
      "16", "--betas", "1", "--optimizer", "adam"]
TFC = ["transfer", "--preset", "conv-quick", "--depths", "2,4,8", "--lrs=-1,1", "--seeds", "2", "--width", "2",
       "--samples", "16", "--betas", "1", "--optimizer", "adam"]
P = ["phase", "--hursts", "0.6", "--betas", "0.5", "--width", "2", "--n-in", "2", "--depth", "4", "--draws", "1",
     "--inputs", "1"]

# (argv, exit status, text the line must contain[, SUB][, marks]); {RUN} is a stored run, {BAD} a damaged one,
# afile is a regular file and adir a directory in the working directory.
CLI = [
    # -- the command itself
    # (bare 'deeplimits' prints the help with the commands, exit 2: tests/test_cli.py)
    (["nosuch"], 2, "invalid choice"),
    (["--version=2"], 2, "ignored explicit argument"),
    (["--bogus"], 2, "required"),
    (["convergence", "--preset", "nope"], 2, "deeplimits convergence: unrecognized arguments: --preset nope"),
    # -- a user's objects (MODULE:NAME; tests/test_cli_user.py runs good ones)
    (["convergence", "--regime", "sde", "--block", "nosuchmodule_xyz:A"], 2, "--block nosuchmodule_xyz:A: cannot import"),
    (["convergence", "--regime", "sde", "--block", "res-1"], 2, "--block must be module:Name"),
    (["stability", "--block", "math:pi"], 2, "--block math:pi: not a deeplimits Block subclass"),
    (["phase", "--block", "math:nosuch"], 2, "module 'math' has no 'nosuch'"),
    (["train", "--block", "os:sep"], 2, "it holds no block"),
    (["law", "--block", "::"], 2, "--block must be module:Name"),
    (["law", "--phi", "math:pi"], 2, "--phi math:pi: not a function of the output"),
    (["transfer", "--block", "math:pi"], 2, "not a deeplimits Block subclass"),
    (["train", "--driver", "math:pi"], 2, "--driver math:pi: not a deeplimits Driver subclass"),
    (["law", "--law", "math:sqrt"], 2, "--law math:sqrt: not a deeplimits Driver subclass (it is the function sqrt)"),
    (["law", "--law", "math:pi"], 2, "--law math:pi: not a deeplimits Driver subclass (it is a float)"),
    (["order", "--scheme", "math:pi", "--problem", "linear-sde"], 2, "--scheme math:pi: not a scheme"),
    (["order", "--scheme", "euler-maruyama", "--problem", "math:pi"], 2, "--problem math:pi: not a deeplimits Problem"),
    (["convergence", "--regime", "ode", "--driver", "math:pi"], 2, "--driver math:pi: not a deeplimits Driver subclass"),
    (["convergence", "--regime", "sde", "--driver", "uniform"], 2, "--driver 'uniform' does not fit regime 'sde'"),
    (["transfer", "--model", "math:pi"], 2, "--model math:pi: not a module factory"),
    (["transfer", "--data", "math:pi"], 2, "--data math:pi: data must be tensors"),
    (["trained-limit", "--case", "math:pi"], 2, "--case math:pi: not a family"),
    (["scaling", "--block", "math:pi"], 2, "--block math:pi: not a deeplimits Block subclass"),
    # -- convergence: every flag
    (["convergence", "--regime"], 2, "expected one argument"),
    (["convergence", "--regime", "SDE"], 2, "invalid choice"),
    (["convergence", "--regime", "fbm", "--hurst", "nan"], 2, "--hurst"),
    (["convergence", "--regime", "fbm", "--hurst", "inf"], 2, "--hurst"),
    (["convergence", "--regime", "fbm", "--hurst", "0.3"], 2, "hurst must lie in (0.5, 1)"),
    (["convergence", "--regime", "fbm", "--hurst", "x"], 2, "--hurst"),
    (["convergence", "--hurst", "0.7"], 2, "--hurst needs --regime"),
    (["convergence", "--regime", "sde", "--width", "-1"], 2, "width"),
    (["convergence", "--regime", "sde", "--width", "2.5"], 2, "--width"),
    (["convergence", "--regime", "sde", "--width", "100000000000000000000"], 2, "--width"),
    (["convergence", "--regime", "sde", "--activation", "cube"], 2, "activation"),
    (["convergence", "--regime", "sde", "--activation", ""], 2, "activation"),
    (["convergence", "--regime", "ode", "--arch", "res-9"], 2, "invalid choice"),
    (["convergence", "--arch", "res-2"], 2, "--arch needs --regime"),
    (["convergence", "--corrected"], 2, "--corrected needs --regime fbm"),
    (["convergence", "--corrected=yes"], 2, "ignored explicit argument"),
    (["convergence", "--regime", "inside-ode", "--alpha", "1.5"], 2, "alpha"),
    (["convergence", "--regime", "inside-ode", "--alpha", "nan"], 2, "--alpha"),
    (["convergence", "--regime", "inside-ode", "--beta", "-0.5"], 2, "beta"),
    (["convergence", "--regime", "inside-ode", "--beta", "1e999"], 2, "--beta"),
    (["convergence", "--regime", "inside-ode", "--noise", "-1"], 2, "--noise must lie in [0.0, inf]"),
    (["convergence", "--regime", "inside-ode", "--noise", "nan"], 2, "--noise"),
    (["convergence", "--regime", "sde", "--noise", "1"], 2, "--noise applies only to --regime inside-ode"),
    (["convergence", "--regime", "inside-sde", "--sa", "0"], 2, "sa"),
    (["convergence", "--regime", "inside-sde", "--sa", "inf"], 2, "--sa"),
    (["convergence", "--regime", "inside-sde", "--sb", "-1"], 2, "sb"),
    (["convergence", "--regime", "sde", "--no-ito-correction"], 2, "--no-ito-correction applies only"),
    (["convergence", "--regime", "fbm", "--hurst", "0.7", "--no-correction"], 2,
     "--no-correction applies only to --regime rough"),
    (["convergence", "--regime", "rough", "--hurst", "0.3"], 2, "hurst must lie in (1/3, 0.5)"),
    (["convergence", "--regime", "rough", "--hurst", "0.5"], 2, "H = 1/2 is the Brownian case"),
    (["convergence", "--regime", "rough", "--width", "4", "--depths", "8,16", "--reference", "64"], 2,
     "reference must be at least 128 * max(depths) = 2048 for regime 'rough'"),
    (["convergence", "--regime", "ode", "--length-scale", "0"], 2, "--length-scale must lie in [0.05, 100.0]"),
    (["convergence", "--regime", "ode", "--length-scale", "nan"], 2, "--length-scale"),
    (["convergence", "--regime", "sde", "--length-scale", "0.2"], 2,
     "--length-scale applies only to --regime ode or inside-sde or inside-ode"),
    (["convergence", "--regime", "inside-sde", "--length-scale", "0.2"], 2, "not to 'inside-sde' without beta"),
    (["convergence", "--depths", "inf"], 2, "--depths", SUB),
    (["convergence", "--depths", "nan"], 2, "--depths"),
    (["convergence", "--depths", "1e999"], 2, "--depths"),
    (["convergence", "--depths", "4,inf"], 2, "--depths"),
    (["convergence", "--depths", "-4,8"], 2, "depths"),
    (["convergence", "--depths", "8,4"], 2, "depths"),
    (["convergence", "--depths", "4.5"], 2, "--depths"),
    (["convergence", "--depths", ","], 2, "--depths"),
    (["convergence", "--depths", "4:8"], 2, "--depths"),
    (["convergence", "--depths", "4:8:0"], 2, "--depths"),
    (["convergence", "--depths", "4:8:1000000000"], 2, "--depths"),
    (["convergence", "--depths", "1:1e999:3"], 2, "--depths"),
    (["convergence", "--depths", "100000000000000000000"], 2, "--depths"),
    (["convergence", "--regime", "sde", "--depths", "1099511627776"], 2, "", SUB),  # 2^40
    (["convergence", "--draws", "1e20"], 2, "--draws", SUB),
    (["convergence", "--regime", "sde", "--draws", "100000000000000000"], 2, "--draws", SUB),
    (["convergence", "--draws", "0"], 2, "--draws"),
    (["convergence", "--draws", "-5"], 2, "--draws"),
    (["convergence", "--draws", "ten"], 2, "--draws"),
    (["convergence", "--draws", "1e3"], 2, "--draws: expected an integer"),
    (["convergence", "--draws", "8.0"], 2, "--draws"),
    (["convergence", "--inputs", "0"], 2, "--inputs"),
    (["convergence", "--regime", "sde", "--inputs", "1000000000000"], 2, "--inputs", SUB),
    (["convergence", "--regime", "sde", "--depths", "4,8", "--reference", "12"], 2, "reference"),
    (["convergence", "--regime", "sde", "--reference", "nan"], 2, "--reference"),
    (["convergence", "--seed", "-1"], 2, "seed"),
    (["convergence", "--seed", "1.5"], 2, "--seed"),
    (["convergence", "--seed", "100000000000000000000"], 2, "--seed"),
    (["convergence", "--chunk", "0"], 2, "chunk"),
    (["convergence", "--dtype", "float16"], 2, "invalid choice"),
    # -- order (issue 29): every flag
    (["order", "--problem", "linear-sde"], 2, "--scheme is required"),
    (["order", "--scheme", "rk4", "--problem", "linear-sde"], 2, "--scheme must be one of"),
    (["order", "--scheme", "heun"], 2, "--problem is required"),
    (["order", "--calibrate", "--cases", "rk4/linear-sde"], 2, "--cases must be names of"),
    # issue 38: sizes refused before any work, naming a flag the command has
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--depths", "4,8", "--reference", "32",
      "--draws", "1000000000000"], 2, "makes too many chunks"),
    (["order", "--scheme", "euler-maruyama", "--problem", "sde-regime", "--width", "1000000"], 2, "(change --width)"),
    (["order", "--scheme", "milstein", "--problem", "sde-regime", "--width", "60"], 2, "(change --width)"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--reference", "1099511627776"], 2,
     "(change --reference)"),
    (["order", "--calibrate", "--tables", "0"], 2, "--tables"),
    (["order", "--calibrate", "--pool-factor", "0"], 2, "--pool-factor"),
    (["order", "--calibrate", "--budget", "300", "--budget-tables", "0"], 2, "--budget-tables must be an integer"),
    (["order", "--calibrate", "--budget-tables", "20"], 2, "--budget-tables applies only with --budget"),
    (["order", "--scheme", "heun", "--problem", "ou", "--budget-tables", "20"], 2, "applies only with --calibrate"),
    (["order", "--scheme", "heun", "--problem", "linear-sde", "--margin", "0"], 2, "--margin must be a number in (0, 1]"),
    (["order", "--scheme", "heun", "--problem", "linear-sde", "--budget", "-1"], 2, "--budget must be None"),
    (["order", "--calibrate", "--margin", "0.05"], 2, "--margin applies to one run"),
    (["convergence", "--regime", "sde", "--margin", "2"], 2, "--margin must be a number in (0, 1]"),
    (["convergence", "--regime", "sde", "--budget", "0"], 2, "--budget must be None"),
    (["law", "--margin", "0"], 2, "--margin must be a number in (0, 1]"),
    (["law", "--variance-decay", "0.1,0.5,2"], 2, "--variance-decay must be C or C,P (two numbers)"),
    (["law", "--variance-decay", "-3"], 2, "--variance-decay (-3, 0.5) makes the variance 1 + -3 L^-0.5 at most 0"),
    (["law", "--variance-decay", "0.1,9"], 2, "--variance-decay must lie in (0.0, 4.0] (its power p), got 9.0"),
    # issue 38: a mistyped output path is refused, not created (one missing directory is made, no more)
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--json", "typo/deeper/r.json"], 2,
     "directory"),
    (["train", "--activation", "os:system", "--depth", "4"], 2, "acts on the system"),
    (["scaling", "--arch", "conv", "--depths", "4,8", "--width", "4", "--epochs", "1000000000000"], 2,
     "too many layer passes per task"),
    (["train", "--activation", "math:sin", "--depth", "4"], 2, "must map a tensor elementwise"),
    (["order", "--calibrate", "--cases", "sde,"], 2, "expected comma-separated names"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--width", "2"], 2, "width applies only to problem 'sde-regime'"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--hurst", "0.7"], 2, "hurst must be given for problem 'linear-young'"),
    (["order", "--scheme", "modified-euler", "--problem", "linear-young", "--hurst", "0.3"], 2, "hurst must lie in"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--noise-kind", "scalar"], 2, "invalid choice"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--depths", "8,12"], 2, "--depths must be a power of two"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--draws", "0"], 2, "--draws"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--reference", "16"], 2, "--reference must be at least 2 * max(depths)"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--seed", "-1"], 2, "--seed"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--dtype", "float16"], 2, "invalid choice"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--device", "tpu"], 2, "--device"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--json", "/proc/nonexistent/r.json"], 2, "--json"),
    (["order", "--scheme", "euler-maruyama", "--problem", "linear-sde", "--out", "afile"], 2, "--out must be a directory"),
    (["order", "--calibrate", "--out", "/proc/nonexistent/run"], 2, "--out"),
    (C + ["--out", "afile"], 2, "--out must be a directory"),
    (C + ["--out", "afile/sub"], 2, "--out"),
    (C + ["--out", "/dev/null"], 2, "--out"),
    (C + ["--out", ""], 2, "--out"),
    (C + ["--out", "/proc/nonexistent/run"], 2, "--out"),
    (C + ["--workers", "0"], 2, "--workers"),
    (C + ["--workers", "-3"], 2, "--workers"),
    (C + ["--workers", "100000"], 2, "--workers"),
    (C + ["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], 2, "not both"),
    (C + ["--scheduler", "notanaddress"], 2, "--scheduler", SUB),
    (C + ["--scheduler", "tcp://127.0.0.1:0"], 2, "--scheduler"),
    (C + ["--scheduler", "tcp://127.0.0.1:99999"], 2, "--scheduler"),
    (C + ["--scheduler", ""], 2, "--scheduler"),
    (C + ["--scheduler", "tcp://127.0.0.1:1", "--timeout", "2"], 1, "127.0.0.1:1", SUB, pending),
    (C + ["--timeout", "5"], 2, "--timeout applies only with --workers or --scheduler"),
    (C + ["--workers", "1", "--timeout", "0"], 2, "--timeout"),
    (C + ["--workers", "1", "--timeout", "-1"], 2, "--timeout"),
    (C + ["--workers", "1", "--timeout", "nan"], 2, "--timeout"),
    (C + ["--workers", "1", "--timeout", "1e9"], 2, "--timeout"),
    (C + ["--json", "adir"], 2, "--json must be a file path"),
    (C + ["--json", "/dev/full"], 2, "--json", SUB),
    (C + ["--json", "afile/x.json"], 2, "--json"),
    (C + ["--json", ""], 2, "--json"),
    (C + ["--json", "/proc/nonexistent/x.json"], 2, "--json"),
    (C + ["--quiet=1"], 2, "ignored explicit argument"),
    (C + ["--device", "gpu"], 2, "--device"),
    (C + ["--device", "cuda:x"], 2, "device must be one of cpu, cuda"),
    # -- stability: every flag
    (["stability", "--preset", "huge"], 2, "invalid choice"),
    (["stability", "--bias"], 2, "applies only to"),
    (["stability", "--delta", "0"], 2, "delta"),
    (["stability", "--delta", "x"], 2, "--delta"),
    (["stability", "--arch", "res-4"], 2, "invalid choice"),
    (["stability", "--activation", "cube"], 2, "activation"),
    (["stability", "--activation", "leaky_relu:nan"], 2, "activation"),
    (["stability", "--width", "0"], 2, "--width"),
    (["stability", "--width", "1e20"], 2, "--width"),
    (["stability", "--n-in", "0"], 2, "--n-in"),
    (["stability", "--n-in", "x"], 2, "--n-in"),
    (["stability", "--driver", "brownian"], 2, "--driver must be one of"),
    (["stability", "--driver", "fractional"], 2, "--hurst must be given"),
    (["stability", "--driver", "fractional", "--hurst", "nan"], 2, "--hurst"),
    (["stability", "--driver", "fractional", "--hurst", "1"], 2, "hurst"),
    (["stability", "--hurst", "0.7"], 2, "--hurst applies only"),
    (["stability", "--driver", "smooth", "--length-scale", "0"], 2, "length"),
    (["stability", "--driver", "smooth", "--length-scale", "inf"], 2, "--length-scale"),
    (["stability", "--length-scale", "0.2"], 2, "--length-scale applies only"),
    (["stability", "--depths", "inf"], 2, "--depths"),
    (["stability", "--depths", "0,10"], 2, "depths"),
    (["stability", "--depths", "10:1000:1000000000"], 2, "--depths"),
    (["stability", "--depths", "1000000000000"], 2, "--depths", SUB),
    (["stability", "--width", "1000", "--depths", "20000"], 2, "", SUB),
    (["stability", "--betas", "0:1:1000000000"], 2, "--betas", SUB),
    (["stability", "--betas", "nan"], 2, "--betas"),
    (["stability", "--betas", "0.5,inf"], 2, "--betas"),
    (["stability", "--betas", "-1:1:3"], 2, "betas"),
    (["stability", "--betas", ""], 2, "--betas"),
    (["stability", "--draws", "0"], 2, "--draws"),
    (["stability", "--draws", "1e15"], 2, "--draws", SUB),
    (["stability", "--draws", "1000000000000000"], 2, "--draws", SUB),
    (["stability", "--inputs", "0"], 2, "--inputs"),
    (["stability", "--inputs", "100000000"], 2, "--inputs", SUB),
    (["stability", "--histograms=1"], 2, "ignored explicit argument"),
    (["stability", "--figures=yes"], 2, "ignored explicit argument"),
    (["stability", "--chunk", "0"], 2, "chunk"),
    (["stability", "--seed", "-2"], 2, "seed"),
    (["stability", "--dtype", "int64"], 2, "invalid choice"),
    (S + ["--out", "afile"], 2, "--out"),
    (S + ["--json", "adir"], 2, "--json"),
    (S + ["--json", "/dev/full"], 2, "--json"),
    (S + ["--json", "afile/x.json"], 2, "--json"),
    (S + ["--workers", "0"], 2, "--workers"),
    (S + ["--scheduler", "localhost"], 2, "--scheduler"),
    (S + ["--scheduler", "tcp://127.0.0.1:1", "--timeout", "2"], 1, "127.0.0.1:1", SUB, pending),
    (S + ["--timeout", "3"], 2, "--timeout"),
    (S + ["--quiet", "extra"], 2, "unrecognized"),
    (S + ["--device", ""], 2, "--device"),
    # -- phase: every flag
    (["phase", "--preset", "small"], 2, "invalid choice"),
    (["phase", "--figures=1"], 2, "ignored explicit argument"),
    # -- --figures/--no-figures of the commands that draw by default
    *[([cmd, "--no-figures=1"], 2, "ignored explicit argument") for cmd in
      ("convergence", "order", "train", "scaling", "trained-limit", "transfer", "law", "shapes")],
    (["weights", "a.npy", "--figures=no"], 2, "ignored explicit argument"),
    (["phase", "--bias"], 2, "applies only to"),
    (["phase", "--corrected"], 2, "corrected applies only to a block h + alpha V sigma"),
    (["phase", "--arch", "res"], 2, "invalid choice"),
    (["phase", "--activation", "nope"], 2, "activation"),
    (["phase", "--width", "-4"], 2, "--width"),
    (["phase", "--n-in", "0"], 2, "--n-in"),
    (["phase", "--hursts", "nan"], 2, "--hursts"),
    (["phase", "--hursts", "0.5,1.5"], 2, "hursts"),
    (["phase", "--hursts", "0.1:0.9:1000000"], 2, "--hursts"),
    (["phase", "--betas", "inf"], 2, "--betas"),
    (["phase", "--betas", "0:1:1000000000"], 2, "--betas"),
    (["phase", "--depth", "0"], 2, "--depth"),
    (["phase", "--depth", "1e9"], 2, "--depth", SUB),
    (["phase", "--depth", "1000000000"], 2, "--depth", SUB),
    (["phase", "--draws", "0"], 2, "--draws"),
    (["phase", "--inputs", "0"], 2, "--inputs"),
    (["phase", "--inputs", "100000"], 2, "--inputs", SUB),
    (["phase", "--seed", "x"], 2, "--seed"),
    (["phase", "--dtype", "double"], 2, "invalid choice"),
    (P + ["--out", "afile"], 2, "--out"),
    (P + ["--json", "adir"], 2, "--json"),
    (P + ["--json", "/dev/full"], 2, "--json"),
    (P + ["--workers", "0"], 2, "--workers"),
    (P + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (P + ["--timeout", "1"], 2, "--timeout"),
    (P + ["--quiet=yes"], 2, "ignored explicit argument"),
    (P + ["--device", "tpu"], 2, "--device"),
    # -- train: every flag
    (["train", "--preset", "huge"], 2, "invalid choice"),
    (["train", "--dataset", "imagenet"], 2, "--dataset must be one of"),
    (["train", "--dataset", "mnist"], 2, "--root is required"),
    (["train", "--dataset", "mnist", "--root", "adir"], 2, "train-images-idx3-ubyte"),
    (["train", "--dataset", "cifar10", "--root", "afile"], 2, "--root"),
    (["train", "--driver", "fbm"], 2, "--driver must be one of"),
    (["train", "--hursts", "0.7"], 2, "--hursts apply only to a driver with a Hurst index"),
    (["train", "--driver", "fractional"], 2, "--hursts must be given"),
    (["train", "--driver", "fractional", "--hursts", "1.5"], 2, "--hursts"),
    (["train", "--driver", "fractional", "--hursts", "nan"], 2, "--hursts"),
    (["train", "--length-scale", "0.2"], 2, "--length-scale applies only to a driver declaring it (smooth), not 'gaussian'"),
    (["train", "--driver", "smooth", "--length-scale", "-1"], 2, "--length-scale"),
    (["train", "--betas", "-1"], 2, "--betas"),
    (["train", "--betas", "0.5,0.5"], 2, "--betas must not repeat"),
    (["train", "--lrs", "0"], 2, "--lrs"),
    (["train", "--lrs", "inf"], 2, "--lrs"),
    (["train", "--seeds", "0"], 2, "--seeds"),
    (["train", "--arch", "res-9"], 2, "invalid choice"),
    (["train", "--activation", "cube"], 2, "activation"),
    (["train", "--bias=yes"], 2, "ignored explicit argument"),
    (["train", "--depth", "0"], 2, "--depth"),
    (["train", "--depth", "1000000000"], 2, "--depth", SUB),
    (["train", "--width", "-3"], 2, "--width"),
    (["train", "--epochs", "0"], 2, "--epochs"),
    (["train", "--batch-size", "0"], 2, "--batch-size"),
    (["train", "--optimizer", "lbfgs"], 2, "invalid choice"),
    (["train", "--lr-decay-halfway=no"], 2, "ignored explicit argument"),
    (["train", "--stop-loss", "-1"], 2, "--stop-loss"),
    (["train", "--chunk", "0"], 2, "--chunk"),
    (["train", "--chunk", "100000000", "--depth", "1000"], 2, "--chunk"),
    (["train", "--save-weights=no"], 2, "ignored explicit argument"),
    (["train", "--seed", "-1"], 2, "--seed"),
    (["train", "--dtype", "half"], 2, "invalid choice"),
    (TR + ["--out", "afile"], 2, "--out"),
    (TR + ["--json", "adir"], 2, "--json"),
    (TR + ["--workers", "0"], 2, "--workers"),
    (TR + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (TR + ["--timeout", "1"], 2, "--timeout"),
    (TR + ["--quiet=yes"], 2, "ignored explicit argument"),
    (TR + ["--device", "tpu"], 2, "--device"),
    (["train", "--dataset", ""], 2, "--dataset must be one of"),
    (["train", "--root", "adir"], 2, "--root applies only to the data sets read from files"),
    (["train", "--preset", "quick", "--root", "adir"], 2, "--root applies only"),
    (["train", "--dataset", "cifar10", "--root", ""], 2, "--root must be a non-empty path"),
    (["train", "--driver", "fractional", "--hursts", "0.5,0.5"], 2, "--hursts must not repeat"),
    (["train", "--driver", "fractional", "--hursts", "x"], 2, "--hursts"),
    (["train", "--driver", "smooth", "--length-scale", "nan"], 2, "--length-scale"),
    (["train", "--driver", "smooth", "--length-scale", "0"], 2, "--length-scale"),
    (["train", "--betas", "nan"], 2, "--betas"),
    (["train", "--betas", ""], 2, "--betas"),
    (["train", "--lrs", "-1"], 2, "--lrs must lie in (0.0, inf]"),
    (["train", "--lrs", "0.1,0.1"], 2, "--lrs must not repeat"),
    (["train", "--lrs", ""], 2, "--lrs"),
    (["train", "--seeds", "1e3"], 2, "--seeds"),
    (["train", "--seeds", "2.5"], 2, "--seeds"),
    (["train", "--seeds", "-1"], 2, "--seeds"),
    (["train", "--activation", "leaky_relu:"], 2, "--activation 'leaky_relu:' ends in ':'"),
    (["train", "--activation", "tanh:"], 2, "--activation"),
    (["train", "--arch", "res-3", "--activation", "tanh"], 2, "--activation"),
    (["train", "--depth", "x"], 2, "--depth"),
    (["train", "--depth", "1e3"], 2, "--depth"),
    (["train", "--width", "1e3"], 2, "--width"),
    (["train", "--epochs", "-1"], 2, "--epochs"),
    (["train", "--epochs", "2.5"], 2, "--epochs"),
    (["train", "--batch-size", "x"], 2, "--batch-size"),
    (["train", "--batch-size", "-8"], 2, "--batch-size"),
    (["train", "--optimizer", ""], 2, "invalid choice"),
    (["train", "--stop-loss", "nan"], 2, "--stop-loss"),
    (["train", "--stop-loss", "x"], 2, "--stop-loss"),
    (["train", "--chunk", "-1"], 2, "--chunk"),
    (["train", "--chunk", "x"], 2, "--chunk"),
    (["train", "--seed", "9223372036854775807"], 2, "--seed must be an integer in [0, "),
    (["train", "--seed", "1e3"], 2, "--seed"),
    (["train", "--dtype", ""], 2, "invalid choice"),
    (["train", "--device", "meta"], 2, "--device"),
    (["train", "--device", "cuda:99"], 2, "--device"),
    (TR + ["--out", ""], 2, "--out"),
    (TR + ["--out", "/dev/null"], 2, "--out"),
    (TR + ["--json", "afile/x.json"], 2, "--json"),
    (TR + ["--json", "/dev/full"], 2, "--json"),
    (TR + ["--workers", "1", "--timeout", "0"], 2, "--timeout"),
    (TR + ["--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], 2, "not both"),
    # -- weights: every flag
    (["weights"], 2, "required"),
    (["weights", "nothere.npy"], 2, "no file or run directory"),
    (["weights", "afile"], 2, "must be a .npy or .pt file"),
    (["weights", "adir"], 2, "has no stored weights"),
    (["weights", "afile", "--beta", "nan"], 2, "--beta"),
    (["weights", "afile", "--grid", "0"], 2, "--grid must be an integer >= 1"),
    (["weights", "afile", "--grid", "x"], 2, "--grid"),
    (["weights", "afile", "--json", "adir"], 2, "--json"),
    (["weights", "afile", "--out", "afile"], 2, "--out"),
    (["weights", "{CPLX}"], 2, "must hold real numbers (float or integer), got an array of dtype complex128"),
    (["weights", "{CPLXPT}"], 2, "must hold real numbers (float or integer), got dtype torch.complex64"),
    (["weights", "{STRNPY}"], 2, "must hold real numbers"),
    (["weights", "{BOOL}"], 2, "must hold real numbers"),
    (["weights", "{EMPTY}"], 2, "is not a NumPy .npy file"),
    (["weights", "{OBJ}"], 2, "is not a NumPy .npy file"),
    (["weights", "{PICKLE}"], 2, "is not a PyTorch file of tensors"),
    (["weights", "{LIST}"], 2, "holds a list, not a tensor or a state_dict"),
    (["weights", "{NAN}"], 2, "must be finite"),
    (["weights", "{TWO}"], 2, "L >= 3"),
    (["weights", "{RUN}"], 2, "has no stored weights"),
    (["weights", "{OK}", "nothere.npy"], 2, "no file or run directory"),
    (["weights", "{OK}", "--beta", "1e300"], 2, "--beta must keep L^beta finite"),
    (["weights", "{OK}", "--beta", "inf"], 2, "--beta"),
    (["weights", "{OK}", "--beta", "x"], 2, "--beta"),
    (["weights", "{OK}", "--out", "afile/x"], 2, "--out"),
    (["weights", "{OK}", "--out", "/dev/full"], 2, "--out"),
    (["weights", "{OK}", "--json", "afile/x.json"], 2, "--json"),
    (["weights", "{OK}", "--json", "/dev/full"], 2, "--json"),
    (["weights", "{OK}", "--json"], 2, "expected one argument"),
    # -- scaling: every flag
    (["scaling", "--preset", "huge"], 2, "invalid choice"),
    (["scaling", "--arch", "dense"], 2, "invalid choice"),
    (["scaling", "--arch", "conv", "--epochs", "0"], 2, "--epochs"),
    (["scaling", "--arch", "conv", "--root", ""], 2, "--root"),
    (["scaling", "--arch", "conv", "--dataset", "synthetic"], 2, "--dataset"),
    (["scaling", "--arch", "conv", "--preset", "relu"], 2, "has no --arch conv variant"),
    (["scaling", "--arch", "conv", "--lr", "0.1,0.2"], 2, "one rate with --arch conv"),
    (["scaling", "--activation", "sin"], 2, "invalid choice"),
    (["scaling", "--dataset", "mnist"], 2, "invalid choice"),
    (["scaling", "--delta", "each"], 2, "invalid choice"),
    (["scaling", "--depths", "8"], 2, "at least two distinct depths"),
    (["scaling", "--depths", "0,8"], 2, "--depths"),
    (["scaling", "--width", "0"], 2, "--width"),
    (["scaling", "--seeds", "0"], 2, "--seeds"),
    (["scaling", "--lr", "0"], 2, "--lr"),
    (["scaling", "--lr", "0.01,0.01"], 2, "--lr must be a rate > 0 or a list of distinct rates"),
    (["scaling", "--lr", "0.01,-1"], 2, "--lr must lie in (0.0, inf]"),
    (["scaling", "--loss", "l1"], 2, "invalid choice"),
    (["scaling", "--loss", ""], 2, "invalid choice"),
    (["scaling", "--optimizer", "lbfgs"], 2, "invalid choice"),
    (["scaling", "--batch-size", "0"], 2, "--batch-size"),
    (["scaling", "--stop-loss", "0"], 2, "--stop-loss"),
    (["scaling", "--max-epochs", "0"], 2, "--max-epochs"),
    (["scaling", "--init-scale", "-1"], 2, "--init-scale"),
    (["scaling", "--init-method", "he"], 2, "invalid choice"),
    (["scaling", "--samples", "1"], 2, "--samples"),
    (["scaling", "--seed", "-1"], 2, "--seed"),
    (["scaling", "--dtype", "half"], 2, "invalid choice"),
    (SC + ["--out", "afile"], 2, "--out"),
    (SC + ["--json", "adir"], 2, "--json"),
    (SC + ["--workers", "0"], 2, "--workers"),
    (SC + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (SC + ["--timeout", "1"], 2, "--timeout"),
    (SC + ["--quiet=yes"], 2, "ignored explicit argument"),
    (SC + ["--ablation=yes"], 2, "ignored explicit argument"),
    (["scaling", "--ablation", "--lr", "0"], 2, "--lr"),
    (SC + ["--device", "tpu"], 2, "--device"),
    # -- trained-limit: every flag
    (["trained-limit", "--preset", "huge"], 2, "invalid choice"),
    (TL + ["--cases", "smooth"], 2, "--cases must be one of"),
    (TL + ["--cases", "linear,linear"], 2, "--cases must be a non-empty list of distinct cases"),
    (TL + ["--depths", "8"], 2, "at least two distinct depths"),
    (TL + ["--depths", "3,4"], 2, "--reference must be a multiple of every depth (3, 4"),
    (TL + ["--depths", "x"], 2, "--depths"),
    (TL + ["--reference", "4"], 2, "--reference must be an integer >= 5"),
    (TL + ["--reference", "x"], 2, "--reference"),
    (TL + ["--cases", "brownian", "--depths", "2,3", "--reference", "6"], 2, "--reference must be a power of two"),
    (TL + ["--width", "0"], 2, "--width"),
    (TL + ["--samples", "2"], 2, "--samples"),
    (TL + ["--seeds", "0"], 2, "--seeds"),
    (TL + ["--seeds", "2", "--chunk", "3"], 2, "--chunk"),
    (TL + ["--epochs", "0"], 2, "--epochs"),
    (TL + ["--lr", "0"], 2, "--lr"),
    (TL + ["--lr", "nan"], 2, "--lr"),
    (TL + ["--optimizer", "lbfgs"], 2, "invalid choice"),
    (TL + ["--batch-size", "0"], 2, "--batch-size"),
    (TL + ["--checkpoints", "0"], 2, "--checkpoints"),
    (TL + ["--length-scale", "-1"], 2, "--length-scale"),
    (TL + ["--seed", "-1"], 2, "--seed"),
    (TL + ["--dtype", "half"], 2, "invalid choice"),
    (TL + ["--out", "afile"], 2, "--out"),
    (TL + ["--json", "adir"], 2, "--json"),
    (TL + ["--workers", "0"], 2, "--workers"),
    (TL + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (TL + ["--timeout", "1"], 2, "--timeout"),
    (TL + ["--quiet=yes"], 2, "ignored explicit argument"),
    (TL + ["--device", "tpu"], 2, "--device"),
    # -- transfer: every flag
    (["transfer", "--preset", "atari"], 2, "invalid choice"),
    (["transfer", "--preset", "published"], 2, "--root"),
    (["transfer", "--preset", "published", "--root", "adir"], 2, "cifar-10-batches-py"),
    (TF + ["--root", "adir"], 2, "--root applies only to the convolutional presets"),
    (TF + ["--chunk", "1"], 2, "--chunk applies only to the convolutional presets"),
    (TFC + ["--limit", "16"], 2, "--limit applies only to the MLP presets"),
    (TFC + ["--chunk", "0"], 2, "--chunk"),
    (TFC + ["--chunk", "3"], 2, "--chunk"),
    (TFC + ["--root", "adir"], 2, "--root"),
    (TFC + ["--depths", "1,2"], 2, "--depths"),
    (TFC + ["--samples", "5000"], 2, "--samples"),
    (TF + ["--betas", "-0.5"], 2, "--betas"),
    (TF + ["--betas", "0.5,0.5"], 2, "--betas must be a non-empty list of distinct values"),
    (TF + ["--betas", "x"], 2, "--betas"),
    (TF + ["--optimizer", "lbfgs"], 2, "invalid choice"),
    (TF + ["--depths", "4,8"], 2, "at least three distinct depths"),
    (TF + ["--depths", "0,4,8"], 2, "--depths"),
    (TF + ["--lrs", "1"], 2, "--lrs must be a pair low,high"),
    (TF + ["--lrs=2,1"], 2, "--lrs must be a pair low,high"),
    (TF + ["--lrs=0,50"], 2, "--lrs"),
    (TF + ["--seeds", "1"], 2, "--seeds"),
    (TF + ["--width", "0"], 2, "--width"),
    (TF + ["--epochs", "0"], 2, "--epochs"),
    (TF + ["--samples", "2000"], 2, "--samples"),
    (TF + ["--batch-size", "0"], 2, "--batch-size"),
    (TF + ["--limit", "0"], 2, "--limit must be an integer"),
    (TF + ["--limit", "8"], 2, "--limit must be an integer"),
    (TF + ["--limit", "12"], 2, "--limit must be a multiple of every depth"),
    (TF + ["--limit", "24", "--betas", "0.5"], 2, "--limit must be a power of two"),
    (TF + ["--limit", "x"], 2, "--limit"),
    (TF + ["--limit", "16", "--betas", "0"], 2, "--limit needs a beta with a limit to test"),
    (TF + ["--seed", "-1"], 2, "--seed"),
    (TF + ["--dtype", "half"], 2, "invalid choice"),
    (TF + ["--out", "afile"], 2, "--out"),
    (TF + ["--json", "adir"], 2, "--json"),
    (TF + ["--workers", "0"], 2, "--workers"),
    (TF + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (TF + ["--timeout", "1"], 2, "--timeout"),
    (TF + ["--quiet=yes"], 2, "ignored explicit argument"),
    (TF + ["--device", "tpu"], 2, "--device"),
    (TF + ["--dry-run", "--seeds", "0"], 2, "--seeds"),
    # -- law: every flag
    (["law", "--preset", "huge"], 2, "invalid choice"),
    (LW + ["--law", "cauchy"], 2, "--law must be one of 'uniform', 'gaussian', 'rademacher'; got 'cauchy'"),
    (LW + ["--activation", "nosuchact"], 2, "--activation must be one of"),
    (LW + ["--depths", "3,4"], 2, "--depths"),
    (LW + ["--depths", "8"], 2, "--depths must hold at least two depths"),
    (LW + ["--fine", "16"], 2, "--fine must be at least 4 * max(depths)"),
    (LW + ["--fine", "48"], 2, "--fine"),
    (LW + ["--draws", "0"], 2, "--draws"),
    (LW + ["--width", "0"], 2, "--width"),
    (LW + ["--chunk", "0"], 2, "--chunk"),
    (LW + ["--samples", "1000"], 2, "--samples"),
    (LW + ["--mean", "nan"], 2, "--mean"),
    (LW + ["--variance", "0"], 2, "--variance"),
    (LW + ["--plain=yes"], 2, "ignored explicit argument"),
    (LW + ["--controls=yes"], 2, "ignored explicit argument"),
    (LW + ["--fig2", "--law", "uniform"], 2, "--law applies only without --fig2"),
    (["law", "--fig2", "--plain"], 2, "--plain applies only without --fig2"),
    (["law", "--fig2", "--draws", "4"], 2, "--draws"),
    (["law", "--fig2=yes"], 2, "ignored explicit argument"),
    (LW + ["--seed", "-1"], 2, "--seed"),
    (LW + ["--dtype", "half"], 2, "invalid choice"),
    (LW + ["--out", "afile"], 2, "--out"),
    (LW + ["--json", "adir"], 2, "--json"),
    (LW + ["--workers", "0"], 2, "--workers"),
    (LW + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (LW + ["--timeout", "1"], 2, "--timeout"),
    (LW + ["--quiet=yes"], 2, "ignored explicit argument"),
    (LW + ["--device", "tpu"], 2, "--device"),
    (LW + ["--dry-run=yes"], 2, "ignored explicit argument"),
    # -- shapes: every flag
    (["shapes", "--preset", "huge"], 2, "invalid choice"),
    (SH + ["--case", "cubic"], 2, "invalid choice"),
    (["trained-limit", "--case", "linear"], 2, "--case must be module:Name"),
    (SH + ["--depths", "0"], 2, "--depths must be an integer in [1, 4096]"),
    (SH + ["--depths", "8,8"], 2, "--depths must be a non-empty list of distinct sizes"),
    (SH + ["--widths", "5000"], 2, "--widths"),
    (SH + ["--dims", "x"], 2, "--dims"),
    (SH + ["--seeds", "0"], 2, "--seeds"),
    (SH + ["--chunk", "5"], 2, "--chunk"),
    (SH + ["--steps", "1"], 2, "--steps"),
    (SH + ["--lr", "nan"], 2, "--lr"),
    (SH + ["--lr", "0"], 2, "--lr"),
    (SH + ["--step", "15"], 2, "--step"),
    (SH + ["--fit-min", "1,2"], 2, "--fit-min"),
    (SH + ["--fit-min", "100,0,0"], 2, "--fit-min"),
    (SH + ["--depths", "4000,4096", "--widths", "4000,4096", "--dims", "4000,4096", "--fit-min", "0,0,0"], 2,
     "(change --depths, --widths, --dims)"),
    (SH + ["--seed", "-1"], 2, "--seed"),
    (SH + ["--dtype", "half"], 2, "invalid choice"),
    (SH + ["--out", "afile"], 2, "--out"),
    (SH + ["--json", "adir"], 2, "--json"),
    (SH + ["--workers", "0"], 2, "--workers"),
    (SH + ["--scheduler", "tcp://host:port"], 2, "--scheduler"),
    (SH + ["--timeout", "1"], 2, "--timeout"),
    (SH + ["--quiet=yes"], 2, "ignored explicit argument"),
    (SH + ["--device", "tpu"], 2, "--device"),
    (SH + ["--dry-run", "--seeds", "0"], 2, "--seeds"),
    (["scaling", "--preset", ""], 2, "invalid choice"),
    (["scaling", "--dataset", ""], 2, "invalid choice"),
    (["scaling", "--activation", ""], 2, "invalid choice"),
    (["scaling", "--delta", ""], 2, "invalid choice"),
    (["scaling", "--optimizer", "adamw"], 2, "invalid choice"),
    (["scaling", "--depths", "8,8"], 2, "--depths must hold at least two distinct depths"),
    (["scaling", "--depths", "x"], 2, "--depths"),
    (["scaling", "--depths", "4.5,8"], 2, "--depths"),
    (["scaling", "--width", "x"], 2, "--width"),
    (["scaling", "--width", "1e3"], 2, "--width"),
    (["scaling", "--seeds", "1e3"], 2, "--seeds"),
    (["scaling", "--seeds", "-1"], 2, "--seeds"),
    (["scaling", "--lr", "nan"], 2, "--lr"),
    (["scaling", "--lr", "-1"], 2, "--lr"),
    (["scaling", "--lr", "x"], 2, "--lr"),
    (["scaling", "--batch-size", "-2"], 2, "--batch-size"),
    (["scaling", "--batch-size", "x"], 2, "--batch-size"),
    (["scaling", "--stop-loss", "inf"], 2, "--stop-loss"),
    # --dry-run runs every check first: a refused plan is refused, nothing is left behind
    (C + ["--dry-run", "--draws", "0"], 2, "--draws"),
    (C + ["--dry-run=yes"], 2, "ignored explicit argument"),
    (["order", "--scheme", "euler-maruyama", "--problem", "sde-regime", "--width", "1000000", "--dry-run"], 2,
     "(change --width)"),
    (S + ["--dry-run", "--betas", "nan"], 2, "--betas"),
    (P + ["--dry-run", "--depth", "0"], 2, "--depth"),
    (TR + ["--dry-run", "--epochs", "1000000000000"], 2, "--epochs"),
    (["weights", "nothere.npy", "--dry-run"], 2, "no file or run directory"),
    (["weights", "afile", "--dry-run"], 2, "must be a .npy or .pt file"),
    (SC + ["--dry-run", "--width", "0"], 2, "--width"),
    (TL + ["--dry-run", "--seeds", "0"], 2, "--seeds"),
    (["runs", "show", "--dry-run"], 2, "give the run directory"),
    (["scaling", "--stop-loss", "-1"], 2, "--stop-loss"),
    (["scaling", "--max-epochs", "x"], 2, "--max-epochs"),
    (["scaling", "--max-epochs", "2.5"], 2, "--max-epochs"),
    (["scaling", "--init-scale", "nan"], 2, "--init-scale"),
    (["scaling", "--init-scale", "x"], 2, "--init-scale"),
    (["scaling", "--delta-init", "uniform"], 2, "--delta-init"),
    (["scaling", "--bias-init", "uniform"], 2, "--bias-init"),
    (["scaling", "--inputs", "ball"], 2, "--inputs"),
    (["scaling", "--batches", "random"], 2, "--batches"),
    (["scaling", "--angle-start", "2"], 2, "--angle-start"),
    (["scaling", "--angle-start", "0", "--dataset", "digits"], 2, "--angle-start"),
    (["scaling", "--stop-rule", "test"], 2, "--stop-rule"),
    (["scaling", "--batches", "published", "--samples", "30"], 2, "--batches"),
    (["scaling", "--arch", "conv", "--stop-rule", "running"], 2, "--stop-rule applies only to --arch inside"),
    (["scaling", "--inputs", "sphere", "--dataset", "digits"], 2, "--inputs"),
    (["scaling", "--arch", "conv", "--bias-init", "normal"], 2, "--bias-init applies only to --arch inside"),
    (["scaling", "--samples", "x"], 2, "--samples"),
    (["scaling", "--samples", "1e3"], 2, "--samples"),
    (["scaling", "--seed", "9223372036854775807"], 2, "--seed must be an integer in [0, "),
    (["scaling", "--seed", "x"], 2, "--seed"),
    (["scaling", "--dtype", ""], 2, "invalid choice"),
    (["scaling", "--device", "meta"], 2, "--device"),
    (["scaling", "--device", "cuda:99"], 2, "--device"),
    (SC + ["--out", ""], 2, "--out"),
    (SC + ["--out", "afile/sub"], 2, "--out"),
    (SC + ["--json", "afile/x.json"], 2, "--json"),
    (SC + ["--json", "/dev/full"], 2, "--json"),
    (SC + ["--workers", "1", "--timeout", "0"], 2, "--timeout"),
    # -- runs: every action and flag
    (["runs"], 2, "required"),
    (["runs", "delete"], 2, "invalid choice"),
    (["runs", "list", "--csv", "x.csv"], 2, "--csv applies only to runs export"),
    (["runs", "list", "--json", "x.json"], 2, "--json applies only"),
    (["runs", "show"], 2, "give the run directory"),
    (["runs", "show", "nothere"], 2, "no run store"),
    (["runs", "show", "afile"], 2, "run store"),
    (["runs", "show", "{RUN}", "--csv", "x.csv"], 2, "--csv applies only"),
    (["runs", "show", "{BAD}"], (1, 2), "damaged", SUB),
    (["runs", "export", "{RUN}"], 2, "give --csv PATH, --records-csv PATH and/or --json PATH"),
    (["runs", "export", "{RUN}", "--csv", "adir"], 2, "--csv"),
    (["runs", "list", "--records-csv", "x.csv"], 2, "--records-csv applies only to runs export"),
    (["runs", "list", "--code", "mymod:f"], 2, "--code applies only to runs show and runs export and runs plot"),
    (["runs", "show", "{RUN}", "--code", "os:system"], 2, "--code os:system: module 'os' acts on the system"),
    (["runs", "plot", "{RUN}", "--code", "nomodule"], 2, "--code must be module:Name"),
    (["runs", "export", "{RUN}", "--csv", "x.csv", "--code", "nosuchmodule_x:f"], 2, "cannot import module"),
    (["runs", "export", "{RUN}", "--records-csv", "adir"], 2, "--records-csv must be a file path"),
    (["runs", "export", "{RUN}", "--csv", "/dev/full"], 2, "--csv"),
    (["runs", "export", "{RUN}", "--json", "afile/x.json"], 2, "--json"),
    (["runs", "export", "{RUN}", "--json", "/proc/nonexistent/x.json"], 2, "--json"),
    (["runs", "export", "nothere", "--csv", "x.csv"], 2, "no run store"),
    (["runs", "export", "{BAD}", "--json", "x.json"], (1, 2), "damaged"),
    (["runs", "plot"], 2, "give the run directory"),
    (["runs", "plot", "{RUN}", "--json", "adir"], 2, "--json"),
    (["runs", "plot", "{RUN}", "--json", "/dev/full"], 2, "--json"),
    (["runs", "plot", "{RUN}", "--csv", "x.csv"], 2, "--csv applies only"),
    (["runs", "plot", "{BAD}"], (1, 2), "damaged"),
    (["runs", "plot", "nothere"], 2, "no run store"),
]


def _ids(rows):
    return [" ".join(r[0])[:60] or "(nothing)" for r in rows]


def tree(root):
    """Every file and directory under ``root`` with its size and modification time."""
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            if n.endswith(("-wal", "-shm")):  # SQLite's companions while a reader has the store open
                continue
            p = os.path.join(d, n)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A finished tiny run and a damaged copy (its spec and a result are not JSON)."""
    base = tmp_path_factory.mktemp("stored")
    run = base / "run"
    assert main(C + ["--reference", "16", "--out", str(run), "--quiet"]) == 0
    bad = base / "bad"
    assert main(C + ["--reference", "16", "--out", str(bad), "--quiet"]) == 0
    with sqlite3.connect(bad / "run.sqlite") as db:
        db.execute("UPDATE meta SET value = '{not json' WHERE key = 'spec'")
        db.execute("UPDATE tasks SET result = '[1, 2' WHERE key = (SELECT MIN(key) FROM tasks)")
    db.close()
    return {"{RUN}": str(run), "{BAD}": str(bad), **_weight_files(base / "w")}


def _weight_files(d):
    """Weight files a user may pass to ``deeplimits weights`` by mistake (and one good one)."""
    import pickle

    import numpy as np

    d.mkdir()
    np.save(d / "cplx.npy", (np.arange(12.0) + 1j).reshape(4, 3))
    np.save(d / "str.npy", np.array(["a", "b", "c", "d"]))
    np.save(d / "bool.npy", np.ones((4, 3), bool))
    np.save(d / "obj.npy", np.array([{"a": 1}] * 4, dtype=object), allow_pickle=True)
    np.save(d / "nan.npy", np.full((4, 3), np.nan))
    np.save(d / "two.npy", np.ones((2, 3)))
    np.save(d / "ok.npy", np.random.default_rng(0).normal(size=(8, 3)))
    (d / "empty.npy").write_bytes(b"")
    (d / "pickle.pt").write_bytes(pickle.dumps({"a": object.__name__}, protocol=4))
    torch.save(torch.ones(4, 3, dtype=torch.complex64), d / "cplx.pt")
    torch.save([torch.ones(3)] * 4, d / "list.pt")
    names = {"CPLX": "cplx.npy", "STRNPY": "str.npy", "BOOL": "bool.npy", "OBJ": "obj.npy", "NAN": "nan.npy",
             "TWO": "two.npy", "OK": "ok.npy", "EMPTY": "empty.npy", "PICKLE": "pickle.pt", "CPLXPT": "cplx.pt",
             "LIST": "list.pt"}
    return {"{" + k + "}": str(d / v) for k, v in names.items()}


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("keep me\n")
    (tmp_path / "adir").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rows(rows):
    out = []
    for row in rows:
        argv, status, needle, *rest = row
        marks = [m for m in rest if not isinstance(m, str)]
        out.append(pytest.param(argv, status, needle, SUB in rest, marks=marks, id=" ".join(argv)[:70] or "-"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("argv,status,needle,sub", _rows(CLI))
def test_bad_command_line(argv, status, needle, sub, cwd, stored, capsys):
    argv = [stored.get(a, a) for a in argv]
    before, before_stored = tree(cwd), {k: tree(v) for k, v in stored.items()}
    if sub:  # CPU time of the child, not wall time: a loaded machine slows the clock, not the work
        env = {**os.environ, "PYTHONPATH": ROOT}
        cpu0 = _children_cpu()
        try:
            r = subprocess.run([sys.executable, "-m", "deeplimits", *argv], cwd=cwd, env=env, capture_output=True,
                               text=True, timeout=HANG)
        except subprocess.TimeoutExpired:
            pytest.fail(f"hung: no answer in {HANG} s")
        rc, err, cpu = r.returncode, r.stderr, _children_cpu() - cpu0
    else:
        cpu0 = time.process_time()
        rc = main(argv)
        err, cpu = capsys.readouterr().err, time.process_time() - cpu0
    assert rc in (status if isinstance(status, tuple) else (status,)), err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].strip() and err.endswith("\n"), err
    assert needle in lines[0]
    assert cpu < (LIMIT + 10 if sub else LIMIT)  # CPU seconds (the interpreter and torch start-up included)
    assert tree(cwd) == before, "left something behind"
    assert {k: tree(v) for k, v in stored.items()} == before_stored
    assert (cwd / "afile").read_text() == "keep me\n"


def test_table_covers_every_flag_of_every_command():
    from deeplimits.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    given = {(r[0][0], a.split("=")[0]) for r in CLI if r[0] for a in r[0] if a.startswith("--")}
    for name, p in sub.choices.items():
        for action in p._actions:
            flags = [o for o in action.option_strings if o not in ("-h", "--help")]
            if flags and action.help != argparse.SUPPRESS:  # hidden deprecated aliases: tests/test_draws_name.py
                assert any((name, f) in given for f in flags), f"{name} {flags[0]} has no bad command line"
    assert len(CLI) >= 100


def _sh(argv, **kw):
    return subprocess.run([sys.executable, "-m", "deeplimits", *argv], env={**os.environ, "PYTHONPATH": ROOT},
                          capture_output=True, text=True, timeout=1800, **kw)


@pytest.mark.slow
def test_broken_pipe_exits_quietly(stored, tmp_path):
    """``deeplimits runs show DIR | head -1``: stdout closed by the reader, no traceback, no
    message, exit status 141 (128 + SIGPIPE, what a shell reports for a tool killed by it)."""
    for argv in (["runs", "show", stored["{RUN}"]], ["runs", "list", os.path.dirname(stored["{RUN}"])]):
        r, w = os.pipe()
        os.close(r)  # the reader is gone before the first line: every write fails with EPIPE
        try:
            p = subprocess.run([sys.executable, "-m", "deeplimits", *argv], stdout=w, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": ROOT}, cwd=tmp_path, timeout=1800, text=True)
        finally:
            os.close(w)
        assert p.returncode == 141 and p.stderr == "", p.stderr
    sh = subprocess.run(["bash", "-c", f"{sys.executable} -m deeplimits runs show {stored['{RUN}']} | head -1; "
                                       f"echo status ${{PIPESTATUS[0]}}"],
                        env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True, timeout=1800)
    assert sh.stderr == "" and sh.stdout.startswith("run ") and sh.stdout.split()[-1] in ("0", "141")


def test_existing_json_file_is_not_damaged_by_a_refused_run(cwd):
    assert main(C + ["--depths", "3", "--json", "afile"]) == 2
    assert (cwd / "afile").read_text() == "keep me\n" and tree(cwd).keys() == {"afile", "adir"}


def test_internal_errors_are_one_line(monkeypatch, capsys, cwd):
    import deeplimits.cli as cli
    import deeplimits.cli.runs as cli_runs

    def boom(args):
        raise ZeroDivisionError("surprise\nsecond line")

    monkeypatch.setattr(cli_runs, "run_runs", boom)
    assert cli.main(["runs", "list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: ZeroDivisionError: surprise second line" in err
    assert "DEEPLIMITS_DEBUG=1" in err
    monkeypatch.setenv("DEEPLIMITS_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["runs", "list"])


def test_python_dash_m_deeplimits():
    r = _sh(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("deeplimits ")


def test_write_error_after_the_work_is_one_line(cwd, monkeypatch, capsys):
    """An output that fails after the probe (disk full mid-way): exit 1, one line."""
    import deeplimits.cli.outputs as cli_outputs

    def full(payload, out, json_path):
        raise OSError(28, "No space left on device", "result.json")

    monkeypatch.setattr(cli_outputs, "dump_json", full)
    assert main(C + ["--reference", "16", "--out", "o", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the disk is full (result.json)" in err and "finished tasks are kept" in err


# -- the library --------------------------------------------------------------------------------

def _tasks():
    from deeplimits.runs import Task

    return [Task("t0", "test-flaky", {"i": 0, "flag": "/nonexistent"}, 0)]


def _run_sweep(**kw):
    from deeplimits.runs import run_sweep

    return run_sweep(_tasks(), **kw)


PLAN = dict(regime="sde", width=2, depths=[4, 8], draws=2)

# (call, exception type, regex the message must match[, marks])
LIB = [
    (lambda: dl.fgn(0, 0.7), ValueError, "n must be"),
    (lambda: dl.fgn(8, float("nan")), ValueError, "hurst"),
    (lambda: dl.fgn(8, 1.0), ValueError, "hurst"),
    (lambda: dl.fgn(8, 0.7, (2, -1)), ValueError, "size"),
    (lambda: dl.fgn(8, 0.7, dtype=torch.int32), ValueError, "dtype"),
    (lambda: dl.fgn(10 ** 12, 0.7), V.ResourceError, "n"),
    (lambda: dl.fgn(1024, 0.7, (10 ** 9,)), V.ResourceError, "size"),
    (lambda: dl.pair("sdf", width=2), ValueError, "regime"),
    (lambda: dl.pair("sde", width=0), ValueError, "width"),
    (lambda: dl.pair("sde", width=2, activation="cube"), ValueError, "activation"),
    (lambda: dl.pair("ode", width=2, arch="res-7"), ValueError, "arch"),
    (lambda: dl.pair("fbm", width=2, hurst=float("inf")), ValueError, "hurst"),
    (lambda: dl.pair("inside-ode", width=2, beta=float("nan")), ValueError, "beta"),
    (lambda: dl.pair("inside-sde", width=2, sa=-1.0), ValueError, "sa"),
    # a misspelt parameter is said to be one, with what is taken (not "an unknown option" of the regime)
    (lambda: dl.strong_convergence("sde", widht=4), ParameterError,
     "widht is not a parameter of plan_convergence nor an option of regime 'sde' (did you mean width?): "
     "plan_convergence takes depths, draws, reference, inputs, driver, arch, activation, width,"),
    (lambda: dl.pair("sde", width=2, widht=4), ParameterError, "widht is not a parameter of pair nor an option of "
     "regime 'sde' (did you mean width?): pair takes width, activation, arch, driver; regime 'sde' accepts no options"),
    (lambda: dl.pair("fbm", hurst=2.0), ParameterError, "width must be given: the hidden width d, an integer >= 1 "
     "(the studies of regime 'fbm' use 8)"),
    (lambda: dl.strong_convergence("sde", width=2, depths=[3]), ValueError, "depths"),
    (lambda: dl.strong_convergence("sde", width=2, depths=[float("inf")]), ValueError, "depths"),
    (lambda: dl.strong_convergence("sde", width=2, draws=0), ValueError, "draws"),
    (lambda: dl.strong_convergence("sde", width=2, draws=2.5), ValueError, "draws"),
    (lambda: dl.strong_convergence("sde", width=2, seed=-1), ValueError, "seed"),
    (lambda: dl.plan_convergence(**{**PLAN, "inputs": 0}), ValueError, "inputs"),
    (lambda: dl.plan_convergence(**{**PLAN, "chunk": 0}), ValueError, "chunk"),
    (lambda: dl.plan_convergence(**{**PLAN, "reference": 12}), ValueError, "reference"),
    (lambda: dl.plan_convergence(**{**PLAN, "dtype": torch.float16}), ValueError, "dtype"),
    (lambda: dl.plan_convergence(**{**PLAN, "draws": 10 ** 20}), V.ResourceError, "draws"),
    (lambda: dl.plan_convergence(**{**PLAN, "depths": [2 ** 40]}), V.ResourceError, "reference"),
    (lambda: dl.run_plan(dl.plan_convergence(**PLAN), workers=0), ValueError, "workers", pending),
    (lambda: dl.run_plan(dl.plan_convergence(**PLAN), scheduler="nowhere"), ValueError, "scheduler", pending),
    (lambda: dl.stability(width=0), ValueError, "width"),
    (lambda: dl.stability(depths=[]), ValueError, "depths"),
    (lambda: dl.stability(depths=[10, 10]), ValueError, "depths"),
    (lambda: dl.stability(betas=[float("nan")]), ValueError, "betas"),
    (lambda: dl.stability(betas=[-1.0]), ValueError, "betas"),
    (lambda: dl.stability(driver="brownian"), ValueError, "driver"),
    (lambda: dl.stability(draws=0), ValueError, "draws"),
    (lambda: dl.stability(histograms="yes"), ValueError, "histograms"),
    (lambda: dl.stability(draws=10 ** 15), V.ResourceError, "draws"),
    (lambda: dl.stability(depths=[10 ** 12]), V.ResourceError, "depth"),
    (lambda: dl.stability(width=1000, depths=[20000]), V.ResourceError, ""),
    (lambda: dl.stability(width=2, n_in=2, depths=[2], draws=2, workers=0), ValueError, "workers", pending),
    (lambda: dl.stability(width=2, n_in=2, depths=[2], draws=2, scheduler="x"), ValueError, "scheduler",
     pending),
    (lambda: dl.phase_diagram(hursts=[0.0]), ValueError, "hursts"),
    (lambda: dl.phase_diagram(hursts=[float("nan")]), ValueError, "hursts"),
    (lambda: dl.phase_diagram(betas=[]), ValueError, "betas"),
    (lambda: dl.phase_diagram(depth=0), ValueError, "depth"),
    (lambda: dl.phase_diagram(inputs=-1), ValueError, "inputs"),
    (lambda: dl.phase_diagram(depth=10 ** 9), V.ResourceError, "depth"),
    (lambda: dl.phase_diagram(inputs=100000), V.ResourceError, "inputs"),
    (lambda: dl.phase_diagram(hursts=[0.6], betas=[0.5], width=2, n_in=2, depth=4, draws=1, inputs=1,
                              workers=0), ValueError, "workers", pending),
    (lambda: _run_sweep(workers=0), ValueError, "workers", pending),
    (lambda: _run_sweep(workers=2.5), ValueError, "workers", pending),
    (lambda: _run_sweep(scheduler="notanaddress"), ValueError, "scheduler", pending),
    (lambda: _run_sweep(workers=1, scheduler="tcp://127.0.0.1:1"), ValueError, "not both", pending),
    (lambda: executor(0, None), ValueError, "workers"),
    (lambda: executor(None, "tcp://h:0"), ValueError, "scheduler"),
    (lambda: executor(None, "tcp://h:1", float("nan")), ValueError, "timeout"),
    (lambda: V.writable_file("json", "/dev/full"), ValueError, "json"),
    (lambda: V.writable_file("json", "/"), ValueError, "json"),
    (lambda: V.writable_dir("out", "/dev/null"), ValueError, "out"),
    # the training API, the diagnostics and the data loaders beyond their parameters (methods, studies)
    (lambda: _net().load_sample(5), ValueError, "samples must be a dict"),
    (lambda: _net().load_sample({"V": 5}), ValueError, "samples['V'] must be a DriverSample"),
    (lambda: _net().reset_parameters("x"), ValueError, "generator"),
    (lambda: _net().config(5), ValueError, "c must be an integer in [0, 0]"),
    (lambda: _net()(torch.ones(3, 2, dtype=torch.int64)), ValueError, "x must have dtype"),
    (lambda: _net()(torch.ones(3, 2, dtype=torch.float64)), ValueError, "x must have dtype torch.float32"),
    (lambda: _net()(torch.ones(3, 2, device="meta")), ValueError, "x is on the 'meta' device"),
    (lambda: _net()([[1.0, 2.0]]), ValueError, "x must be a torch.Tensor"),
    (lambda: setattr(BatchedSGD(_net()), "lr", 0), ValueError, "lr must be finite and > 0"),
    (lambda: BatchedAdam(_net()).step(closure="x"), ValueError, "closure must be a function"),
    (lambda: BatchedAdam(_net()).observe([1.0]), ValueError, "loss must be a tensor of shape (1,)"),
    (lambda: BatchedAdam(_net()).add_param_group(5), ValueError, "param_group must be a dict with 'params'"),
    (lambda: BatchedAdam(_net()).add_param_group({"params": [torch.zeros(3, requires_grad=True)], "axis": 0}),
     ValueError, "params must have this optimiser's 1 configs along their axis, got 3"),
    (lambda: BatchedAdam(_net()).add_param_group({"params": [torch.zeros(1, 2, requires_grad=True)]}), ValueError,
     "axis must be given"),
    (lambda: BatchedAdam(_net()).add_param_group({"params": [torch.zeros(1, requires_grad=True)], "axis": 0,
                                                  "lr": -1.0}), ValueError, "lr must be finite and > 0"),
    (lambda: BatchedAdam(_net()).add_param_group({"params": [torch.zeros(1, requires_grad=True)], "axis": 0,
                                                  "betas": (1.5, 0.9)}), ValueError, "betas[0] must lie in"),
    (lambda: BatchedSGD(_net()).add_param_group({"params": torch.zeros(1), "axis": 0}), ValueError,
     "params must be tensors that require grad"),
    (lambda: _net().release_grads([torch.zeros(1)]), ValueError, "params must be parameters of this module"),
    (lambda: _net(activation=lambda x: x ** 3).get_config(), ValueError, "cannot be written to a config"),
    (lambda: BatchedAdam(_net()).step(loss=torch.ones(1)), TypeError, "unexpected keyword argument 'loss'"),
    (lambda: dl.networks.ResNet("res-1", "tanh", 0.5)(torch.zeros(0, 3), V=torch.randn(4, 2, 3, 3)), ValueError,
     "h0 must have at least one draw"),
    (lambda: dl.networks.ResNet("res-1", "tanh", 0.5)(torch.zeros(2, 3, device="meta"), V=torch.randn(4, 2, 3, 3)),
     ValueError, "h0 is on the 'meta' device"),
    (lambda: dl.strong_convergence("sde", width=2, depths=8), ValueError, "depths must be a non-empty list"),
    (lambda: dl.plan_convergence("sde", depths=8), ValueError, "depths must be a non-empty list"),
    (lambda: dl.stability(depths=8), ValueError, "depths must be a non-empty list"),
    (lambda: dl.phase_diagram(hursts=0.5), ValueError, "hursts must be a non-empty list"),
    (lambda: dl.run_plan(dl.plan_convergence(**PLAN), store="notastore"), ValueError, "store must be a "),
    (lambda: dl.run_plan(dl.plan_convergence(**PLAN), progress="x"), ValueError, "progress must be a function"),
    (lambda: _run_sweep(store="notastore"), ValueError, "store must be a "),
    (lambda: _run_sweep(progress=3), ValueError, "progress must be a function"),
    (lambda: _studies().train_grid(depth=2, width=2, epochs=1, store="notastore"), ValueError, "store must be a "),
    (lambda: _studies().train_grid(depth=2, width=2, epochs=1, progress="x"), ValueError, "progress must be"),
    (lambda: _studies().plan_training(lrs=0.1), ValueError, "lrs must be a list of numbers"),
    (lambda: _studies().plan_training(betas="0.5"), ValueError, "betas must be a list of numbers"),
    (lambda: _studies().plan_training(root="adir"), ValueError, "root applies only to the data sets read from files"),
    (lambda: _studies().plan_training(seed=2 ** 62), ValueError, "seed must be an integer in [0, "),
    (lambda: _studies().plan_training(lr_decay_halfway="yes"), ValueError, "lr_decay_halfway must be True or False"),
    (lambda: _studies().plan_training(save_weights=0), ValueError, "save_weights must be True or False"),
    (lambda: _studies().plan_training(bias=None), ValueError, "bias must be True or False"),
    (lambda: _studies().plan_scaling(depths=8), ValueError, "depths must be a list of depths"),
    (lambda: _studies().plan_scaling(depths=[8]), ValueError, "depths must hold at least two distinct depths"),
    (lambda: _studies().plan_scaling(lr=0), ValueError, "lr must lie in (0.0, inf]"),
    (lambda: _studies().plan_scaling(seed=2 ** 62), ValueError, "seed must be an integer in [0, "),
    (lambda: _studies().plan_scaling(delta=""), ValueError, "delta must be one of"),
    (lambda: dl.activation("leaky_relu:"), ValueError, "activation 'leaky_relu:' ends in ':'"),
    (lambda: dl.activation("relu:"), ValueError, "activation 'relu:' ends in ':'"),
]


# -- every public parameter of the training API, the diagnostics and the data loaders ----------------
# (function, valid arguments (a function returning them, fresh objects each time), parameter, bad value,
# text the message must contain). The message must also name the parameter. The test after the table
# checks that every parameter of each function in PUBLIC has a row.

def _studies():
    from deeplimits import studies

    return studies


def _net(**kw):
    from deeplimits.training import ResidualNetwork

    return ResidualNetwork(**{**dict(arch="res-1", depth=4, width=3, in_features=2, out_features=2), **kw})


def _inside(**kw):
    return _net(**{"arch": "inside", "bias": True, **kw})


class _Toy:
    """A tiny classification set: 8 training and 4 test samples of 2 features, 2 classes."""

    def __init__(self, **kw):
        g = torch.Generator().manual_seed(0)
        self.x_train, self.x_test = torch.randn(8, 2, generator=g), torch.randn(4, 2, generator=g)
        self.y_train, self.y_test = torch.arange(8) % 2, torch.arange(4) % 2
        self.__dict__.update(kw)


def _linears(n=4):
    return [torch.nn.Linear(3, 3) for _ in range(n)]


def _diag(L):
    from deeplimits.diagnostics import weight_diagnostics

    return weight_diagnostics(torch.linspace(1, 2, L)[:, None] * L ** -0.3)


_EXPONENTS = {"beta": {"value": 0.3}, "increment_norm": {"value": -1.3}, "rss": {"value": 0.2}}
NAN = float("nan")
I64, F64 = torch.int64, torch.float64


def _api():
    from deeplimits import data as D
    from deeplimits import diagnostics as G
    from deeplimits import training as T
    from deeplimits.studies import fit_rate
    from deeplimits.training.train import config_losses

    RN = lambda: dict(arch="res-1", depth=4, width=3, in_features=2, out_features=2)  # noqa: E731
    TRAIN = lambda: dict(module=_net(), data=_Toy(), epochs=1)  # noqa: E731
    OPT = lambda: dict(params=_net())  # noqa: E731
    CFG = lambda: dict(config=_net().get_config())  # noqa: E731
    INIT = lambda: dict(module=_net(), driver=dl.make_driver("gaussian"))  # noqa: E731
    LAYERS = lambda: dict(layers=_linears())  # noqa: E731
    EVAL = lambda: dict(module=_net(), x=torch.randn(3, 2), y=torch.arange(3) % 2, loss="cross_entropy")  # noqa: E731
    OUT = lambda: dict(out=torch.randn(1, 3, 2), y=torch.arange(3) % 2, loss="cross_entropy")  # noqa: E731
    A = lambda: dict(A=torch.randn(8, 2))  # noqa: E731
    CK = lambda: dict(kernels=torch.randn(2, 2, 3, 3), input_size=4)  # noqa: E731
    ST = lambda: dict(stages=torch.randn(4, 2, 2, 3, 3), input_size=4)  # noqa: E731
    FIT = lambda: dict(depths=[1, 2, 4], values=[1.0, 0.5, 0.25])  # noqa: E731
    REG = lambda: dict(module=_net(), x=torch.randn(3, 2), y=torch.randn(3, 2))  # noqa: E731
    ODE = lambda: dict(module=_inside(), x=torch.randn(3, 2))  # noqa: E731
    SPLIT = lambda: dict(split=(torch.zeros(3), torch.zeros(3)), batch_size=2)  # noqa: E731
    RATE = lambda: dict(depths=[4, 8], errors=np.ones((3, 2)))  # noqa: E731
    meta = torch.ones(8, 2, device="meta")
    return [
        (T.ResidualNetwork, RN, "arch", "res-9", "arch must be one of"),
        (T.ResidualNetwork, RN, "arch", None, "arch must be one of"),
        (T.ResidualNetwork, RN, "depth", 0, "depth must be an integer >= 1"),
        (T.ResidualNetwork, RN, "depth", "4", "depth must be an integer"),
        (T.ResidualNetwork, RN, "width", 2.5, "width must be an integer"),
        (T.ResidualNetwork, RN, "in_features", 0, "in_features must be"),
        (T.ResidualNetwork, RN, "out_features", -1, "out_features must be"),
        (T.ResidualNetwork, RN, "configs", True, "configs must be"),
        (T.ResidualNetwork, RN, "beta", NAN, "beta must be a finite real"),
        (T.ResidualNetwork, RN, "beta", -1.0, "beta must lie in"),
        (T.ResidualNetwork, RN, "activation", "leaky_relu:", "activation"),
        (T.ResidualNetwork, RN, "activation", 42, "activation must be one of"),
        (T.ResidualNetwork, RN, "bias", "yes", "bias must be True or False"),
        (T.ResidualNetwork, RN, "delta", "shared", "delta applies only to a block scaled by a trained delta"),
        (T.ResidualNetwork, lambda: {**RN(), "arch": "inside"}, "delta", "global", "delta must be one of"),
        (T.ResidualNetwork, RN, "dtype", torch.float16, "dtype must be torch.float32 or torch.float64"),
        (T.ResidualNetwork, RN, "device", "foo", "device: 'foo' is not a device"),
        (T.ResidualNetwork, RN, "device", "meta", "device: 'meta' holds no data"),
        (T.ResidualNetwork, RN, "device", 5, "device must be a device name"),
        (T.ResidualNetwork, RN, "device", "cuda:99", "device: 'cuda:99' is not available"),
        (T.train, TRAIN, "module", None, "module must be a ResidualNetwork"),
        (T.train, TRAIN, "data", None, "data must have tensors x_train"),
        (T.train, TRAIN, "data", _Toy(x_train=torch.ones(8, 2, dtype=I64)), "data.x_train must have dtype"),
        (T.train, TRAIN, "data", _Toy(x_train=torch.ones(8, 2, dtype=F64)), "data.x_train must have dtype torch.float32"),
        (T.train, TRAIN, "data", _Toy(x_train=torch.ones(8, 3)), "data.x_train must have shape (*, 2)"),
        (T.train, TRAIN, "data", _Toy(x_train=torch.zeros(0, 2), y_train=torch.zeros(0, dtype=I64)),
         "data.x_train must hold at least one sample"),
        (T.train, TRAIN, "data", _Toy(x_test=torch.zeros(0, 2), y_test=torch.zeros(0, dtype=I64)),
         "data.x_test must hold at least one sample"),
        (T.train, TRAIN, "data", _Toy(x_test=torch.full((4, 2), NAN)), "data.x_test must contain only finite"),
        (T.train, TRAIN, "data", _Toy(x_train=meta, y_train=torch.zeros(8, dtype=I64, device="meta")),
         "data.x_train is on the 'meta' device"),
        (T.train, TRAIN, "data", _Toy(y_train=torch.full((8,), 5)), "data.y_train must hold class labels in [0, 2)"),
        (T.train, TRAIN, "data", _Toy(y_test=torch.full((4,), -1)), "data.y_test must hold class labels in [0, 2)"),
        (T.train, TRAIN, "data", _Toy(y_train=torch.zeros(8)), "data.y_train must hold class labels of dtype"),
        (T.train, TRAIN, "data", _Toy(y_train=torch.zeros(8, 1, dtype=I64)), "data.y_train must have shape (8,)"),
        (T.train, lambda: {**TRAIN(), "loss": "squared"}, "data", _Toy(), "data.y_train must have dtype"),
        (T.train, TRAIN, "optimizer", "lbfgs", "optimizer must be one of"),
        (T.train, TRAIN, "lr", 0, "lr must be finite and > 0"),
        (T.train, TRAIN, "lr", NAN, "lr must be finite and > 0"),
        (T.train, TRAIN, "lr", "x", "lr must be a number or one real number per config"),
        (T.train, TRAIN, "lr", [0.1, 0.2], "lr must be a number or have one value per config (1)"),
        (T.train, TRAIN, "epochs", 0, "epochs must be an integer >= 1"),
        (T.train, TRAIN, "epochs", 1.5, "epochs must be an integer"),
        (T.train, TRAIN, "batch_size", 0, "batch_size must be"),
        (T.train, TRAIN, "loss", "hinge", "loss must be one of"),
        (T.train, TRAIN, "lr_decay_halfway", "yes", "lr_decay_halfway must be True or False"),
        (T.train, TRAIN, "stop_loss", -1.0, "stop_loss must lie in"),
        (T.train, TRAIN, "stop_loss", NAN, "stop_loss must be a finite real"),
        (T.train, TRAIN, "seed", -1, "seed must be an integer in [0, "),
        (T.train, TRAIN, "seed", 2 ** 62, "seed must be an integer in [0, "),
        (T.train, TRAIN, "progress", "x", "progress must be a function or None"),
        (T.train, TRAIN, "training", 5, "training must be a Training or None"),
        (T.train, TRAIN, "training", {"epochs": 1}, "training must be a Training or None"),
        (T.train, TRAIN, "data", iter([(torch.randn(4, 2), torch.arange(4) % 2)]), "data must be readable once per epoch"),
        (T.train, TRAIN, "data", torch.utils.data.TensorDataset(torch.randn(4, 2), torch.arange(4) % 2),
         "data: a torch.utils.data.Dataset gives one sample at a time"),
        (T.train, TRAIN, "data", [], "data must hold at least one mini-batch"),
        (T.train, TRAIN, "data", [5], "data must yield pairs (x, y) of tensors"),
        (T.train, TRAIN, "data", [(torch.ones(4, 3), torch.zeros(4, dtype=I64))], "data x must have shape (*, 2)"),
        (T.train, TRAIN, "data", [(torch.ones(4, 2), torch.full((4,), 7))], "data y must hold class labels in [0, 2)"),
        (T.train, TRAIN, "data", [(torch.ones(4, 2), torch.zeros(4, dtype=I64)), (torch.ones(4, 2), torch.zeros(4))],
         "data y must hold class labels of dtype torch.int64"),
        (T.train, TRAIN, "optimizer", 5, "optimizer must be one of"),
        (T.train, TRAIN, "optimizer", torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1),
         "optimizer must optimise parameters of the module"),
        (T.train, TRAIN, "optimizer", lambda m: None, "optimizer: the function must return a torch.optim.Optimizer"),
        (T.train, lambda: {**TRAIN(), "optimizer": T.BatchedAdam}, "lr", 0.1, "lr applies only to an optimizer given"),
        (T.train, TRAIN, "scheduler", "x", "scheduler must be None, a torch.optim.lr_scheduler scheduler or a function"),
        (T.train, TRAIN, "scheduler", torch.optim.lr_scheduler.StepLR(
            torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1), 1), "scheduler must be built on the optimizer"),
        (T.train, TRAIN, "scheduler", lambda opt: None, "scheduler: the function must return a scheduler"),
        (T.train, lambda: {**TRAIN(), "scheduler": lambda opt: torch.optim.lr_scheduler.StepLR(opt, 1)},
         "lr_decay_halfway", True, "lr_decay_halfway=True and a scheduler"),
        (T.train, TRAIN, "scheduler_interval", "minute", "scheduler_interval must be one of 'epoch', 'batch'"),
        (T.train, TRAIN, "scheduler_interval", "batch", "scheduler_interval applies only to a scheduler given"),
        (T.train, lambda: {**TRAIN(), "scheduler": lambda opt: torch.optim.lr_scheduler.ReduceLROnPlateau(opt)},
         "scheduler_interval", "batch", "scheduler_interval='batch' does not apply to ReduceLROnPlateau"),
        (T.train, TRAIN, "callbacks", "x", "callbacks must be a function or a list of functions"),
        (T.train, TRAIN, "callbacks", [print, 3], "callbacks must be a function or a list of functions, got 3"),
        (T.train, TRAIN, "test_data", [(torch.randn(4, 2), torch.arange(4) % 2)], "test_data applies only to data given"),
        (T.train, lambda: {**TRAIN(), "data": [(torch.randn(4, 2), torch.arange(4) % 2)]}, "test_data", 5,
         "test_data must be None or an iterable of (x, y) mini-batches"),
        (T.train, lambda: {**TRAIN(), "data": [(torch.randn(4, 2), torch.arange(4) % 2)]}, "test_data",
         [(torch.randn(4, 2), torch.arange(4) + 5)], "test_data y must hold class labels in [0, 2)"),
        (T.ResidualNetwork.from_config, CFG, "config", None, "config must be a dict"),
        (T.ResidualNetwork.from_config, CFG, "config", {"arch": "res-1"}, "config must have the keys"),
        (T.ResidualNetwork.from_config, CFG, "config", {**CFG()["config"], "colour": 1}, "unknown ['colour']"),
        (T.ResidualNetwork.from_config, CFG, "config", {**CFG()["config"], "dtype": "float16"},
         "config['dtype'] must be torch.float32 or torch.float64"),
        (T.ResidualNetwork.from_config, CFG, "device", "meta", "device: 'meta' holds no data"),
        (T.BatchedAdam, OPT, "params", None, "params must be a non-empty dict"),
        (T.BatchedAdam, OPT, "params", {}, "params must be a non-empty dict"),
        (T.BatchedAdam, OPT, "lr", 0, "lr must be finite and > 0"),
        (T.BatchedAdam, OPT, "lr", -1.0, "lr must be finite and > 0"),
        (T.BatchedAdam, OPT, "lr", "x", "lr must be a number or one real number per config"),
        (T.BatchedAdam, OPT, "lr", True, "lr must be a number or one real number per config"),
        (T.BatchedAdam, OPT, "lr", torch.tensor([1j]), "lr must be a number or one real number per config"),
        (T.BatchedAdam, OPT, "betas", (0.9,), "betas must be a pair (beta1, beta2) of reals in [0, 1)"),
        (T.BatchedAdam, OPT, "betas", 0.9, "betas must be a pair"),
        (T.BatchedAdam, OPT, "betas", (1.0, 0.9), "betas[0] must lie in [0.0, 1.0)"),
        (T.BatchedAdam, OPT, "betas", (0.9, NAN), "betas[1] must be a finite real"),
        (T.BatchedAdam, OPT, "eps", 0, "eps must lie in (0.0, inf]"),
        (T.BatchedAdam, OPT, "eps", NAN, "eps must be a finite real"),
        (T.BatchedAdam, OPT, "weight_decay", -1, "weight_decay must lie in"),
        (T.BatchedAdam, OPT, "axis", -1, "axis must be an integer >= 0"),
        (T.BatchedAdam, lambda: dict(params=[torch.zeros(3, 2, requires_grad=True)]), "axis", None,
         "axis must be given"),
        (T.BatchedAdam, lambda: dict(params=[torch.zeros(3, 2, requires_grad=True)]), "axis", 2,
         "axis must be an integer in [0, 1]"),
        (T.BatchedSGD, OPT, "params", {}, "params must be a non-empty dict"),
        (T.BatchedSGD, OPT, "lr", 0, "lr must be finite and > 0"),
        (T.BatchedSGD, OPT, "momentum", -0.1, "momentum must lie in [0.0, 1.0)"),
        (T.BatchedSGD, OPT, "momentum", 1.0, "momentum must lie in [0.0, 1.0)"),
        (T.BatchedSGD, OPT, "dampening", 2.0, "dampening must lie in [0.0, 1.0]"),
        (T.BatchedSGD, OPT, "weight_decay", NAN, "weight_decay must be a finite real"),
        (T.BatchedSGD, OPT, "nesterov", "yes", "nesterov must be True or False"),
        (T.BatchedSGD, OPT, "nesterov", True, "nesterov requires momentum > 0"),
        (T.BatchedSGD, OPT, "axis", "1", "axis must be an integer >= 0"),
        (T.init_from_driver, INIT, "module", None, "module must be a ResidualNetwork"),
        (T.init_from_driver, INIT, "driver", "gaussian", "driver must be a deeplimits Driver"),
        (T.init_from_driver, INIT, "generator", 5, "generator must be a torch.Generator"),
        (T.init_from_driver, INIT, "scales", 0.5, "scales must be a dict"),
        (T.init_from_driver, INIT, "scales", {"X": 1.0}, "scales key must be one of 'V'"),
        (T.init_from_driver, INIT, "scales", {"V": -1.0}, "scales['V'] must lie in"),
        (T.init_from_driver, INIT, "config", 5, "config must be an integer in [0, 0]"),
        (T.init_from_driver, INIT, "config", 1.5, "config must be an integer"),
        (T.resolution_for, lambda: dict(driver=dl.make_driver("gaussian"), depth=4), "driver", None,
         "driver must be a deeplimits Driver"),
        (T.resolution_for, lambda: dict(driver=dl.make_driver("gaussian"), depth=4), "depth", 0, "depth must be"),
        (T.iid_, LAYERS, "layers", None, "layers must be a list of torch.nn.Linear"),
        (T.iid_, LAYERS, "layers", [], "layers must be a non-empty list"),
        (T.iid_, LAYERS, "law", "cauchy", "law must be one of"),
        (T.iid_, LAYERS, "generator", 1, "generator must be a torch.Generator"),
        (T.iid_, LAYERS, "scale", 0.0, "scale must lie in"),
        (T.iid_, LAYERS, "scale", NAN, "scale must be a finite real"),
        (T.fractional_, LAYERS, "layers", [torch.nn.Conv1d(3, 4, 1)], "layers must all be torch.nn.Linear"),
        (T.fractional_, LAYERS, "hurst", 1.0, "hurst must lie in"),
        (T.fractional_, LAYERS, "hurst", NAN, "hurst must be a finite real"),
        (T.fractional_, LAYERS, "generator", "x", "generator must be a torch.Generator"),
        (T.fractional_, LAYERS, "scale", -1.0, "scale must lie in"),
        (T.smooth_, LAYERS, "layers", "x", "layers must all be torch.nn.Linear"),
        (T.smooth_, LAYERS, "length_scale", -1.0, "length_scale must lie in"),
        (T.smooth_, LAYERS, "generator", "x", "generator must be a torch.Generator"),
        (T.smooth_, LAYERS, "scale", "x", "scale must be a finite real"),
        (T.evaluate, EVAL, "module", None, "module must be a ResidualNetwork"),
        (T.evaluate, EVAL, "x", torch.ones(3, 2, dtype=I64), "x must have dtype"),
        (T.evaluate, EVAL, "x", torch.ones(3, 5), "x must have shape (*, 2)"),
        (T.evaluate, EVAL, "x", torch.ones(3, 2, device="meta"), "x is on the 'meta' device"),
        (T.evaluate, lambda: {**EVAL(), "y": torch.zeros(0, dtype=I64)}, "x", torch.zeros(0, 2),
         "x must hold at least one sample"),
        (T.evaluate, EVAL, "y", torch.full((3,), 7), "y must hold class labels in [0, 2)"),
        (T.evaluate, EVAL, "y", torch.zeros(3), "y must hold class labels of dtype torch.int64"),
        (T.evaluate, EVAL, "loss", "x", "loss must be one of"),
        (T.evaluate, EVAL, "batch_size", 0, "batch_size must be"),
        (config_losses, OUT, "out", torch.randn(3, 2), "out must have shape (configs, batch, outputs)"),
        (config_losses, OUT, "out", torch.ones(1, 3, 2, dtype=I64), "out must have dtype"),
        (config_losses, OUT, "y", torch.full((3,), 7), "y must hold class labels in [0, 2)"),
        (config_losses, OUT, "y", torch.zeros(4, dtype=I64), "y must have shape (3,)"),
        (config_losses, OUT, "loss", "x", "loss must be one of"),
        # -- the diagnostics
        (G.weight_diagnostics, A, "A", None, "A must be a tensor or array"),
        (G.weight_diagnostics, A, "A", torch.ones(4, 2, dtype=torch.complex64), "A must hold real numbers"),
        (G.weight_diagnostics, A, "A", np.ones((4, 2), bool), "A must hold real numbers"),
        (G.weight_diagnostics, A, "A", np.array(["a"] * 4), "A must hold real numbers"),
        (G.weight_diagnostics, A, "A", meta, "A is on the 'meta' device"),
        (G.weight_diagnostics, A, "A", torch.full((4, 2), NAN), "A must be finite"),
        (G.weight_diagnostics, A, "A", torch.ones(2, 3), "L >= 3"),
        (G.weight_diagnostics, A, "beta", NAN, "beta must be a finite real"),
        (G.weight_diagnostics, A, "beta", 1e300, "beta must keep L^beta finite"),
        (G.weight_diagnostics, A, "beta", "x", "beta must be a finite real"),
        (G.weight_diagnostics, A, "name", 5, "name must be a string"),
        (G.conv_spectral_norms, CK, "kernels", torch.zeros(3, 3), "shape (..., c_out, c_in, kh, kw)"),
        (G.conv_spectral_norms, CK, "kernels", np.zeros((2, 2, 3, 3)), "kernels must be a torch.Tensor"),
        (G.conv_spectral_norms, CK, "input_size", 2, "at least the kernel's size"),
        (G.conv_spectral_norms, CK, "input_size", 0, "input_size must be an integer >= 1"),
        (G.conv_spectral_norms, CK, "dtype", torch.int32, "dtype must be torch.float32 or torch.float64"),
        (G.conv_layer_norms, ST, "stages", [], "stages must be a tensor"),
        (G.conv_layer_norms, ST, "stages", torch.ones(4, 2, 2, 3), "stages[0] must have shape"),
        (G.conv_layer_norms, ST, "input_size", [4, 4], "one per stage"),
        (G.conv_layer_norms, ST, "name", 3, "name must be a string"),
        (G.conv_layer_norms, ST, "dtype", "float64", "dtype must be"),
        (G.conv_weight_diagnostics, ST, "stages", torch.full((4, 2, 2, 3, 3), NAN), "must be finite"),
        (G.conv_weight_diagnostics, ST, "input_size", (2, 2), "at least its kernels' size"),
        (G.conv_weight_diagnostics, ST, "beta", NAN, "beta must be a finite real"),
        (G.conv_weight_diagnostics, ST, "beta", 1e300, "beta must keep L^beta finite"),
        (G.conv_weight_diagnostics, ST, "name", None, "name must be a string"),
        (G.conv_weight_diagnostics, ST, "dtype", torch.float16, "dtype must be"),
        (G.hurst_index, A, "A", np.ones((4, 2), complex), "A must hold real numbers"),
        (G.hurst_index, A, "A", meta, "A is on the 'meta' device"),
        (G.scaling_exponents, lambda: dict(family=[_diag(8), _diag(16)]), "family", None, "family must be a list"),
        (G.scaling_exponents, lambda: dict(family=[_diag(8), _diag(16)]), "family", [1, 2], "family must hold"),
        (G.scaling_exponents, lambda: dict(family=[_diag(8), _diag(16)]), "family", [_diag(8)] * 2,
         "family must hold at least two distinct depths"),
        (G.scaling_exponents, lambda: dict(family=[_diag(8), _diag(16)]), "level", 1.5, "level must lie in (0.0, 1.0)"),
        (G.scaling_exponents, lambda: dict(family=[_diag(8), _diag(16)]), "level", NAN, "level must be a finite real"),
        (G.loglog_fit, FIT, "depths", 8, "depths must be a list of depths > 0"),
        (G.loglog_fit, FIT, "depths", [0, 1, 2], "depths must lie in (0.0, inf]"),
        (G.loglog_fit, FIT, "values", [-1.0, -2.0, -3.0], "values must lie in [0.0, inf]"),
        (G.loglog_fit, FIT, "values", [1.0, 2.0], "values must have one value per depth (3 depths), got 2"),
        (G.loglog_fit, FIT, "values", [NAN, 1.0, 2.0], "values must be a finite real"),
        (G.loglog_fit, FIT, "level", 1.5, "level must lie in (0.0, 1.0)"),
        (G.loglog_fit, FIT, "level", NAN, "level must be a finite real"),
        (G.hypothesis, lambda: dict(exponents=_EXPONENTS), "exponents", None, "exponents must be a dict"),
        (G.hypothesis, lambda: dict(exponents=_EXPONENTS), "exponents", {}, "exponents must map 'beta'"),
        (G.hypothesis, lambda: dict(exponents=_EXPONENTS), "hurst", "x", "hurst must be a number or None"),
        (G.hypothesis, lambda: dict(exponents=_EXPONENTS), "noise_hurst", "x", "noise_hurst must be a number or None"),
        (G.hypothesis, lambda: dict(exponents=_EXPONENTS), "trend_ratio", [1.0], "trend_ratio must be a number or None"),
        (G.hypothesis, lambda: dict(exponents=_EXPONENTS), "depths", [8, -1], "depths"),
        (G.hypothesis, lambda: dict(exponents=_EXPONENTS), "noise_fraction", "x",
         "noise_fraction must be a number or None"),
        (G.weigh_evidence, lambda: dict(exponents=_EXPONENTS), "exponents", 3, "exponents must be a dict"),
        (G.weigh_evidence, lambda: dict(exponents=_EXPONENTS), "noise_hurst", "x", "noise_hurst must be a number"),
        (G.weigh_evidence, lambda: dict(exponents=_EXPONENTS), "trend_ratio", True, "trend_ratio must be a number"),
        (G.weigh_evidence, lambda: dict(exponents=_EXPONENTS), "noise_fraction", [0.1],
         "noise_fraction must be a number"),
        (G.scaling_exponents, lambda: dict(family=[_diag(8), _diag(16)]), "trend_ratio", "x",
         "trend_ratio must be a number or None"),
        (G.trend_split, A, "A", torch.full((8, 2), NAN), "A must contain only finite values"),
        (G.trend_split, A, "A", [[1.0]] * 8, "A must be a torch.Tensor"),
        (G.trend_split, A, "A", torch.ones(8, 2, dtype=I64), "A must have dtype"),
        (G.trend_split, A, "A", torch.ones(2, 2), "A must be a tensor of shape (L, ...) with L >= 3"),
        (G.trend_split, A, "A", meta, "A is on the 'meta' device"),
        (G.trend_split, A, "bandwidth", 0.0, "bandwidth must lie in (0.0, 1.0)"),
        (G.trend_split, A, "bandwidth", NAN, "bandwidth must be a finite real"),
        (G.from_trend, lambda: dict(module=_net()), "module", None, "module must be a ResidualNetwork"),
        (G.from_trend, lambda: dict(module=_net()), "module", _net(depth=2), "module must have depth >= 3"),
        (G.from_trend, lambda: dict(module=_net()), "bandwidth", 2.0, "bandwidth must lie in"),
        (G.trend_loss, REG, "module", None, "module must be a ResidualNetwork"),
        (G.trend_loss, REG, "x", torch.randn(3, 5), "x must have shape (*, 2)"),
        (G.trend_loss, REG, "y", torch.randn(3, 4), "y must have shape (3, 2)"),
        (G.trend_loss, REG, "loss", "x", "loss must be one of"),
        (G.trend_loss, REG, "bandwidth", -1.0, "bandwidth must lie in"),
        (G.own_ode_error, ODE, "module", _net(), "module must be a ResidualNetwork of a block scaled by a trained delta (inside)"),
        (G.own_ode_error, ODE, "module", _inside(depth=2), "module must have depth >= 3"),
        (G.own_ode_error, ODE, "x", torch.randn(3, 2, dtype=F64), "x must have dtype torch.float32"),
        (G.own_ode_error, ODE, "x", torch.randn(0, 2), "x must hold at least one sample"),
        (G.own_ode_error, ODE, "bandwidth", 0.0, "bandwidth must lie in"),
        (G.own_ode_error, ODE, "rtol", 0.0, "rtol must lie in (0.0, inf]"),
        (G.own_ode_error, ODE, "atol", -1.0, "atol must lie in [0.0, inf]"),
        (G.load_weights, lambda: dict(source=torch.ones(4, 2)), "source", None, "source must be a path"),
        (G.load_weights, lambda: dict(source=torch.ones(4, 2)), "source", 42, "source must be a path"),
        (G.load_weights, lambda: dict(source=torch.ones(4, 2)), "source", "", "source must be a non-empty path"),
        (G.load_weights, lambda: dict(source=torch.ones(4, 2)), "source", "nothere.npy", "source: no file or run"),
        (G.load_weights, lambda: dict(source=torch.ones(4, 2)), "source", torch.ones(4, 2, dtype=torch.complex64),
         "source must hold real numbers"),
        (G.load_weights, lambda: dict(source=torch.ones(4, 2)), "depth", 0, "depth must be an integer >= 1"),
        (G.load_weights, lambda: dict(source=torch.ones(4, 2)), "depth", "x", "depth must be an integer"),
        # -- the data loaders
        (D.load_dataset, lambda: dict(name="digits"), "name", "cifar100", "name must be one of"),
        (D.load_dataset, lambda: dict(name="digits"), "name", None, "name must be one of"),
        (D.load_dataset, lambda: dict(name="mnist"), "root", "", "root must be a non-empty path"),
        (D.load_dataset, lambda: dict(name="mnist"), "root", 3, "root must be a path"),
        (D.load_dataset, lambda: dict(name="digits"), "seed", -1, "seed must be an integer in"),
        (D.load_dataset, lambda: dict(name="digits"), "seed", True, "seed must be an integer in"),
        (D.load_dataset, lambda: dict(name="digits"), "test_fraction", 0.0, "test_fraction must lie in"),
        (D.load_dataset, lambda: dict(name="digits"), "test_fraction", NAN, "test_fraction must be a finite real"),
        (D.load_dataset, lambda: dict(name="mnist", root="adir"), "test_fraction", 0.1, "test_fraction must be None"),
        (D.load_dataset, lambda: dict(name="digits"), "device", "meta", "device: 'meta' holds no data"),
        (D.load_dataset, lambda: dict(name="digits"), "device", "gpu7", "device: 'gpu7' is not a device"),
        (D.load_dataset, lambda: dict(name="digits"), "dtype", torch.float16, "dtype must be"),
        (D.batches, SPLIT, "split", None, "split must be a pair"),
        (D.batches, SPLIT, "split", (torch.zeros(3, device="meta"), torch.zeros(3, device="meta")),
         "split is on the 'meta' device"),
        (D.batches, SPLIT, "batch_size", 0, "batch_size must be an integer >= 1"),
        (D.batches, SPLIT, "seed", -1, "seed must be an integer in"),
        (D.batches, SPLIT, "generator", 3, "generator must be a torch.Generator"),
        (D.batches, lambda: {**SPLIT(), "seed": 1}, "generator", torch.Generator(), "give seed or generator"),
        (D.batches, SPLIT, "shuffle", 1, "shuffle must be True or False"),
        (D.batches, SPLIT, "drop_last", "no", "drop_last must be True or False"),
        (D.split_indices, lambda: dict(n=10, test_fraction=0.2, seed=0), "n", 0, "n must be an integer >= 2"),
        (D.split_indices, lambda: dict(n=10, test_fraction=0.2, seed=0), "n", 1.5, "n must be an integer"),
        (D.split_indices, lambda: dict(n=10, test_fraction=0.2, seed=0), "test_fraction", 0.0, "test_fraction must lie"),
        (D.split_indices, lambda: dict(n=10, test_fraction=0.2, seed=0), "test_fraction", 0.01, "test_fraction=0.01 "
         "leaves an empty train or test split"),
        (D.split_indices, lambda: dict(n=10, test_fraction=0.2, seed=0), "seed", -1, "seed must be an integer in"),
        (D.cohen_targets, lambda: dict(x=torch.randn(3, 2)), "x", [[1.0]], "x must be a torch.Tensor"),
        (D.cohen_targets, lambda: dict(x=torch.randn(3, 2)), "x", torch.full((3, 2), NAN), "x must contain only finite"),
        (D.cohen_targets, lambda: dict(x=torch.randn(3, 2)), "depth", 0, "depth must be an integer >= 1"),
        (D.cohen_targets, lambda: dict(x=torch.randn(3, 2)), "angle_start", 2, "angle_start must be an integer in [0, 1]"),
        (D.register_dataset, lambda: dict(name="x"), "name", 5, "name must be a non-empty string"),
        (D.register_dataset, lambda: dict(name="x"), "name", "", "name must be a non-empty string"),
        (D.register_dataset, lambda: dict(name="x"), "official_split", "no", "official_split must be True or False"),
        (D.register_dataset, lambda: dict(name="x"), "shared", 1, "shared must be True or False"),
        (D.synthetic, lambda: dict(seed=0), "seed", -1, "seed must be an integer in"),
        (D.synthetic, lambda: dict(seed=0), "n", 1, "n must be an integer in [2, 10000000]"),
        (D.synthetic, lambda: dict(seed=0), "dim", 0, "dim must be an integer in [1, 10000]"),
        (D.synthetic, lambda: dict(seed=0), "angle_start", -1, "angle_start must be an integer in [0, 1]"),
        (D.copying_shuffle, lambda: dict(order=torch.arange(4), generator=torch.Generator()), "order",
         torch.ones(4), "order must be a 1-D integer tensor"),
        (D.copying_shuffle, lambda: dict(order=torch.arange(4), generator=torch.Generator()), "generator", 3,
         "generator must be a torch.Generator"),
        (D.synthetic, lambda: dict(seed=0), "depth", 2.5, "depth must be an integer"),
        (fit_rate, RATE, "depths", 8, "depths must be a list of depths > 0"),
        (fit_rate, RATE, "depths", [0, 8], "depths must lie in (0.0, inf]"),
        (fit_rate, RATE, "errors", np.ones((3, 3)), "errors must have shape (draws, 2)"),
        (fit_rate, RATE, "errors", np.full((3, 2), NAN), "errors must be finite and >= 0"),
        (fit_rate, RATE, "errors", "x", "errors must be an array of shape (draws, 2)"),
        (fit_rate, RATE, "n_boot", 0, "n_boot must be an integer in [1, 1000000]"),
        (fit_rate, RATE, "seed", -1, "seed must be an integer >= 0"),
        (fit_rate, RATE, "level", 1.5, "level must lie in (0.0, 1.0)"),
    ]


def _public():
    """The functions whose every parameter the table above must cover."""
    from deeplimits import data as D
    from deeplimits import diagnostics as G
    from deeplimits import training as T
    from deeplimits.studies import fit_rate
    from deeplimits.training.train import config_losses

    return [T.ResidualNetwork, T.ResidualNetwork.from_config, T.train, T.BatchedAdam, T.BatchedSGD, T.init_from_driver, T.resolution_for, T.iid_,
            T.fractional_, T.smooth_, T.evaluate, config_losses, G.weight_diagnostics, G.hurst_index,
            G.scaling_exponents, G.loglog_fit, G.hypothesis, G.weigh_evidence, G.trend_split, G.from_trend,
            G.trend_loss, G.own_ode_error, G.load_weights, G.conv_spectral_norms, G.conv_layer_norms,
            G.conv_weight_diagnostics, D.load_dataset, D.batches, D.split_indices, D.cohen_targets,
            D.register_dataset, D.synthetic, D.copying_shuffle, fit_rate]


def _api_rows():
    out = []
    for i, (fn, base, param, value, needle) in enumerate(_api()):
        out.append(pytest.param(fn, base, param, value, needle, id=f"{fn.__name__}-{param}-{i:03d}"))
    return out


@pytest.mark.parametrize("fn,base,param,value,needle", _api_rows())
def test_bad_public_parameter(fn, base, param, value, needle, tmp_path, monkeypatch):
    """One bad value of one parameter, the others valid: a one-line ValueError naming it, before any work."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir").mkdir()
    t0 = time.process_time()  # CPU time: a loaded machine stretches the clock, not the work
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning on the way to the refusal either
        with pytest.raises(ValueError) as info:
            fn(**{**base(), param: value})
    msg = str(info.value)
    assert needle in msg and param in msg and "\n" not in msg, msg
    # the exception carries the parameter (the command line shows its flag from it)
    assert isinstance(info.value, ParameterError) and info.value.param == param, (type(info.value), info.value.param)
    assert time.process_time() - t0 < LIMIT
    assert os.listdir(tmp_path) == ["adir"] and os.listdir(tmp_path / "adir") == []


def test_table_covers_every_public_parameter():
    import inspect

    given = {(fn, param) for fn, _, param, _, _ in _api()}
    for fn in _public():
        sig = inspect.signature(fn.__init__ if inspect.isclass(fn) else fn)
        for name, p in sig.parameters.items():
            if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                assert (fn, name) in given, f"{fn.__name__}({name}=...) has no bad call in the table"
    assert len(_api()) >= 200


def _lib_rows():
    out = []
    for i, (call, exc, rx, *marks) in enumerate(LIB):
        out.append(pytest.param(call, exc, rx, bool(marks), marks=marks, id=f"lib{i:02d}-{rx or exc.__name__}"))
    return out


def _raises_in_time(call, exc, rx):
    """Run ``call`` in a forked child with a time limit (a pending check may hang or grab memory)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    q = ctx.Queue()

    def child():
        try:
            call()
            q.put(("none", "", ""))
        except BaseException as e:  # noqa: BLE001
            q.put(([c.__name__ for c in type(e).__mro__], str(e), ""))

    cpu0 = _children_cpu()
    p = ctx.Process(target=child)
    p.start()
    p.join(HANG)  # a hang guard; the bound is on the child's CPU time (a loaded machine stretches the clock)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail(f"no answer in {HANG} s")
    assert _children_cpu() - cpu0 < LIMIT
    mro, msg, _ = q.get(timeout=HANG)
    assert mro != "none", "no exception raised"
    assert exc.__name__ in mro, (mro, msg)
    assert rx in msg and "\n" not in msg


@pytest.mark.parametrize("call,exc,rx,isolated", _lib_rows())
def test_bad_library_call(call, exc, rx, isolated, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(os.path.dirname(os.path.abspath(__file__)))
    t0 = time.process_time()  # CPU time (an isolated call's child is bounded by _raises_in_time)
    if isolated:
        _raises_in_time(call, exc, rx)
    else:
        with pytest.raises(exc) as info:
            call()
        assert rx in str(info.value)
    assert time.process_time() - t0 < LIMIT
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("error,status", [(OSError("Timed out trying to connect to tcp://10.0.0.1:8786 after 3 s"), 1),
                                          (KeyboardInterrupt(), 130)])
@pytest.mark.slow
def test_a_run_that_fails_before_any_task_leaves_nothing(error, status, cwd, monkeypatch, capsys):
    """An unreachable scheduler (or Ctrl-C) before the first task: the run directory and store
    this command created are removed; one line."""
    import deeplimits.studies.convergence.study as conv
    from deeplimits import runs as sweeps

    err_type = getattr(sweeps, "ExecutorError", None)
    if err_type is not None and isinstance(error, OSError):
        error = err_type(str(error))

    def unreachable(*a, **kw):
        raise error

    monkeypatch.setattr(conv, "run_plan", unreachable)
    assert main(C + ["--scheduler", "tcp://10.0.0.1:8786", "--quiet"]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert tree(cwd).keys() == {"afile", "adir"}
    (cwd / "adir" / "keep").write_text("x")  # an existing --out directory stays, its new store goes
    assert main(C + ["--scheduler", "tcp://10.0.0.1:8786", "--out", "adir", "--quiet"]) == status
    assert sorted(os.listdir(cwd / "adir")) == ["keep"]


def test_refused_sizes_name_the_flags_to_change(cwd, monkeypatch, capsys):
    """A ResourceError from a plan: exit 2, one line, its knobs shown as the command's flags."""
    import deeplimits.studies.propagation.study as prop
    import deeplimits.studies.convergence.study as conv

    def too_big(*a, **kw):
        raise V.ResourceError("needs about 7.3 TiB of memory, 15 GiB available", needed=8e12, available=1.6e10,
                              knobs=("draws", "n_in", "length_scale"))

    monkeypatch.setattr(prop, "plan_stability", too_big)
    assert main(["stability"]) == 2
    err = capsys.readouterr().err
    assert err == ("deeplimits stability: needs about 7.3 TiB of memory, 15 GiB available "
                   "(change --draws, --n-in, --length-scale)\n")

    def too_many(*a, **kw):
        raise V.ResourceError("draws = 10^20 draws take about 10^13 s", needed=1e13, available=1e5, knobs=("draws",))

    monkeypatch.setattr(conv, "plan_convergence", too_many)
    assert main(["convergence"]) == 2
    assert capsys.readouterr().err.endswith("(change --draws)\n")
    assert tree(cwd).keys() == {"afile", "adir"}


def test_writable_probes_leave_nothing(tmp_path):
    (tmp_path / "f").write_text("x")
    assert V.writable_file("json", tmp_path / "a" / "r.json") == str(tmp_path / "a" / "r.json")
    assert V.writable_dir("out", tmp_path / "c" / "d") == str(tmp_path / "c" / "d")
    assert V.writable_file("json", tmp_path / "f") and (tmp_path / "f").read_text() == "x"
    assert V.writable_file("json", "/dev/null") == "/dev/null"
    for call in (lambda: V.writable_file("json", tmp_path / "f" / "x.json"),
                 lambda: V.writable_dir("out", tmp_path / "f" / "sub"),
                 lambda: V.writable_file("json", tmp_path),
                 lambda: V.writable_file("json", "/dev/full"),
                 lambda: V.writable_file("json", tmp_path / "a" / "b" / "r.json"),  # two missing: a typo
                 lambda: V.writable_dir("out", tmp_path / "f")):
        with pytest.raises(ValueError, match="json|out"):
            call()
    assert sorted(os.listdir(tmp_path)) == ["f"]
