"""Array views that hold no reference to their memory, for the inner loop of a kernel.

Numba counts references to an array's memory with atomic operations: every view taken (``a[i, :n]``),
every array unpacked from a tuple or handed to a function that is not inlined adds an increment and a
decrement. In a loop over millions of small events (a team match of ten players) those atomics cost as much
as the arithmetic, and more when two threads touch the same counters (measured: about half of a Weng-Lin
match). A *borrowed* view has no memory record (a NULL meminfo), so numba's reference counting skips it.

It must not outlive the array it borrows from: take borrowed views only of arrays the kernel's caller owns
(its arguments) and use them only during that call.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array


@intrinsic
def borrowed(typingctx, array):
    """``array`` itself, without a reference to its memory."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, sig, args):
        source = make_array(sig.args[0])(context, builder, args[0])
        view = make_array(sig.return_type)(context, builder)
        populate_array(
            view,
            data=source.data,
            shape=source.shape,
            strides=source.strides,
            itemsize=source.itemsize,
            meminfo=None,
        )
        return view._getvalue()

    return array(array), codegen


@intrinsic
def borrowed_row(typingctx, matrix, row, length):
    """``matrix[row, :length]`` of a C-contiguous 2-D array, without a reference to its memory (no bounds
    check: ``0 <= row < matrix.shape[0]`` and ``0 <= length <= matrix.shape[1]`` are the caller's to keep)."""
    if not (isinstance(matrix, types.Array) and matrix.ndim == 2 and matrix.layout == "C"):
        return None
    vector = types.Array(matrix.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        source = make_array(sig.args[0])(context, builder, args[0])
        row_value = context.cast(builder, args[1], sig.args[1], types.intp)
        length_value = context.cast(builder, args[2], sig.args[2], types.intp)
        columns = cgutils.unpack_tuple(builder, source.shape, 2)[1]
        data = builder.gep(source.data, [builder.mul(row_value, columns)])
        view = make_array(vector)(context, builder)
        populate_array(
            view,
            data=data,
            shape=[length_value],
            strides=[source.itemsize],
            itemsize=source.itemsize,
            meminfo=None,
        )
        return view._getvalue()

    return vector(matrix, row, length), codegen


@intrinsic
def borrowed_slice(typingctx, vector, start, stop):
    """``vector[start:stop]`` of a C-contiguous 1-D array, without a reference to its memory (no bounds
    check: ``0 <= start <= stop <= len(vector)`` is the caller's to keep)."""
    if not (isinstance(vector, types.Array) and vector.ndim == 1 and vector.layout == "C"):
        return None
    result = types.Array(vector.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        source = make_array(sig.args[0])(context, builder, args[0])
        first = context.cast(builder, args[1], sig.args[1], types.intp)
        last = context.cast(builder, args[2], sig.args[2], types.intp)
        view = make_array(result)(context, builder)
        populate_array(
            view,
            data=builder.gep(source.data, [first]),
            shape=[builder.sub(last, first)],
            strides=[source.itemsize],
            itemsize=source.itemsize,
            meminfo=None,
        )
        return view._getvalue()

    return result(vector, start, stop), codegen
