"""Numerics shared by the kernels: Newton's method safeguarded by bisection, Chebyshev series, the
standard normal distribution's cdf and quantile, and a Cholesky solve.

Every caller keeps a bracket ``[low, high]`` around the zero of a monotone function and asks
:func:`safeguarded_step` for the next iterate from the function's value and slope at ``x``: the Newton step
when the slope has the function's sign of monotonicity and the step stays inside the bracket and spans at
most half of it, the bracket's midpoint otherwise. The iteration stops when a step or the bracket is below ``1e-13`` relative to ``x``, i.e.
at full double precision.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.core.scales import ELO_SCALE, LN10

RELATIVE_TOLERANCE = 1e-13
# The logistic with sd 1 is ½ + ½ tanh(z·TANH_MULTIPLIER/2); Elo's 400-point logistic has sd ELO_LOGISTIC_SD
# (the reference implementation's default β of its Codeforces, Glicko and BAR systems).
TANH_MULTIPLIER = math.pi / math.sqrt(3.0)
ELO_LOGISTIC_SD = ELO_SCALE * TANH_MULTIPLIER / LN10


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
    scale = max(1.0, abs(x))
    nxt = x - value / slope if newton else 0.5 * (low + high)
    if newton and abs(nxt - x) <= RELATIVE_TOLERANCE * scale:
        # converged; the step may round onto the bracket's end (x itself), which is no reason to bisect
        return nxt, low, high, True
    if not (nxt > low and nxt < high) or abs(nxt - x) > 0.5 * (high - low):
        # outside the bracket, or a step across more than half of it (Newton can bounce between the two
        # ends of a bracket it barely shrinks, e.g. where a sum of tanh flattens): bisect
        nxt = 0.5 * (low + high)
    converged = abs(nxt - x) <= RELATIVE_TOLERANCE * scale or high - low <= RELATIVE_TOLERANCE * scale
    return nxt, low, high, converged


_SQRT_HALF = 0.7071067811865476
_SQRT_2PI = 2.5066282746310002
_INV_SQRT_2PI = 1.0 / _SQRT_2PI
# Acklam's rational approximation of the normal quantile (relative error below 1.2e-9), refined below.
_A = (
    -39.69683028665376,
    220.9460984245205,
    -275.9285104469687,
    138.3577518672690,
    -30.66479806614716,
    2.506628277459239,
)
_B = (-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572)
_C = (
    -0.007784894002430293,
    -0.3223964580411365,
    -2.400758277161838,
    -2.549732539343734,
    4.374664141464968,
    2.938163982698783,
)
_D = (0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416)


@kernel
def normal_cdf(z):
    """Φ(z) = erfc(-z/√2)/2, accurate in both tails."""
    return 0.5 * math.erfc(-z * _SQRT_HALF)


# Φ tabulated with its density on a grid of step 1/1024 over [-8.5, 8.5]: the cubic Hermite interpolant between
# two nodes is within 2e-15 of Φ everywhere (absolute; tested), and beyond ±8.5 Φ is 0 or 1 to within 1e-17.
NORMAL_TABLE_LIMIT = 8.5
NORMAL_TABLE_STEP = 1.0 / 1024.0


@functools.cache
def normal_cdf_table() -> tuple[np.ndarray, np.ndarray]:
    """(Φ, φ·step) at the grid nodes -8.5, -8.5 + step, ..., two nodes past 8.5 (for :func:`normal_cdf_fast`)."""
    z = -NORMAL_TABLE_LIMIT + NORMAL_TABLE_STEP * np.arange(int(round(2 * NORMAL_TABLE_LIMIT / NORMAL_TABLE_STEP)) + 3)
    values = np.array([0.5 * math.erfc(-x * _SQRT_HALF) for x in z])
    return values, np.exp(-0.5 * z * z) / _SQRT_2PI * NORMAL_TABLE_STEP


@kernel
def normal_cdf_fast(z, values, slopes):
    """Φ(z) from :func:`normal_cdf_table` (``values``, ``slopes``) by cubic Hermite interpolation: absolute error
    below 2e-15, a few times faster than :func:`normal_cdf` where Φ is summed over many pairs."""
    if z <= -NORMAL_TABLE_LIMIT:
        return 0.0
    if z >= NORMAL_TABLE_LIMIT:
        return 1.0
    u = (z + NORMAL_TABLE_LIMIT) * (1.0 / NORMAL_TABLE_STEP)
    k = int(u)
    t = u - k
    t2 = t * t
    t3 = t2 * t
    return (
        (2.0 * t3 - 3.0 * t2 + 1.0) * values[k]
        + (t3 - 2.0 * t2 + t) * slopes[k]
        + (3.0 * t2 - 2.0 * t3) * values[k + 1]
        + (t3 - t2) * slopes[k + 1]
    )


@kernel
def _tail_quantile(p):
    """Acklam's approximation of Φ⁻¹(p) for p in the lower tail (p < 0.02425)."""
    q = math.sqrt(-2.0 * math.log(p))
    numerator = ((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]
    return numerator / ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0)


@kernel
def normal_quantile(p):
    """Φ⁻¹(p) for p in (0, 1) to full double precision: Acklam's rational approximation refined by two
    Halley steps on Φ(x) - p (with Φ from erfc, so the tails keep their relative accuracy)."""
    if p < 0.02425:
        x = _tail_quantile(p)
    elif p > 1.0 - 0.02425:
        x = -_tail_quantile(1.0 - p)
    else:
        q = p - 0.5
        r = q * q
        numerator = (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q
        x = numerator / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
    for _ in range(2):
        # the error in the tail that keeps its precision: Φ(x) - p below the median, (1 - p) - Φ(-x) above
        error = normal_cdf(x) - p if x <= 0.0 else (1.0 - p) - normal_cdf(-x)
        u = error * _SQRT_2PI * math.exp(0.5 * x * x)
        x = x - u / (1.0 + 0.5 * x * u)
    return x


@kernel
def chebyshev_fit(values):
    """Coefficients c (c_0 already halved) of the series Σ c_k T_k(t) interpolating ``values`` at the
    first-kind nodes t_i = cos(π(i + ½)/m)."""
    m = values.shape[0]
    coefficients = np.zeros(m)
    for i in range(m):
        t = math.cos(math.pi * (i + 0.5) / m)
        previous = 1.0
        current = t
        coefficients[0] += values[i]
        if m > 1:
            coefficients[1] += values[i] * t
        for k in range(2, m):
            nxt = 2.0 * t * current - previous
            coefficients[k] += values[i] * nxt
            previous = current
            current = nxt
    for k in range(m):
        coefficients[k] *= 2.0 / m
    coefficients[0] *= 0.5
    return coefficients


@kernel
def chebyshev_derivative(coefficients):
    """Coefficients of d/dt of Σ c_k T_k(t) (same convention, c_0 halved)."""
    m = coefficients.shape[0]
    out = np.zeros(m)
    if m < 2:
        return out
    # d_{k-1} = d_{k+1} + 2k c_k, then halve d_0
    upper = 0.0  # d_{k+1}
    current = 0.0  # d_k
    for k in range(m - 1, 0, -1):
        value = upper + 2.0 * k * coefficients[k]
        out[k - 1] = value
        upper = current
        current = value
    out[0] *= 0.5
    return out


@kernel
def chebyshev_value(coefficients, t):
    """Σ c_k T_k(t) by Clenshaw's recurrence."""
    b1 = 0.0
    b2 = 0.0
    for k in range(coefficients.shape[0] - 1, 0, -1):
        b0 = coefficients[k] + 2.0 * t * b1 - b2
        b2 = b1
        b1 = b0
    return coefficients[0] + t * b1 - b2


@kernel
def normal_hazard(z):
    """φ(z)/Φ(z), the standard normal's reverse hazard, stable for very negative z (Mills-ratio series)."""
    if z > -30.0:
        return _INV_SQRT_2PI * math.exp(-0.5 * z * z) / (0.5 * math.erfc(-z * _SQRT_HALF))
    x2 = 1.0 / (z * z)
    # 1/R(x) with R(x) ~ (1/x)(1 - 1/x² + 3/x⁴ - 15/x⁶ + ...), x = -z
    series = 1.0 + x2 * (-1.0 + x2 * (3.0 + x2 * (-15.0 + x2 * (105.0 + x2 * (-945.0 + x2 * 10395.0)))))
    return -z / series


@kernel
def cholesky_factor(matrix):
    """Overwrite the lower triangle of a symmetric positive definite ``matrix`` with its Cholesky factor L
    (``matrix = L Lᵀ``): plain loops in a fixed order, so the bits do not depend on a BLAS library's
    threads."""
    n = matrix.shape[0]
    for j in range(n):
        diagonal = matrix[j, j]
        for k in range(j):
            diagonal -= matrix[j, k] * matrix[j, k]
        root = math.sqrt(diagonal)
        matrix[j, j] = root
        for i in range(j + 1, n):
            value = matrix[i, j]
            for k in range(j):
                value -= matrix[i, k] * matrix[j, k]
            matrix[i, j] = value / root


@kernel
def cholesky_substitute(factor, rhs, x):
    """``x`` with ``L Lᵀ x = rhs``, L the lower triangle of ``factor`` (from :func:`cholesky_factor`)."""
    n = rhs.shape[0]
    for i in range(n):  # L y = rhs
        value = rhs[i]
        for k in range(i):
            value -= factor[i, k] * x[k]
        x[i] = value / factor[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        value = x[i]
        for k in range(i + 1, n):
            value -= factor[k, i] * x[k]
        x[i] = value / factor[i, i]


@kernel
def cholesky_solve(matrix, rhs):
    """``x`` with ``matrix x = rhs`` for a symmetric positive definite ``matrix`` (overwritten by its Cholesky
    factor): :func:`cholesky_factor`, then :func:`cholesky_substitute`."""
    cholesky_factor(matrix)
    x = np.empty_like(rhs)
    cholesky_substitute(matrix, rhs, x)
    return x
