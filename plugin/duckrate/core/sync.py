"""Flags two kernel threads share: a store that publishes everything written before it, a load that sees
everything published before the flag it reads, an atomic add (for threads that claim work from a shared
counter), and a polite spin until a flag is set.

For kernels that run side by side in Python threads (numba releases the GIL) and hand work over through an
int64 array of flags: the writer stores its results, then ``store_release(flags, i, 1)``; the reader waits
with :func:`wait_for` and then reads them. LLVM's acquire/release atomics keep the compiler (and a CPU with a
weaker memory order than x86's) from moving the result accesses across the flag.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array

from duckrate.core.jit import inlined_kernel

#: Spins before a waiting thread gives its core away (``sched_yield``) between looks at the flag.
SPINS_BEFORE_YIELD = 2_000


def _element_pointer(context, builder, array_type, array_value, index_value, index_type):
    array = make_array(array_type)(context, builder, array_value)
    index = context.cast(builder, index_value, index_type, types.intp)
    return builder.gep(array.data, [index])


@intrinsic
def load_acquire(typingctx, flags, index):
    """``flags[index]`` (int64 array) read with acquire ordering."""
    if not (isinstance(flags, types.Array) and flags.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        pointer = _element_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        return builder.load_atomic(pointer, "acquire", 8)

    return types.int64(flags, index), codegen


@intrinsic
def store_release(typingctx, flags, index, value):
    """``flags[index] = value`` (int64 array) written with release ordering."""
    if not (isinstance(flags, types.Array) and flags.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        pointer = _element_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        builder.store_atomic(context.cast(builder, args[2], sig.args[2], types.int64), pointer, "release", 8)
        return context.get_dummy_value()

    return types.none(flags, index, value), codegen


@intrinsic
def fetch_add(typingctx, flags, index, value):
    """``flags[index] += value`` (int64 array) in one atomic step, with acquire and release ordering; returns
    the value before the add."""
    if not (isinstance(flags, types.Array) and flags.dtype == types.int64):
        return None

    def codegen(context, builder, sig, args):
        pointer = _element_pointer(context, builder, sig.args[0], args[0], args[1], sig.args[1])
        return builder.atomic_rmw("add", pointer, context.cast(builder, args[2], sig.args[2], types.int64), "acq_rel")

    return types.int64(flags, index, value), codegen


@intrinsic
def _sched_yield(typingctx):
    """The C library's ``sched_yield()`` (declared by name, so cached kernels link it in any process)."""

    def codegen(context, builder, sig, args):
        function_type = ir.FunctionType(ir.IntType(32), [])
        function = cgutils.get_or_insert_function(builder.module, function_type, "sched_yield")
        builder.call(function, [])
        return context.get_dummy_value()

    return types.none(), codegen


@inlined_kernel
def relax(spins):
    """One turn of a polite spin: the turns so far plus one, or 0 after giving the core away
    (``sched_yield``) every :data:`SPINS_BEFORE_YIELD` turns."""
    spins += 1
    if spins >= SPINS_BEFORE_YIELD:
        _sched_yield()
        return 0
    return spins


@inlined_kernel
def wait_until(flags, index, value, abort_index):
    """Wait until ``flags[index] >= value`` (a counter that only grows, e.g. the last phase done); False (at
    once) if ``flags[abort_index]`` gets set instead."""
    spins = 0
    while load_acquire(flags, index) < value:
        if load_acquire(flags, abort_index) != 0:
            return False
        spins += 1
        if spins >= SPINS_BEFORE_YIELD:
            _sched_yield()
            spins = 0
    return True


@inlined_kernel
def wait_for(flags, index, abort_index):
    """Wait until ``flags[index]`` (0 or 1) is set; False (at once) if ``flags[abort_index]`` gets set instead."""
    return wait_until(flags, index, 1, abort_index)
