"""Glicko for ranked contests, as the Elo-MMR reference implementation runs it (its ``Glicko``; Ebtekar & Liu
2021 use it as a baseline): each contest is treated as one highly informative match against the field.

Per contest, every participant's sd first grows by the drift τ (σ ← sqrt(σ² + τ²)); then with
σ_p = β/√ω (ω the contest weight), q = (π/√3)/σ_p and s_ij the result of i against j (1 ahead, ½ tied,
0 behind; j over everyone, i included)::

    P_ij = F((μ_i - μ_j)/sqrt(σ_j² + σ_p²)),  F the logistic cdf with sd 1
    g_j = 1/sqrt(1 + σ_j²/σ_p²)
    σ_i' = 1/sqrt(1/σ_i² + q²/4),   μ_i' = μ_i + q σ_i'² Σ_j g_j (s_ij - P_ij) / n

(the reference fixes the information at ¼, "one highly informative match"). The system has no performance
of its own: the performance column is NaN.
"""

from __future__ import annotations

import polars as pl

from duckrate.core.contests import PreparedContests
from duckrate.systems.contest import INITIAL, INITIAL_SD, ContestSystem, run_fixed_kernel
from duckrate.systems.event_state import EventStart
from duckrate.systems.field_match import BETA, DRIFT, GLICKO_RULES, field_match_kernel

PLAYER_FIELDS = ("rating", "sd")


def run_glicko_contest(prepared: PreparedContests, priors, params: dict, start: EventStart):
    """The computed columns by input row and the players' saved rows (``PLAYER_FIELDS``) after the contests."""
    settings = (GLICKO_RULES, params["beta"], params["drift"], 0.0)
    return run_fixed_kernel(
        "glicko_contest", PLAYER_FIELDS, prepared, priors, params, start, field_match_kernel, settings
    )


GLICKO_CONTEST = ContestSystem(
    name="glicko_contest",
    summary=(
        "Glicko for ranked contests (Glickman 1999, as the Elo-MMR reference implementation runs it): each "
        "contest one highly informative match against the whole field."
    ),
    parameters=(
        INITIAL,
        INITIAL_SD,
        BETA,
        DRIFT,
    ),
    run=run_glicko_contest,
    grid={"beta": [200.0, 315.08922206661885, 400.0], "drift": [20.0, 35.0, 50.0]},
)


def glicko_contest(
    results: pl.DataFrame,
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    beta: float = BETA.default,
    drift: float = 35.0,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Glicko over a ``contest_results`` table, one update per contest (see the module docstring).

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at``, ``player``, ``rank`` (1 = best; equal ranks tie)
        and optionally ``league`` and ``weight`` (contest weight ω: the performance scale is β/√ω).
    initial, initial_sd : a newcomer's rating and sd (1500, 350).
    beta : the performance scale β (the reference's 400·(π/√3)/ln 10 ≈ 315.1).
    drift : the sd drift τ added before each contest a player enters (35).
    priors, state, chunk_size : as for :func:`duckrate.elo_mmr`.
    """
    return GLICKO_CONTEST.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        initial=initial,
        initial_sd=initial_sd,
        beta=beta,
        drift=drift,
    )[0]
