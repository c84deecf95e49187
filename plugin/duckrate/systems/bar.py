"""BAR, the Bayesian Approximation Ranking of Weng & Lin ("A Bayesian Approximation Method for Online Ranking",
JMLR 2011, Algorithm 1 with the Bradley-Terry full-pair model), as the Elo-MMR reference implementation runs it
(its ``BAR``): each contest is treated as one highly informative match against the field.

Per contest, every participant's sd first grows by the drift τ (σ ← sqrt(σ² + τ²)); then with
σ_p² = β²/ω (ω the contest weight) and s_ij the result of i against j (1 ahead, ½ tied, 0 behind; j over
everyone, i included)::

    c_ij = sqrt(σ_i² + σ_j² + 2σ_p²),  P_ij = F((μ_i - μ_j)/c_ij),  F the logistic cdf with sd 1
    μ_i' = μ_i + σ_i² Σ_j (s_ij - P_ij)/c_ij / n
    σ_i' = σ_i sqrt(max(1 - σ_i²/(4(σ_i² + 2σ_p²)), κ))

(the reference fixes the information at ¼/(σ_i² + 2σ_p²), "one highly informative match"). The system has no performance
of its own: the performance column is NaN.
"""

from __future__ import annotations

import polars as pl

from duckrate.core.contests import PreparedContests
from duckrate.core.parameters import Parameter
from duckrate.systems.contest import INITIAL, INITIAL_SD, ContestSystem, run_fixed_kernel
from duckrate.systems.event_state import EventStart
from duckrate.systems.field_match import BAR_RULES, BETA, DRIFT, field_match_kernel

PLAYER_FIELDS = ("rating", "sd")


def run_bar(prepared: PreparedContests, priors, params: dict, start: EventStart):
    """The computed columns by input row and the players' saved rows (``PLAYER_FIELDS``) after the contests."""
    settings = (BAR_RULES, params["beta"], params["drift"], params["kappa"])
    return run_fixed_kernel("bar", PLAYER_FIELDS, prepared, priors, params, start, field_match_kernel, settings)


BAR = ContestSystem(
    name="bar",
    summary=(
        "BAR, the Bayesian Approximation Ranking (Weng & Lin 2011, as the Elo-MMR reference implementation "
        "runs it): each contest one highly informative match against the whole field."
    ),
    parameters=(
        INITIAL,
        INITIAL_SD,
        BETA,
        DRIFT,
        Parameter("kappa", 1e-4, "a finite floor κ in (0, 1] on the sd's shrink factor", lambda v: 0 < v <= 1),
    ),
    run=run_bar,
    grid={"beta": [200.0, 315.08922206661885, 400.0], "drift": [20.0, 35.0, 50.0]},
)


def bar(
    results: pl.DataFrame,
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    beta: float = BETA.default,
    drift: float = 35.0,
    kappa: float = 1e-4,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """BAR over a ``contest_results`` table, one update per contest (see the module docstring).

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at``, ``player``, ``rank`` (1 = best; equal ranks tie)
        and optionally ``league`` and ``weight`` (contest weight ω: the performance scale is β/√ω).
    initial, initial_sd : a newcomer's rating and sd (1500, 350).
    beta : the performance scale β (the reference's 400·(π/√3)/ln 10 ≈ 315.1).
    drift : the sd drift τ added before each contest a player enters (35).
    kappa : the floor κ on the factor 1 - σ²/(4(σ² + 2σ_p²)) that shrinks the sd (1e-4).
    priors, state, chunk_size : as for :func:`duckrate.elo_mmr`.
    """
    return BAR.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        initial=initial,
        initial_sd=initial_sd,
        beta=beta,
        drift=drift,
        kappa=kappa,
    )[0]
