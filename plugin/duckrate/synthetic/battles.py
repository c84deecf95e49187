"""Arena-shaped battles (LMArena-like) from a known static Bradley-Terry truth: :func:`generate_battles` and
the truth it can return, :class:`BattleTruth`.

Style covariates, ties, users with correlated votes and non-uniform (adaptive) pair sampling; fully
vectorised, so 10M rows take seconds. Deterministic: all randomness comes from one
``numpy.random.Generator(PCG64(seed))`` drawn in a fixed order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, overload

import numpy as np
import polars as pl
from scipy.special import expit, ndtr

from duckrate.core.scales import POINTS_PER_NATURAL
from duckrate.synthetic.columns import MICROSECONDS_PER_SECOND, player_names, to_epoch_microseconds

#: Names of the style covariates of :func:`generate_battles`, in column order (more are ``x5_diff``, ...).
BATTLE_COVARIATES = ("len_diff", "md_headers_diff", "bold_diff", "md_lists_diff")
#: Default true coefficients of those covariates, natural (logit) units per unit of the covariate.
_BATTLE_BETA = (0.8, 0.4, 0.2, 0.1)
#: Rating points per natural (logit) unit: ``400 / ln 10``.
_POINTS = POINTS_PER_NATURAL


@dataclass(frozen=True)
class BattleTruth:
    """The known truth behind :func:`generate_battles`'s output.

    Attributes
    ----------
    ratings : polars.DataFrame
        One row per model/player, in index order: ``player`` (Utf8), ``theta`` (Float64, natural units,
        mean zero), ``rating`` (``1500 + 400/ln10 * theta``), ``activity`` (Float64, the relative sampling
        weight of the player as the first of a pair, mean one).
    covariates : tuple of str
        Names of the covariate columns, in order.
    beta : numpy.ndarray
        True coefficients of the covariates in natural (logit) units per unit of the covariate.
    tie_scale : float
        ``kappa`` of the tie model: ``P(tie) = kappa * 4 p (1 - p)``.
    user_corr : float
        Largest correlation of the latent vote noise between two battles of one user.
    """

    ratings: pl.DataFrame
    covariates: tuple[str, ...]
    beta: np.ndarray
    tie_scale: float
    user_corr: float

    @property
    def theta(self) -> np.ndarray:
        """True strengths in natural units (mean zero), by player index."""
        return self.ratings["theta"].to_numpy()

    @property
    def beta_points(self) -> np.ndarray:
        """True coefficients in rating points per unit of the covariate (``400/ln10 * beta``)."""
        return self.beta * _POINTS


# The frame alone, or with return_truth=True the frame and its truth.
@overload
def generate_battles(
    n_models: int = 130,
    n_battles: int = 1_500_000,
    seed: int = 0,
    *,
    tie_rate: float = 0.10,
    n_covariates: int = 3,
    beta: Sequence[float] | None = None,
    adaptive: bool = True,
    n_users: int | None = None,
    user_corr: float = 0.3,
    skill_sd: float = 100.0,
    activity_sd: float = 1.0,
    user_activity_sd: float = 2.0,
    match_window: float | None = None,
    style_sd: float = 0.5,
    start: datetime = datetime(2024, 1, 1),
    seconds_between_battles: float = 1.0,
    return_truth: Literal[False] = False,
) -> pl.DataFrame: ...


@overload
def generate_battles(
    n_models: int = 130,
    n_battles: int = 1_500_000,
    seed: int = 0,
    *,
    tie_rate: float = 0.10,
    n_covariates: int = 3,
    beta: Sequence[float] | None = None,
    adaptive: bool = True,
    n_users: int | None = None,
    user_corr: float = 0.3,
    skill_sd: float = 100.0,
    activity_sd: float = 1.0,
    user_activity_sd: float = 2.0,
    match_window: float | None = None,
    style_sd: float = 0.5,
    start: datetime = datetime(2024, 1, 1),
    seconds_between_battles: float = 1.0,
    return_truth: Literal[True],
) -> tuple[pl.DataFrame, BattleTruth]: ...


def generate_battles(
    n_models: int = 130,
    n_battles: int = 1_500_000,
    seed: int = 0,
    *,
    tie_rate: float = 0.10,
    n_covariates: int = 3,
    beta: Sequence[float] | None = None,
    adaptive: bool = True,
    n_users: int | None = None,
    user_corr: float = 0.3,
    skill_sd: float = 100.0,
    activity_sd: float = 1.0,
    user_activity_sd: float = 2.0,
    match_window: float | None = None,
    style_sd: float = 0.5,
    start: datetime = datetime(2024, 1, 1),
    seconds_between_battles: float = 1.0,
    return_truth: bool = False,
) -> pl.DataFrame | tuple[pl.DataFrame, BattleTruth]:
    """Generate arena-shaped battles (LMArena-like) from a known static Bradley-Terry truth.

    With ``n_covariates=0`` and many players it also makes large plain rating sets (for example
    ``generate_battles(50_000, 1_000_000, n_covariates=0)``); everything is vectorised, so 10M battles
    take seconds.

    Model
    -----
    * Model ``i`` has a fixed strength ``theta_i ~ N(0, skill_sd)`` (drawn in rating points, stored in
      natural units ``theta = points * ln10 / 400``, then centred to mean zero) and an activity weight
      ``exp(N(0, activity_sd))``.
    * Pairs (non-uniform): the first model of a pair is drawn by activity. With ``adaptive`` its opponent
      is the model ``1 + floor(Exp(match_window))`` places above or below it in the true order
      (wrapping around), so near pairs are far more frequent than far ones, as LMArena's sampling favours
      some pairs; without it the opponent is drawn by activity too. Which model is ``player_a`` is a
      fair coin. Every model plays at least twice and the comparison graph is connected: ``n_models - 1``
      battles, at random places in the frame, pair the neighbours of the true order (a chain) and are
      ties, which also makes the plain maximum-likelihood fit finite (a draw links both ways).
    * Covariates: for covariate ``k`` each model has a style level ``m_ki ~ N(0, style_sd)``; a battle's
      value is the normalised difference ``(L_a - L_b) / (L_a + L_b)`` of lognormal per-response amounts
      ``L = exp(m + N(0, 0.5))``, that is ``tanh((m_ka - m_kb) / 2 + N(0, 0.5) / sqrt(2))`` in ``(-1, 1)``.
      Columns are named ``len_diff``, ``md_headers_diff``, ``bold_diff``, ``md_lists_diff``, then
      ``x5_diff``, ...; styles are tied to models, so leaving them out shifts the ratings.
    * Outcome: ``p = sigmoid(theta_a - theta_b + beta . x)``; a tie happens with probability
      ``t = kappa * 4 p (1 - p)``, ``player_a`` wins with ``p - t/2`` and loses with ``1 - p - t/2``, so the
      expected ``score_a`` is exactly ``p`` (a Bradley-Terry fit with ties as half points estimates the
      truth, and ties make the sandwich variance smaller than the model's). ``kappa`` (at most 1/2) is set
      so that the expected tie rate, the chain's ties included, is ``tie_rate`` (lower if out of reach).
    * Users: battle ``g`` has a ``user_id`` drawn by a heavy-tailed lognormal activity over ``n_users``
      users (a few users cast many votes). Each user has a lean ``z ~ N(0, 1)``; the latent normal behind
      the outcome's uniform is ``c z + sqrt(1 - c^2) e`` with loading ``c = sqrt(user_corr) *
      clip(h, -1, 1)``, where ``h`` is the first covariate (length) plus ``+-1`` when the two models are in
      different halves of a fixed random split of the models (sign: ``player_a``'s half). So a user
      consistently favours longer answers, or one half of the models, while every battle's outcome
      probabilities stay exactly as above: a user's battles are correlated, and a sandwich clustered by
      ``user_id`` is wider than the per-battle one (about twice for the length coefficient by default,
      a few to tens of percent for the strengths).
    * ``played_at`` increases by exponential gaps of mean ``seconds_between_battles`` (whole seconds).

    Parameters
    ----------
    n_models : int, default 130
        Number of models (players), at least 2.
    n_battles : int, default 1_500_000
        Number of battles, at least ``n_models - 1``.
    seed : int, default 0
        Seed of the ``PCG64`` generator; equal arguments give identical frames.
    tie_rate : float, default 0.10
        Expected share of ties, in ``[0, 0.5)``.
    n_covariates : int, default 3
        Number of style covariate columns.
    beta : sequence of float, optional
        True covariate coefficients in natural units per unit of the covariate; defaults to the first
        ``n_covariates`` of ``(0.8, 0.4, 0.2, 0.1)`` (0.1 beyond).
    adaptive : bool, default True
        Pair models near in strength far more often (see Model).
    n_users : int, optional
        Number of users; defaults to ``max(1, n_battles // 20)``.
    user_corr : float, default 0.3
        Largest within-user correlation of the latent vote noise, in ``[0, 1]`` (0: independent votes).
    skill_sd : float, default 100.0
        Spread of the true strengths in rating points.
    activity_sd : float, default 1.0
        Log-scale spread of the models' activity weights.
    user_activity_sd : float, default 2.0
        Log-scale spread of the users' activity weights.
    match_window : float, optional
        Mean distance in places of an adaptive pairing; defaults to ``max(2, n_models / 10)``.
    style_sd : float, default 0.5
        Spread of the models' style levels.
    start : datetime, default 2024-01-01 00:00
        Time origin.
    seconds_between_battles : float, default 1.0
        Mean gap between consecutive battles.
    return_truth : bool, default False
        Also return the :class:`BattleTruth`.

    Returns
    -------
    polars.DataFrame, or (polars.DataFrame, BattleTruth) with ``return_truth``
        Columns ``match_id`` (Int64, 1..n), ``played_at`` (Datetime('us'), non-decreasing), ``player_a``,
        ``player_b`` (Utf8, ``p000001``, ...), ``score_a`` (Float64: 1, 0.5 or 0), the covariates
        (Float64), ``user_id`` (Int64, 1..n_users).
    """
    if n_models < 2:
        raise ValueError("n_models must be >= 2")
    if n_battles < n_models - 1:
        raise ValueError("n_battles must be >= n_models - 1 (the chain that connects every model)")
    if not 0.0 <= tie_rate < 0.5:
        raise ValueError("tie_rate must be in [0, 0.5)")
    if n_covariates < 0:
        raise ValueError("n_covariates must be >= 0")
    if beta is None:
        beta = [_BATTLE_BETA[k] if k < len(_BATTLE_BETA) else 0.1 for k in range(n_covariates)]
    coefficients = np.asarray(beta, dtype=np.float64)
    if coefficients.shape != (n_covariates,):
        raise ValueError("beta must have n_covariates entries")
    if n_users is None:
        n_users = max(1, n_battles // 20)
    if n_users < 1:
        raise ValueError("n_users must be >= 1")
    if not 0.0 <= user_corr <= 1.0:
        raise ValueError("user_corr must be in [0, 1]")
    if match_window is None:
        match_window = max(2.0, n_models / 10.0)
    if match_window <= 0:
        raise ValueError("match_window must be > 0")
    if seconds_between_battles < 0:
        raise ValueError("seconds_between_battles must be >= 0")
    names = [BATTLE_COVARIATES[k] if k < len(BATTLE_COVARIATES) else f"x{k + 1}_diff" for k in range(n_covariates)]

    rng = np.random.Generator(np.random.PCG64(seed))
    # Per model, per user; the order of the draws is part of the output's definition.
    theta = rng.normal(0.0, skill_sd, n_models) / _POINTS
    theta -= theta.mean()
    activity = np.exp(rng.normal(0.0, activity_sd, n_models))
    activity /= activity.mean()
    style = rng.normal(0.0, style_sd, (n_covariates, n_models))
    group = np.where(rng.random(n_models) < 0.5, 1.0, -1.0)
    user_weight = np.exp(rng.normal(0.0, user_activity_sd, n_users))
    user_lean = rng.standard_normal(n_users)

    # Per battle.
    # Draws by weight: multinomial counts, repeated and shuffled (far faster than inverse-CDF look-ups).
    first = np.repeat(np.arange(n_models, dtype=np.int64), rng.multinomial(n_battles, activity / activity.sum()))
    rng.shuffle(first)
    partner_uniform = rng.random(n_battles)
    upward = rng.random(n_battles) < 0.5
    swap = rng.random(n_battles) < 0.5
    order = np.argsort(theta, kind="stable")  # places in the true order, weakest first
    if adaptive:
        place = np.empty(n_models, dtype=np.int64)
        place[order] = np.arange(n_models, dtype=np.int64)
        distance = 1 + np.floor(-match_window * np.log1p(-partner_uniform)).astype(np.int64)
        distance = 1 + (distance - 1) % (n_models - 1)  # in 1..n-1: never the model itself
        second = order[(place[first] + np.where(upward, distance, -distance)) % n_models]
    else:
        second = np.repeat(np.arange(n_models, dtype=np.int64), rng.multinomial(n_battles, activity / activity.sum()))
        rng.shuffle(second)
        # A model drawn against itself meets a uniformly chosen other one instead.
        other = (first + 1 + np.floor(partner_uniform * (n_models - 1)).astype(np.int64)) % n_models
        second = np.where(second == first, other, second)
    chain = rng.choice(n_battles, n_models - 1, replace=False)
    first[chain] = order[:-1]
    second[chain] = order[1:]
    player_a = np.where(swap, second, first)
    player_b = np.where(swap, first, second)
    del first, second, partner_uniform, upward, swap

    covariates = np.empty((n_covariates, n_battles))
    logit = theta[player_a] - theta[player_b]
    for k in range(n_covariates):
        noise = rng.standard_normal(n_battles) * (0.5 / math.sqrt(2.0))
        covariates[k] = np.tanh(0.5 * (style[k, player_a] - style[k, player_b]) + noise)
        logit += coefficients[k] * covariates[k]
    user = np.repeat(np.arange(n_users, dtype=np.int64), rng.multinomial(n_battles, user_weight / user_weight.sum()))
    rng.shuffle(user)
    latent = rng.standard_normal(n_battles)
    # The user's lean loads on which side is in the first group and on the first covariate (length).
    loading = 0.5 * (group[player_a] - group[player_b])
    if n_covariates:
        loading += covariates[0]
    loading = math.sqrt(user_corr) * np.clip(loading, -1.0, 1.0)
    latent = loading * user_lean[user] + np.sqrt(1.0 - loading * loading) * latent
    del loading
    gaps = rng.exponential(seconds_between_battles, n_battles)

    p = expit(logit)
    del logit
    spread = 4.0 * p * (1.0 - p)
    # The chain's forced ties count towards tie_rate.
    spread[chain] = 0.0
    tie_scale = min(0.5, max(0.0, tie_rate * n_battles - chain.size) / max(float(spread.sum()), 1e-300))
    tie = tie_scale * spread
    uniform = ndtr(latent)
    loss_below = 1.0 - p - 0.5 * tie
    score_a = np.where(uniform < loss_below, 0.0, np.where(uniform < loss_below + tie, 0.5, 1.0))
    score_a[chain] = 0.5
    del p, spread, tie, uniform, loss_below, latent

    seconds = np.floor(np.cumsum(gaps)).astype(np.int64)
    played_at_us = to_epoch_microseconds(start) + seconds * MICROSECONDS_PER_SECOND
    players = player_names(n_models)
    columns = {
        "match_id": pl.Series(np.arange(1, n_battles + 1, dtype=np.int64)),
        "played_at": pl.Series(played_at_us, dtype=pl.Int64).cast(pl.Datetime("us")),
        "player_a": players.gather(player_a),
        "player_b": players.gather(player_b),
        "score_a": pl.Series(score_a, dtype=pl.Float64),
    }
    for k, name in enumerate(names):
        columns[name] = pl.Series(covariates[k], dtype=pl.Float64)
    columns["user_id"] = pl.Series(user + 1, dtype=pl.Int64)
    frame = pl.DataFrame(columns)
    if not return_truth:
        return frame
    truth = BattleTruth(
        ratings=pl.DataFrame(
            {
                "player": players,
                "theta": pl.Series(theta, dtype=pl.Float64),
                "rating": pl.Series(1500.0 + _POINTS * theta, dtype=pl.Float64),
                "activity": pl.Series(activity, dtype=pl.Float64),
            }
        ),
        covariates=tuple(names),
        beta=coefficients,
        tie_scale=tie_scale,
        user_corr=float(user_corr),
    )
    return frame, truth
