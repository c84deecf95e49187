"""How duckrate's kernels travel to other processes (:mod:`duckrate.core.jit`): by module and name, so the
receiving process uses its module's own kernel, which loads from numba's cache instead of compiling."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numba

from duckrate.core import jit
from duckrate.systems.elo import elo_replay_kernel

CHECK = """
import pickle, sys
kernel = pickle.loads(sys.stdin.buffer.read())
print(kernel is sys.modules["duckrate.systems.elo"].elo_replay_kernel, type(kernel._cache).__name__)
"""


def test_a_kernel_pickles_as_its_module_and_name():
    assert pickle.loads(pickle.dumps(elo_replay_kernel)) is elo_replay_kernel
    assert jit._reduce_kernel(elo_replay_kernel) == (jit.kernel_named, ("duckrate.systems.elo", "elo_replay_kernel"))


def test_another_process_unpickles_its_own_cached_kernel():
    """Numba's own pickling would rebuild a dispatcher without a cache (``NullCache``) there."""
    completed = subprocess.run(
        [sys.executable, "-c", CHECK], input=pickle.dumps(elo_replay_kernel), capture_output=True, check=True
    )
    assert completed.stdout.decode().split() == ["True", "FunctionCache"]


def test_other_dispatchers_pickle_as_numba_pickles_them():
    def double(x):
        return 2 * x

    dispatcher = numba.njit(double)
    assert jit._reduce_kernel(dispatcher)[0] is dispatcher.__reduce__()[0] is not jit.kernel_named
    copy = pickle.loads(pickle.dumps(dispatcher))
    assert copy(3) == 6


def test_kernel_named_imports_the_module():
    assert jit.kernel_named("duckrate.systems.elo", "elo_replay_kernel") is elo_replay_kernel
