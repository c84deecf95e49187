"""Root finding shared by the kernels: Newton's method safeguarded by bisection.

Every caller keeps a bracket ``[low, high]`` around the zero of a monotone function and asks
:func:`safeguarded_step` for the next iterate from the function's value and slope at ``x``: the Newton step
when the slope has the function's sign of monotonicity and the step stays inside the bracket, the bracket's
midpoint otherwise. The iteration stops when a step or the bracket is below ``1e-13`` relative to ``x``, i.e.
at full double precision.
"""

from __future__ import annotations

from .._numba import kernel

RELATIVE_TOLERANCE = 1e-13


@kernel
def safeguarded_step(x, value, slope, low, high, decreasing):
    """One safeguarded Newton step at ``x`` for an increasing (``decreasing`` False) or decreasing function
    with ``value`` and ``slope`` there (``value`` nonzero). Returns ``(next, low, high, converged)``: the
    bracket shrunk to the side of ``x`` the zero lies on, the next iterate inside it, and whether the
    iteration has converged (then ``next`` is the answer)."""
    if (value > 0.0) == decreasing:
        low = x
    else:
        high = x
    newton = slope < 0.0 if decreasing else slope > 0.0
    nxt = x - value / slope if newton else 0.5 * (low + high)
    if not (nxt > low and nxt < high):
        nxt = 0.5 * (low + high)
    scale = max(1.0, abs(x))
    converged = abs(nxt - x) <= RELATIVE_TOLERANCE * scale or high - low <= RELATIVE_TOLERANCE * scale
    return nxt, low, high, converged
