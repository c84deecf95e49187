"""Shared pieces of the Weng-Lin online ranking models, ported to numba from ``openskill`` 6.2.0.

Weng & Lin, "A Bayesian Approximation Method for Online Ranking", JMLR 12 (2011) 267-300. Every model
keeps a Gaussian belief N(μ, σ²) per player; a team's strength is the sum of its players'
(θ_i = Σ μ, σ_i² = Σ σ²). One match moves every team i by Ω_i and Δ_i (Algorithms 1-4: the model decides
how they are formed) and each player j of team i by

    μ_j ← μ_j + σ_j²/σ_i² · Ω_i,      σ_j² ← σ_j² · max(1 - σ_j²/σ_i² · Δ_i, κ)

(the last step of each algorithm; the floor κ keeps the variance positive). This module holds what the
five models share, computed as ``openskill`` computes it (its ``models/common.py`` and
``models/weng_lin/common.py`` and the ``rate`` method, identical in the five models):

* the normal pdf φ, cdf Φ and quantile Φ⁻¹ as Python's ``statistics.NormalDist`` evaluates them (φ and
  Φ from ``math.exp``/``math.erf``, Φ⁻¹ by Wichura's AS241), and the functions V, W, Ṽ, W̃ of the
  paper's Thurstone-Mosteller updates (Algorithm 3);
* the preparation of one match: the dynamics τ (σ² ← σ² + τ²) first, scores turned into ranks, the
  per-team weight normalisation, the stable sort of the teams by rank, the team ratings with the
  optional ``balance`` weights, and the margin-of-victory adjustments;
* the player update above with openskill's partial-play weights, its (no-op, see below) averaging over
  tied teams and ``limit_sigma``.

What is worth knowing about openskill 6.2.0 (each reproduced here, bit for bit where possible):

* **Φ follows the running Python.** ``NormalDist.cdf`` is ``0.5 · (1 + erf(x/√2))`` up to Python 3.13
  and ``0.5 · erfc(-x/√2)`` from 3.14 on (CPython gh-132893). The erf form loses relative accuracy fast
  below x ≈ -5 (about 1e-4 at -7, exactly 0 below -8.3), where the Thurstone-Mosteller V and W divide
  by Φ, so openskill's results there depend on the Python version. :data:`PHI_VIA_ERFC` is found at
  import by asking ``NormalDist`` itself, and Φ here follows it (the erf form on 3.11, as tested).
* **Tie averaging is a no-op.** The full-pairing models and Plackett-Luce end with "average the μ change
  over tied teams", but the updated players are the very objects the change is measured against, so
  every change is ``μ_new - μ_new = 0`` and nothing moves (unless μ became NaN or infinite: then the
  whole tied group gets NaN). Reproduced literally by :func:`average_ties`.
* **The margin adjustment does not depend on who won.** Plackett-Luce shifts each team by the mean over
  the other teams with a different score of ``(θ_j - θ_i)(log1p(|s_i - s_j|/margin) - 1)``, the same for
  the better and the worse team; the pairwise models divide the whole ``θ_q - θ_i`` by
  ``log1p(|s_i - s_q|/margin)``. Both apply only when ``|s_i - s_j| > margin > 0``, and since
  log1p(d/margin) < 1 for d < (e - 1)·margin, a win just past the margin *amplifies* the skill gap
  rather than shrinking it. Scores given with ``margin = 0`` rate exactly as ranks. Ranks come from
  scores as 0-based competition ranks of ``-score`` (equal scores tie).
* **Weights are rescaled per team to ``weight_bounds``** (default (1, 2)): the team's smallest weight
  maps to the lower bound and its largest to the upper. A one-player team always gets the upper bound;
  a team whose weights are all equal gets the lower bound (its range is taken as 0.0001). A team with
  Ω ≥ 0 has its players' Ω and Δ multiplied by the weight, with Ω < 0 divided by it (Thurstone-Mosteller
  partial pairing tests Ω > 0 instead). With ``weight_bounds=None`` weights are used raw (NaN bounds
  here); the mypyc-compiled openskill 6.2.0 wheel rejects ``weight_bounds=None`` in the constructor
  (TypeError: its annotation says tuple), so it takes ``model.weight_bounds = None`` after construction.
* **``balance``** weights every player by ``1 + (o_max - o)/(o_max + κ)`` with o = μ - 3σ the ordinal and
  o_max the team's best (σ after τ when rating). It changes the team sums only, and becomes enormous or
  negative when o_max is near -κ, which it is for fresh players (μ = 3σ); predictions apply it too.
* ``limit_sigma`` caps each new σ at the σ before the match (before τ).
* Ranks are only compared, so any ranks with the same order rate the same, except that Plackett-Luce
  truncates them with ``int()`` (fractional ranks 1.2 and 1.7 tie there, not in the pairwise models);
  this interface takes integer ranks, where the models agree.
* The default γ of all five models is σ_i/c (c of Algorithm 4 for Plackett-Luce, c_iq for the pairwise
  models, that c_iq being doubled in Thurstone-Mosteller partial pairing).
* openskill squares with ``**``, which mypyc (openskill's wheels are compiled) and CPython evaluate with
  the C library's ``pow``, not always the correctly rounded product. :func:`square` calls the same
  ``pow``: a last-bit difference in a team's σ² can move Φ's ``1 + erf`` across a rounding step in the
  tail, enough to show at 1e-9 in the Thurstone-Mosteller models.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from duckrate.core.borrowed import borrowed_row
from duckrate.core.jit import inlined_kernel, kernel
from duckrate.systems.weng_lin.scratch import (
    ROW_ORDER,
    ROW_ORDINAL,
    ROW_SIGMA_TAU,
    ROW_WEIGHTS,
    TEAM_DELTA,
    TEAM_GIVEN_RANK,
    TEAM_MU,
    TEAM_MU_SORTED,
    TEAM_OMEGA,
    TEAM_ORDER,
    TEAM_RANK,
    TEAM_SCORE,
    TEAM_SIGMA_SQ,
    TEAM_SIGMA_SQ_SORTED,
)

# --------------------------------------------------------------------------------------------------
# Model codes and the settings layout.

PLACKETT_LUCE = 0
BRADLEY_TERRY_FULL = 1
BRADLEY_TERRY_PART = 2
THURSTONE_MOSTELLER_FULL = 3
THURSTONE_MOSTELLER_PART = 4

#: openskill's model names (snake case) to the codes the kernels take.
MODEL_CODES: dict[str, int] = {
    "plackett_luce": PLACKETT_LUCE,
    "bradley_terry_full": BRADLEY_TERRY_FULL,
    "bradley_terry_part": BRADLEY_TERRY_PART,
    "thurstone_mosteller_full": THURSTONE_MOSTELLER_FULL,
    "thurstone_mosteller_part": THURSTONE_MOSTELLER_PART,
}

S_BETA = 0
S_KAPPA = 1
S_TAU = 2
S_LIMIT_SIGMA = 3  # 0 or 1
S_BALANCE = 4  # 0 or 1
S_MARGIN = 5
S_WEIGHT_LO = 6  # NaN, NaN: weight_bounds=None, weights used raw
S_WEIGHT_HI = 7
#: The Thurstone-Mosteller draw margin ε (openskill's ``epsilon``, default 0.1); optional: a shorter
#: settings array means the default.
S_EPSILON = 8
#: The partial-pairing window (openskill's ``window_size``, default 4); optional like S_EPSILON.
S_WINDOW_SIZE = 9
N_SETTINGS = 10

DEFAULT_BETA = 25.0 / 6.0
DEFAULT_KAPPA = 0.0001
DEFAULT_TAU = 25.0 / 300.0
DEFAULT_EPSILON = 0.1
DEFAULT_WINDOW_SIZE = 4


def settings_array(
    beta: float = DEFAULT_BETA,
    kappa: float = DEFAULT_KAPPA,
    tau: float = DEFAULT_TAU,
    limit_sigma: bool = False,
    balance: bool = False,
    margin: float = 0.0,
    weight_bounds: tuple[float, float] | None = (1.0, 2.0),
    epsilon: float = DEFAULT_EPSILON,
    window_size: int = DEFAULT_WINDOW_SIZE,
) -> np.ndarray:
    """The float64 settings vector the kernels read (layout ``S_*``), from openskill's model arguments
    (defaults as openskill's). ``mu`` and ``sigma`` are only newcomer defaults and are not part of it."""
    settings = np.empty(N_SETTINGS, dtype=np.float64)
    settings[S_BETA] = float(beta)
    settings[S_KAPPA] = float(kappa)
    settings[S_TAU] = float(tau)
    settings[S_LIMIT_SIGMA] = 1.0 if limit_sigma else 0.0
    settings[S_BALANCE] = 1.0 if balance else 0.0
    settings[S_MARGIN] = float(margin)
    if weight_bounds is None:
        settings[S_WEIGHT_LO] = math.nan
        settings[S_WEIGHT_HI] = math.nan
    else:
        settings[S_WEIGHT_LO] = float(weight_bounds[0])
        settings[S_WEIGHT_HI] = float(weight_bounds[1])
    settings[S_EPSILON] = float(epsilon)
    settings[S_WINDOW_SIZE] = float(int(window_size))
    return settings


@kernel
def setting_epsilon(settings):
    """ε from the settings, or openskill's default 0.1 when the array stops before S_EPSILON."""
    return settings[S_EPSILON] if settings.shape[0] > S_EPSILON else DEFAULT_EPSILON


@kernel
def setting_window(settings):
    """The partial-pairing window from the settings, or openskill's default 4."""
    return int(settings[S_WINDOW_SIZE]) if settings.shape[0] > S_WINDOW_SIZE else DEFAULT_WINDOW_SIZE


# --------------------------------------------------------------------------------------------------
# Squares as openskill computes them.


@intrinsic
def _c_pow(typingctx, x, y):
    """A call of the C library's ``pow(x, y)`` (float64) that LLVM may not rewrite: the declaration is marked
    ``nobuiltin``, else LLVM turns ``pow(x, 2.0)`` into ``x * x``."""
    signature = types.float64(types.float64, types.float64)

    def codegen(context, builder, sig, args):
        function_type = ir.FunctionType(ir.DoubleType(), [ir.DoubleType(), ir.DoubleType()])
        function = cgutils.get_or_insert_function(builder.module, function_type, "pow")
        function.attributes.add("nobuiltin")
        return builder.call(function, args)

    return signature, codegen


@intrinsic
def _fma(typingctx, x, y, z):
    """x·y + z rounded once (LLVM's ``llvm.fma.f64``: exact whether or not the CPU has an FMA unit)."""
    signature = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, sig, args):
        double = ir.DoubleType()
        function = builder.module.declare_intrinsic("llvm.fma", [double], ir.FunctionType(double, [double] * 3))
        return builder.call(function, args)

    return signature, codegen


@intrinsic
def _bits(typingctx, x):
    """The IEEE 754 bits of a float64 as an int64."""

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, bits):
    """The float64 with these IEEE 754 bits."""

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


#: A product whose rounding error is below this share of its ulp is what ``pow(x, 2.0)`` returns too.
SQUARE_SAFE_ULPS = 0.4
_MANTISSA = (1 << 52) - 1


@kernel
def square(x):
    """x² as openskill's ``x**2`` computes it: mypyc compiles ``**`` to the C library's ``pow(x, 2.0)``
    (as CPython's float power does), which is not always the correctly rounded ``x * x`` (glibc differs in
    the last bit for about one value in a thousand). The Thurstone-Mosteller V and W amplify such a bit
    when Φ is evaluated through ``1 + erf`` in the tail, so it matters for agreement.

    Fast path: the product p = x·x is correctly rounded and ``fma(x, x, -p)`` is its exact error. When that
    error is below :data:`SQUARE_SAFE_ULPS` of p's ulp (p normal, not a power of two), every other double
    is more than 0.6 ulp from x², so a ``pow`` accurate to 0.6 ulp (glibc's is to about 0.52) returns p
    too; only the rest (about one product in five) calls ``pow``. The test suite checks the two agree."""
    p = x * x
    if 1e-290 < p < 1e300:
        bits = _bits(p)
        if bits & _MANTISSA != 0:
            ulp = _from_bits(((bits >> 52) - 52) << 52)  # 2^(exponent - 52): p's ulp
            if abs(_fma(x, x, -p)) < SQUARE_SAFE_ULPS * ulp:
                return p
    return _c_pow(x, 2.0)


# --------------------------------------------------------------------------------------------------
# The standard normal as statistics.NormalDist() computes it.

_SQRT2 = math.sqrt(2.0)
_SQRT_TAU = math.sqrt(math.tau)
_EPSILON = 2.220446049250313e-16  # sys.float_info.epsilon


def _cdf_uses_erfc() -> bool:
    """Whether this Python's ``NormalDist.cdf`` is the erfc form (3.14+) rather than the erf form."""
    x = -7.5
    return NormalDist().cdf(x) == 0.5 * math.erfc(-x / _SQRT2) != 0.5 * (1.0 + math.erf(x / _SQRT2))


#: Φ as ``0.5 · erfc(-x/√2)`` (True) or ``0.5 · (1 + erf(x/√2))`` (False): whichever this Python's
#: ``statistics.NormalDist.cdf`` uses, so that the kernels agree with openskill run on the same Python.
PHI_VIA_ERFC = _cdf_uses_erfc()


@kernel
def phi_minor(x):
    """The standard normal density φ(x) (``NormalDist().pdf``)."""
    return math.exp(x * x / -2.0) / _SQRT_TAU


@kernel
def phi_major(x):
    """The standard normal cdf Φ(x) (``NormalDist().cdf``, see :data:`PHI_VIA_ERFC`)."""
    if PHI_VIA_ERFC:
        return 0.5 * math.erfc((0.0 - x) / _SQRT2)
    return 0.5 * (1.0 + math.erf(x / _SQRT2))


# Wichura's AS241 coefficients, highest power first (numerator, denominator), as in Python's statistics.
_CENTRAL_NUM = np.array(
    [
        2.5090809287301226727e3,
        3.3430575583588128105e4,
        6.7265770927008700853e4,
        4.5921953931549871457e4,
        1.3731693765509461125e4,
        1.9715909503065514427e3,
        1.3314166789178437745e2,
        3.3871328727963666080e0,
    ]
)
_CENTRAL_DEN = np.array(
    [
        5.2264952788528545610e3,
        2.8729085735721942674e4,
        3.9307895800092710610e4,
        2.1213794301586595867e4,
        5.3941960214247511077e3,
        6.8718700749205790830e2,
        4.2313330701600911252e1,
        1.0,
    ]
)
_NEAR_NUM = np.array(
    [
        7.74545014278341407640e-4,
        2.27238449892691845833e-2,
        2.41780725177450611770e-1,
        1.27045825245236838258e0,
        3.64784832476320460504e0,
        5.76949722146069140550e0,
        4.63033784615654529590e0,
        1.42343711074968357734e0,
    ]
)
_NEAR_DEN = np.array(
    [
        1.05075007164441684324e-9,
        5.47593808499534494600e-4,
        1.51986665636164571966e-2,
        1.48103976427480074590e-1,
        6.89767334985100004550e-1,
        1.67638483018380384940e0,
        2.05319162663775882187e0,
        1.0,
    ]
)
_FAR_NUM = np.array(
    [
        2.01033439929228813265e-7,
        2.71155556874348757815e-5,
        1.24266094738807843860e-3,
        2.65321895265761230930e-2,
        2.96560571828504891230e-1,
        1.78482653991729133580e0,
        5.46378491116411436990e0,
        6.65790464350110377720e0,
    ]
)
_FAR_DEN = np.array(
    [
        2.04426310338993978564e-15,
        1.42151175831644588870e-7,
        1.84631831751005468180e-5,
        7.86869131145613259100e-4,
        1.48753612908506148525e-2,
        1.36929880922735805310e-1,
        5.99832206555887937690e-1,
        1.0,
    ]
)


@kernel
def _horner(coefficients, x):
    """Σ c_k x^(n-k) as (((c_0 x + c_1) x + c_2) ...) + c_n, Python's evaluation order."""
    value = coefficients[0]
    for k in range(1, coefficients.shape[0]):
        value = value * x + coefficients[k]
    return value


@kernel
def phi_major_inverse(p):
    """The standard normal quantile Φ⁻¹(p) for 0 < p < 1 (``NormalDist().inv_cdf``), NaN outside.

    Wichura, "Algorithm AS 241: The Percentage Points of the Normal Distribution", Applied Statistics 37
    (1988) 477-484: rational approximations in the centre (|p - 1/2| <= 0.425) and in two tail ranges of
    r = sqrt(-log(min(p, 1 - p))), relative accuracy about 1e-16, with Python's coefficients and order."""
    if not (0.0 < p < 1.0):
        return math.nan
    q = p - 0.5
    if abs(q) <= 0.425:
        r = 0.180625 - q * q
        return (_horner(_CENTRAL_NUM, r) * q) / _horner(_CENTRAL_DEN, r)
    r = p if q <= 0.0 else 1.0 - p
    r = math.sqrt(-math.log(r))
    if r <= 5.0:
        r = r - 1.6
        x = _horner(_NEAR_NUM, r) / _horner(_NEAR_DEN, r)
    else:
        r = r - 5.0
        x = _horner(_FAR_NUM, r) / _horner(_FAR_DEN, r)
    if q < 0.0:
        x = -x
    return x


# --------------------------------------------------------------------------------------------------
# The Thurstone-Mosteller corrections of Weng & Lin's Algorithm 3, with openskill's guards.


@kernel
def v(x, t):
    """V(x, t) = φ(x - t)/Φ(x - t) (a win by margin t); -(x - t) when Φ(x - t) < machine ε."""
    xt = x - t
    denominator = phi_major(xt)
    if denominator < _EPSILON:
        return -xt
    return phi_minor(xt) / denominator


@kernel
def w(x, t):
    """W(x, t) = V(x, t)(V(x, t) + x - t); when Φ(x - t) < machine ε openskill returns 1 if
    x < 0 (note: x, not x - t) else 0."""
    xt = x - t
    denominator = phi_major(xt)
    if denominator < _EPSILON:
        return 1.0 if x < 0.0 else 0.0
    return v(x, t) * (v(x, t) + xt)


@kernel
def vt(x, t):
    """Ṽ(x, t) for a draw within ±t: (φ(-t-|x|) - φ(t-|x|))/(Φ(t-|x|) - Φ(-t-|x|)) signed as x;
    when the interval mass is below 1e-5 openskill returns -x - t (x < 0) or -x + t."""
    xx = abs(x)
    b = phi_major(t - xx) - phi_major(-t - xx)
    if b < 1e-5:
        if x < 0.0:
            return -x - t
        return -x + t
    a = phi_minor(-t - xx) - phi_minor(t - xx)
    return (-a if x < 0.0 else a) / b


@kernel
def wt(x, t):
    """W̃(x, t), the draw's variance factor: ((t-|x|)φ(t-|x|) + (t+|x|)φ(-t-|x|))/b + Ṽ(x, t)², with b the
    interval mass as in :func:`vt`; 1 when b < machine ε."""
    xx = abs(x)
    b = phi_major(t - xx) - phi_major(-t - xx)
    if b < _EPSILON:
        return 1.0
    return ((t - xx) * phi_minor(t - xx) + (t + xx) * phi_minor(-t - xx)) / b + vt(x, t) * vt(x, t)


@kernel
def v_and_w(x, t):
    """``(V(x, t), W(x, t))`` in one evaluation of Φ and φ, each equal to :func:`v` and :func:`w`."""
    xt = x - t
    denominator = phi_major(xt)
    if denominator < _EPSILON:
        return -xt, (1.0 if x < 0.0 else 0.0)
    value = phi_minor(xt) / denominator
    return value, value * (value + xt)


@kernel
def vt_and_wt(x, t):
    """``(Ṽ(x, t), W̃(x, t))`` in one evaluation of Φ and φ, each equal to :func:`vt` and :func:`wt`."""
    xx = abs(x)
    b = phi_major(t - xx) - phi_major(-t - xx)
    if b < 1e-5:
        value = -x - t if x < 0.0 else -x + t
    else:
        a = phi_minor(-t - xx) - phi_minor(t - xx)
        value = (-a if x < 0.0 else a) / b
    if b < _EPSILON:
        return value, 1.0
    return value, ((t - xx) * phi_minor(t - xx) + (t + xx) * phi_minor(-t - xx)) / b + value * value


# --------------------------------------------------------------------------------------------------
# Team ratings, weights, ranks.


@inlined_kernel
def team_ratings(mu, sigma, team_bounds, balance, kappa, team_mu, team_sigma_sq, order, ordinal):
    """Each team's θ = Σ b·μ and σ² = Σ (b·σ)² into team_mu, team_sigma_sq (openskill's
    ``_calculate_team_ratings``), summed over the players sorted by ordinal μ - 3σ, best first (stable),
    as openskill sums. b = 1, or with ``balance`` b = 1 + (o_max - o)/(o_max + κ). ``order`` (int64) and
    ``ordinal`` (float64), one entry per row at least, are scratch."""
    n_teams = team_bounds.shape[0] - 1
    for t in range(n_teams):
        lo = team_bounds[t]
        hi = team_bounds[t + 1]
        for r in range(lo, hi):
            ordinal[r] = (mu[r] - 3.0 * sigma[r]) + 0.0
            # stable insertion sort, descending: move r left past strictly smaller ordinals only
            k = r
            while k > lo and ordinal[order[k - 1]] < ordinal[r]:
                order[k] = order[k - 1]
                k -= 1
            order[k] = r
        best = ordinal[order[lo]] if hi > lo else 0.0
        mu_sum = 0.0
        sigma_sq_sum = 0.0
        for k in range(lo, hi):
            r = order[k]
            if balance:
                b = 1.0 + (best - ordinal[r]) / (best + kappa)
            else:
                b = 1.0
            mu_sum += mu[r] * b
            sigma_sq_sum += square(sigma[r] * b)
        team_mu[t] = mu_sum
        team_sigma_sq[t] = sigma_sq_sum


@inlined_kernel
def scratch_team_ratings(scratch, settings, mu, sigma, team_bounds, mu_row, sigma_sq_row):
    """:func:`team_ratings` with the settings' ``balance`` and κ into the rows ``mu_row`` and
    ``sigma_sq_row`` of ``scratch``'s team floats (its sort in the row scratch); returns the two views."""
    row_floats, row_ints, team_floats, _, _ = scratch
    n_teams = team_bounds.shape[0] - 1
    team_mu = borrowed_row(team_floats, mu_row, n_teams)
    team_sigma_sq = borrowed_row(team_floats, sigma_sq_row, n_teams)
    team_ratings(
        mu,
        sigma,
        team_bounds,
        settings[S_BALANCE] != 0.0,
        settings[S_KAPPA],
        team_mu,
        team_sigma_sq,
        borrowed_row(row_ints, ROW_ORDER, row_ints.shape[1]),
        borrowed_row(row_floats, ROW_ORDINAL, row_floats.shape[1]),
    )
    return team_mu, team_sigma_sq


@inlined_kernel
def normalized_weights(weight, team_bounds, lo_bound, hi_bound, out):
    """openskill's per-team ``_normalize`` of the partial-play weights to [lo_bound, hi_bound]: a one-player
    team gets hi_bound; otherwise w ↦ (w - min)/range · (hi - lo) + lo with range = max - min, or 0.0001
    when all weights are equal (they then all get lo_bound). NaN bounds (weight_bounds=None): raw weights."""
    n_teams = team_bounds.shape[0] - 1
    raw = math.isnan(lo_bound) or math.isnan(hi_bound)
    for t in range(n_teams):
        lo = team_bounds[t]
        hi = team_bounds[t + 1]
        if raw:
            for r in range(lo, hi):
                out[r] = weight[r]
            continue
        if hi - lo == 1:
            out[lo] = hi_bound
            continue
        w_min = weight[lo]
        w_max = weight[lo]
        for r in range(lo + 1, hi):
            if weight[r] < w_min:
                w_min = weight[r]
            if weight[r] > w_max:
                w_max = weight[r]
        source_range = w_max - w_min
        if source_range == 0.0:
            source_range = 0.0001
        target_range = hi_bound - lo_bound
        for r in range(lo, hi):
            out[r] = ((weight[r] - w_min) / source_range) * target_range + lo_bound


@inlined_kernel
def competition_ranks(values, out):
    """0-based competition ranks of ``values`` (smallest first; equal values share the rank of the first)
    into ``out``: openskill's ``_calculate_rankings``."""
    n = values.shape[0]
    for i in range(n):
        below = 0
        for j in range(n):
            if values[j] < values[i]:
                below += 1
        out[i] = below


@inlined_kernel
def stable_order(keys, order):
    """Indices sorting ``keys`` ascending, equal keys in their given order (Python's ``sorted``), into
    ``order``."""
    n = keys.shape[0]
    for i in range(n):
        k = i
        while k > 0 and keys[order[k - 1]] > keys[i]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = i


@kernel
def margin_factor(score_i, score_j, margin):
    """log1p(|s_i - s_j|/margin) when |s_i - s_j| > margin > 0, else 1: the pairwise models' divisor of the
    skill difference and, less 1, Plackett-Luce's multiplier."""
    score_diff = abs(score_i - score_j)
    if score_diff > 0.0 and score_diff > margin and margin > 0.0:
        return math.log1p(score_diff / margin)
    return 1.0


# --------------------------------------------------------------------------------------------------
# One match: preparation and the player update.


@inlined_kernel
def prepare_match(scratch, settings, mu, sigma, team_bounds, team_rank, team_score, has_score, weight, use_weights):
    """What every model needs before its Ω, Δ, in openskill's ``rate`` order, in ``scratch``
    (:func:`.scratch.match_scratch`).

    Returns ``(order, rank, score, sigma_tau, weights, team_mu, team_sigma_sq)``: ``order[k]`` the given
    team at sorted position k (stable sort by rank, as openskill's ``_unwind``); ``rank[k]`` and
    ``score[k]`` its rank (``team_rank``, or 0-based competition ranks of -score when ``has_score``) and
    score; per row the σ after τ, √(σ² + τ²), and the (normalised) weight, 1 without weights; per given
    team its θ and σ² from the σ after τ (with ``balance``)."""
    row_floats, row_ints, team_floats, team_ints, _ = scratch
    n_teams = team_bounds.shape[0] - 1
    n_rows = mu.shape[0]
    tau = settings[S_TAU]
    tau_squared = tau * tau
    sigma_tau = borrowed_row(row_floats, ROW_SIGMA_TAU, n_rows)
    for r in range(n_rows):
        sigma_tau[r] = math.sqrt(sigma[r] * sigma[r] + tau_squared)

    given_rank = borrowed_row(team_floats, TEAM_GIVEN_RANK, n_teams)
    if has_score:
        negated = borrowed_row(team_floats, TEAM_SCORE, n_teams)  # scratch until the sorted scores go there
        for t in range(n_teams):
            negated[t] = -team_score[t]
        competition_ranks(negated, given_rank)
    else:
        for t in range(n_teams):
            given_rank[t] = float(team_rank[t])

    weights = borrowed_row(row_floats, ROW_WEIGHTS, n_rows)
    if use_weights:
        normalized_weights(weight, team_bounds, settings[S_WEIGHT_LO], settings[S_WEIGHT_HI], weights)
    else:
        weights[:] = 1.0

    order = borrowed_row(team_ints, TEAM_ORDER, n_teams)
    stable_order(given_rank, order)
    rank = borrowed_row(team_floats, TEAM_RANK, n_teams)
    score = borrowed_row(team_floats, TEAM_SCORE, n_teams)
    for k in range(n_teams):
        rank[k] = given_rank[order[k]]
        score[k] = team_score[order[k]] if has_score else 0.0

    team_mu, team_sigma_sq = scratch_team_ratings(scratch, settings, mu, sigma_tau, team_bounds, TEAM_MU, TEAM_SIGMA_SQ)
    return order, rank, score, sigma_tau, weights, team_mu, team_sigma_sq


@inlined_kernel
def update_players(
    settings, mu, sigma_tau, weights, team_bounds, order, team_sigma_sq, omega, delta, strict, out_mu, out_sigma
):
    """The player update of Algorithms 1-4 for the team at each sorted position k:
    μ += σ²/σ_i² · Ω_k · w and σ *= √max(1 - σ²/σ_i² · Δ_k · w, κ) when Ω_k >= 0 (Ω_k > 0 if ``strict``),
    with w replaced by 1/w otherwise; σ is the σ after τ and w the (normalised) weight."""
    kappa = settings[S_KAPPA]
    for k in range(order.shape[0]):
        t = order[k]
        sigma_sq_team = team_sigma_sq[t]
        gain = omega[k] > 0.0 if strict else omega[k] >= 0.0
        for r in range(team_bounds[t], team_bounds[t + 1]):
            s = sigma_tau[r]
            share = square(s) / sigma_sq_team
            if gain:
                new_mu = mu[r] + share * omega[k] * weights[r]
                shrink = 1.0 - share * delta[k] * weights[r]
            else:
                new_mu = mu[r] + share * omega[k] / weights[r]
                shrink = 1.0 - share * delta[k] / weights[r]
            if kappa > shrink:
                shrink = kappa
            out_mu[r] = new_mu
            out_sigma[r] = s * math.sqrt(shrink)


@inlined_kernel
def average_ties(team_bounds, order, rank, out_mu):
    """openskill's averaging of the μ change over tied teams, reproduced literally: its change is measured
    against the already-updated player (the same object), so it is 0 and nothing moves unless μ is NaN or
    infinite, when the tied group becomes NaN."""
    n = order.shape[0]
    k = 0
    while k < n:
        end = k + 1
        while end < n and rank[end] == rank[k]:
            end += 1
        if end - k > 1:
            change = 0.0
            for g in range(k, end):
                first = team_bounds[order[g]]
                change += out_mu[first] - out_mu[first]
            change = change / (end - k)
            for g in range(k, end):
                t = order[g]
                for r in range(team_bounds[t], team_bounds[t + 1]):
                    out_mu[r] = out_mu[r] + change
        k = end


@inlined_kernel
def limit_sigma(settings, sigma, out_sigma):
    """With ``limit_sigma``, each new σ is capped at the σ before the match (before τ)."""
    if settings[S_LIMIT_SIGMA] != 0.0:
        for r in range(sigma.shape[0]):
            if sigma[r] < out_sigma[r]:
                out_sigma[r] = sigma[r]


@inlined_kernel
def sorted_teams(scratch, order, team_mu, team_sigma_sq):
    """θ and σ² of the teams in sorted order (position k holds team ``order[k]``), in ``scratch``."""
    team_floats = scratch[2]
    n = order.shape[0]
    mu_sorted = borrowed_row(team_floats, TEAM_MU_SORTED, n)
    sigma_sq_sorted = borrowed_row(team_floats, TEAM_SIGMA_SQ_SORTED, n)
    for k in range(n):
        mu_sorted[k] = team_mu[order[k]]
        sigma_sq_sorted[k] = team_sigma_sq[order[k]]
    return mu_sorted, sigma_sq_sorted


@inlined_kernel
def finish_match(
    settings,
    mu,
    sigma,
    sigma_tau,
    weights,
    team_bounds,
    order,
    rank,
    team_sigma_sq,
    omega,
    delta,
    strict,
    average,
    out_mu,
    out_sigma,
):
    """The end of every model's update: the players' new μ, σ from Ω, Δ (:func:`update_players`), the tie
    averaging of the full-pairing models and Plackett-Luce (``average``), then ``limit_sigma``."""
    update_players(
        settings, mu, sigma_tau, weights, team_bounds, order, team_sigma_sq, omega, delta, strict, out_mu, out_sigma
    )
    if average:
        average_ties(team_bounds, order, rank, out_mu)
    limit_sigma(settings, sigma, out_sigma)


@inlined_kernel
def zeroed_terms(scratch, n):
    """Ω and Δ of ``n`` teams in ``scratch``, set to 0 for a model's terms to accumulate into."""
    team_floats = scratch[2]
    omega = borrowed_row(team_floats, TEAM_OMEGA, n)
    delta = borrowed_row(team_floats, TEAM_DELTA, n)
    omega[:] = 0.0
    delta[:] = 0.0
    return omega, delta
