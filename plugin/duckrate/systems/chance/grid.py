"""The grid, luck functions, drift kernels and priors of the luck-aware grid system (Cowan, Sections 3.1-3.4).

One job: the model's building blocks as numbers on the grid. Natural units throughout (the display scale
is ``1500 + 400/ln10 · x``, eq. 3).

- Grid (eq. 5): ``x_k = -M + 2M·k/n`` for k = 0..n (``grid_points`` = n + 1, ``grid_max`` = M), evaluated
  as ``M·(2k - n)/n`` so that it is exactly symmetric (x_{n-k} = -x_k; x_{n/2} = 0 for even n).
- Luck function (eq. 2): ``Λ(x, y) = (1-β)/2 + β·F(x - y)``. Everything depends on d = x - y only, and the
  algorithms use the grid difference ``d = (i - k)·h`` with ``h = 2M/n`` (the same number up to rounding).
  The sigmoids F are scaled to the logistic's slope at 0 (F'(0) = 1/4), so that a small rating difference
  means the same win probability under all three and the display scale keeps its Elo meaning; the paper
  (Section 3.1) uses the logistic and only says a normal CDF "would work just as well":

  * ``logistic``: F(d) = 1/(1 + e^(-d))                         (the paper's choice, eq. 2)
  * ``normal``:   F(d) = Φ(d/s), s = 4/sqrt(2π) ≈ 1.596          (Thurstone-Mosteller)
  * ``laplace``:  F(d) = Laplace CDF with scale a = 2            (Section 4.3's F(d | a))

  The complement is evaluated as ``1 - Λ(d) = Λ(-d) = (1-β)/2 + β·F(-d)``, never as a subtraction, so it
  keeps full relative accuracy where it is small (β = 1, large gaps).
- Result θ ∈ [0, 1] (eq. 1): the factor of A's update is ``D_θ(d) = Λ(d)^θ · Λ(-d)^(1-θ)``, B's is
  ``D_θ(-d)`` (= D_{1-θ}(d)); ``luck_table`` tabulates D_θ over all 2n + 1 grid differences.
- Drift kernel (eq. 6): ``K(d) ∝ exp(-d²/(2σκ²))`` (``gaussian``) or ``exp(-|d|/b)`` with ``b = σκ/sqrt(2)``
  (``laplace``: the same variance σκ² per match, the quantity that sets how fast a player's uncertainty
  grows from match to match; the paper applies the kernel after each of the player's matches, Section 3.4).
- Priors (eq. 5): ``ρ(x_k) ∝ φ(x_k | μ, σ²)``, normalised on the grid.
- Vector helpers shared by the algorithms: sums and dot products with eight running partial sums (a fixed
  order, so the same bits on every run), and the normalisation that also returns the mean and sd.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.core.scales import POINTS_PER_NATURAL

DISPLAY_SCALE = POINTS_PER_NATURAL  # display points per natural unit (eq. 3)
SIGMOIDS = ("logistic", "normal", "laplace")
KERNELS = ("gaussian", "laplace")
NORMAL_SCALE = 4.0 / math.sqrt(2.0 * math.pi)  # Φ(d/s) has slope 1/4 at 0, like the logistic
LAPLACE_SCALE = 2.0  # the Laplace CDF F(d | a) has slope 1/(2a) at 0: a = 2 gives 1/4
_SQRT_HALF = math.sqrt(0.5)


def sigmoid_code(name: str) -> int:
    return SIGMOIDS.index(name)


def kernel_code(name: str) -> int:
    return KERNELS.index(name)


def laplace_kernel_scale(drift_sd: float) -> float:
    """b of the Laplace drift kernel exp(-|d|/b): variance 2b² = σκ²."""
    return drift_sd / math.sqrt(2.0)


def grid(grid_points: int, grid_max: float) -> np.ndarray:
    """The grid x_k = -M + 2M·k/n, k = 0..n (n = grid_points - 1), exactly symmetric about 0."""
    n = grid_points - 1
    return grid_max * (2.0 * np.arange(grid_points, dtype=np.float64) - n) / n


def grid_step(grid_points: int, grid_max: float) -> float:
    """h = 2M/n, the spacing of the grid and the unit of the grid differences d = (i - k)·h."""
    return 2.0 * grid_max / (grid_points - 1)


@kernel
def sigmoid(d, code):
    """F(d) for sigmoid ``code`` (0 logistic, 1 normal CDF, 2 Laplace CDF), each with slope 1/4 at 0."""
    if code == 0:
        return 1.0 / (1.0 + math.exp(-d))
    if code == 1:
        return 0.5 * math.erfc(-d / NORMAL_SCALE * _SQRT_HALF)
    tail = 0.5 * math.exp(-abs(d) / LAPLACE_SCALE)
    return 1.0 - tail if d >= 0.0 else tail


@kernel
def luck(d, beta, code):
    """Λ at grid difference d = x - y: (1-β)/2 + β·F(d)."""
    return 0.5 * (1.0 - beta) + beta * sigmoid(d, code)


@kernel
def luck_factor(d, theta, beta, code):
    """D_θ(d) = Λ(d)^θ · Λ(-d)^(1-θ): A's likelihood factor for a result θ at grid difference d (eq. 1)."""
    if theta == 1.0:
        return luck(d, beta, code)
    if theta == 0.0:
        return luck(-d, beta, code)
    return luck(d, beta, code) ** theta * luck(-d, beta, code) ** (1.0 - theta)


@kernel
def luck_table(theta, beta, code, grid_points, h):
    """D_θ((j - n)·h) for j = 0..2n (n = grid_points - 1): entry ``n + i - k`` is D_θ(x_i - x_k)."""
    n = grid_points - 1
    table = np.empty(2 * n + 1, dtype=np.float64)
    for j in range(2 * n + 1):
        table[j] = luck_factor((j - n) * h, theta, beta, code)
    return table


@kernel
def kernel_table(drift_sd, code, grid_points, h):
    """Unnormalised K((j - n)·h), j = 0..2n: exp(-d²/(2σκ²)) or exp(-|d|/b), b = σκ/sqrt(2); 1 at d = 0.

    The kernel's constant does not matter: the drifted vector is renormalised on the grid (eq. 8). For
    σκ = 0 the table is the identity (1 at d = 0, 0 elsewhere).
    """
    n = grid_points - 1
    table = np.zeros(2 * n + 1, dtype=np.float64)
    table[n] = 1.0
    if drift_sd == 0.0:
        return table
    b = drift_sd / math.sqrt(2.0)
    for j in range(2 * n + 1):
        d = (j - n) * h
        if code == 0:
            z = d / drift_sd
            table[j] = math.exp(-0.5 * z * z)
        else:
            table[j] = math.exp(-abs(d) / b)
    return table


@kernel
def normal_on_grid(x, mean, sd, out):
    """out ∝ φ(x_k | mean, sd²), normalised to sum 1 on the grid (eq. 5).

    Evaluated relative to the largest weight, so a prior centred off the grid or narrower than the grid
    step still gives a proper distribution (then concentrated on the nearest grid points).
    """
    n = x.shape[0]
    best = math.inf
    for k in range(n):
        z = (x[k] - mean) / sd
        best = min(best, z * z)
    total = 0.0
    for k in range(n):
        z = (x[k] - mean) / sd
        out[k] = math.exp(-0.5 * (z * z - best))
        total += out[k]
    for k in range(n):
        out[k] /= total


@kernel
def moments(rho, x):
    """(mean, sd) of a grid distribution, in natural units (two passes)."""
    mean = 0.0
    for k in range(x.shape[0]):
        mean += rho[k] * x[k]
    var = 0.0
    for k in range(x.shape[0]):
        dev = x[k] - mean
        var += rho[k] * dev * dev
    return mean, math.sqrt(var)


@kernel
def vector_sum(v):
    """Σ v_i with eight running partial sums (a fixed order: the same bits on every run)."""
    size = v.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    i = 0
    while i + 7 < size:
        s0 += v[i]
        s1 += v[i + 1]
        s2 += v[i + 2]
        s3 += v[i + 3]
        s4 += v[i + 4]
        s5 += v[i + 5]
        s6 += v[i + 6]
        s7 += v[i + 7]
        i += 8
    tail = 0.0
    while i < size:
        tail += v[i]
        i += 1
    return (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))) + tail


@kernel
def vector_dot(a, b):
    """Σ a_i b_i with eight running partial sums (a fixed order)."""
    size = a.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    i = 0
    while i + 7 < size:
        s0 += a[i] * b[i]
        s1 += a[i + 1] * b[i + 1]
        s2 += a[i + 2] * b[i + 2]
        s3 += a[i + 3] * b[i + 3]
        s4 += a[i + 4] * b[i + 4]
        s5 += a[i + 5] * b[i + 5]
        s6 += a[i + 6] * b[i + 6]
        s7 += a[i + 7] * b[i + 7]
        i += 8
    tail = 0.0
    while i < size:
        tail += a[i] * b[i]
        i += 1
    return (((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))) + tail


@kernel
def normalise_with_moments(weights, x, shift, rho):
    """rho = weights / Σ weights, returning rho's (mean, sd) in one pass over the weights.

    The moments come from Σ w, Σ w (x - c) and Σ w (x - c)² with c = ``shift`` (the previous mean: the
    mean moves little, so ``var = E[(x-c)²] - (m-c)²`` does not cancel).
    """
    size = weights.shape[0]
    m0 = m1 = m2 = m3 = 0.0
    f0 = f1 = f2 = f3 = 0.0
    q0 = q1 = q2 = q3 = 0.0
    i = 0
    while i + 3 < size:
        w0, w1, w2, w3 = weights[i], weights[i + 1], weights[i + 2], weights[i + 3]
        d0, d1, d2, d3 = x[i] - shift, x[i + 1] - shift, x[i + 2] - shift, x[i + 3] - shift
        m0 += w0
        m1 += w1
        m2 += w2
        m3 += w3
        f0 += w0 * d0
        f1 += w1 * d1
        f2 += w2 * d2
        f3 += w3 * d3
        q0 += w0 * d0 * d0
        q1 += w1 * d1 * d1
        q2 += w2 * d2 * d2
        q3 += w3 * d3 * d3
        i += 4
    while i < size:
        d0 = x[i] - shift
        m0 += weights[i]
        f0 += weights[i] * d0
        q0 += weights[i] * d0 * d0
        i += 1
    total = (m0 + m1) + (m2 + m3)
    first = ((f0 + f1) + (f2 + f3)) / total
    second = ((q0 + q1) + (q2 + q3)) / total
    for i in range(size):
        rho[i] = weights[i] / total
    return shift + first, math.sqrt(max(second - first * first, 0.0))


def prior_vector(grid_points: int, grid_max: float, mean: float = 0.0, sd: float = 0.7) -> np.ndarray:
    """The grid prior ρ ∝ N(mean, sd²) (natural units) as a new array; the newcomer prior at the defaults."""
    out = np.empty(grid_points, dtype=np.float64)
    normal_on_grid(grid(grid_points, grid_max), float(mean), float(sd), out)
    return out
