"""TrueSkill for teams as a team system: its parameters, its registry entry, its Python function and the
kernel that replays a team history through it (Herbrich, Minka & Graepel, "TrueSkill: A Bayesian Skill
Rating System", NIPS 2006, as the ``trueskill`` package 0.4.5 computes it with its scipy backend).

Each match is rated by :func:`.factor_graph.rate_match` from its players' ratings before it, after the
forecast :func:`.forecast.predict_match` made from the same ratings. Each player's ``weight`` is its share of
the team's performance (partial play).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.core.borrowed import borrowed, borrowed_slice
from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.parameters import Parameter, nonnegative, positive
from duckrate.core.protocol import Preset
from duckrate.core.scales import TRUESKILL_MU
from duckrate.core.sync import store_release
from duckrate.systems.team import MU, SIGMA, TeamSystem, run_team_kernel
from duckrate.systems.team_batches import (
    borrowed_matches,
    borrowed_outputs,
    gathered_match,
    rate_in_waves,
    ready,
    write_match,
)
from duckrate.systems.trueskill_teams.factor_graph import rate_match, settings_array
from duckrate.systems.trueskill_teams.forecast import predict_match, predicted_ranks

BETA = Parameter("beta", 25.0 / 6.0, "a finite performance sd beta > 0", positive)
TAU = Parameter("tau", 25.0 / 300.0, "a finite dynamics tau >= 0 (added to sigma before each match)", nonnegative)
DRAW_PROBABILITY = Parameter(
    "draw_probability",
    0.10,
    "a draw probability in [0, 1) (it sets the draw margin)",
    lambda value: 0.0 <= value < 1.0,
)
MIN_DELTA = Parameter("min_delta", 0.0001, "a finite stopping threshold min_delta > 0 of the message passing", positive)


def model_settings(params: dict) -> np.ndarray:
    """The kernels' settings (:func:`.factor_graph.settings_array`) from the resolved parameters."""
    return settings_array(params["beta"], params["tau"], params["draw_probability"], params["min_delta"])


@inlined_kernel
def _rate_one(m, settings, matches, mu, sigma, outputs):
    _, order, team_start, match_teams, team_rank, team_score, has_score, weight, slot = matches
    rows, local_mu, local_sigma, local_weight, bounds = gathered_match(
        m, order, team_start, match_teams, slot, weight, mu, sigma
    )
    t0, t1 = match_teams[m], match_teams[m + 1]
    p_win = np.empty(t1 - t0)
    ranks = np.empty(t1 - t0, dtype=np.int64)
    draw = predict_match(settings, local_mu, local_sigma, bounds, local_weight, p_win)
    predicted_ranks(p_win, ranks)
    new_mu = np.empty(len(rows))
    new_sigma = np.empty(len(rows))
    rate_match(
        settings, local_mu, local_sigma, bounds, borrowed_slice(team_rank, t0, t1), local_weight, new_mu, new_sigma
    )
    write_match(rows, bounds, local_mu, local_sigma, new_mu, new_sigma, p_win, ranks, draw, slot, mu, sigma, outputs)


@kernel
def trueskill_teams_span(settings, matches, sequence, done, mu, sigma, outputs):
    """Rate the matches ``sequence`` in order, each once the previous matches of its players are (``done``, see
    :func:`duckrate.systems.team_batches.rate_in_waves`), on borrowed views of the arguments
    (:mod:`duckrate.core.borrowed`)."""
    matches, outputs = borrowed_matches(matches), borrowed_outputs(outputs)
    mu, sigma, sequence, done = borrowed(mu), borrowed(sigma), borrowed(sequence), borrowed(done)
    previous, team_start, match_teams = matches[0], matches[2], matches[3]
    for i in range(sequence.shape[0]):
        m = sequence[i]
        if not ready(m, team_start, match_teams, previous, done):
            return
        _rate_one(m, settings, matches, mu, sigma, outputs)
        store_release(done, m, 1)


def _run(prepared, priors, params, start):
    settings = model_settings(params)
    return run_team_kernel(
        "trueskill_teams",
        prepared,
        priors,
        params,
        start,
        lambda matches, mu, sigma, outputs: rate_in_waves(
            matches,
            lambda sequence, done: trueskill_teams_span(
                settings, matches.kernel_arrays(), sequence, done, mu, sigma, outputs
            ),
        ),
    )


def _predict(params: dict, mu: np.ndarray, sigma: np.ndarray, bounds: np.ndarray, weight: np.ndarray):
    p_win = np.empty(len(bounds) - 1)
    ranks = np.empty(len(bounds) - 1, dtype=np.int64)
    p_draw = predict_match(model_settings(params), mu, sigma, bounds, weight, p_win)
    predicted_ranks(p_win, ranks)
    return p_win, ranks, float(p_draw)


TRUESKILL_TEAMS = TeamSystem(
    name="trueskill_teams",
    summary=(
        "TrueSkill for teams (Herbrich, Minka & Graepel, NIPS 2006): a team's performance is the weighted sum "
        "of its players', any number of teams, draws by a draw margin, partial play; as the trueskill package "
        "0.4.5 computes it."
    ),
    parameters=(MU, SIGMA, BETA, TAU, DRAW_PROBABILITY, MIN_DELTA),
    run=_run,
    predict=_predict,
    scale=TRUESKILL_MU,
    grid={"beta": [25.0 / 12.0, 25.0 / 6.0, 25.0 / 3.0], "tau": [0.0, 25.0 / 300.0, 0.25]},
    presets=(
        Preset(),
        Preset({"draw_probability": 0.0, "tau": 0.3, "beta": 3.0}),
        Preset({"draw_probability": 0.3}, priors={"player": ["p0", "p1"], "rating": [30.0, 20.0], "sd": [2.0, 4.0]}),
    ),
)


def trueskill_teams(
    results: pl.DataFrame,
    mu: float = MU.default,
    sigma: float = SIGMA.default,
    beta: float = BETA.default,
    tau: float = TAU.default,
    draw_probability: float = DRAW_PROBABILITY.default,
    min_delta: float = MIN_DELTA.default,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """TrueSkill over a ``team_results`` table (see the module docstring).

    Parameters
    ----------
    results : DataFrame with ``match_id``, ``played_at``, ``team``, ``player``, and ``rank`` (1 = best; equal ranks
        tie) or ``score`` (higher is better; equal scores tie), optionally ``weight`` (the player's share of the
        match, in (0, 1]; NULL = 1) and ``league``.
    mu, sigma : a newcomer's skill N(mu, sigma²) (25 and 25/3).
    beta : the performance sd (25/6).
    tau : the dynamics added to sigma before each match (25/300).
    draw_probability : the probability of a draw between two even players, which sets the draw margin (0.10).
    min_delta : the message passing stops when no message moves by more (0.0001).
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd``, ``league``).
    state : a saved state (``duckrate.replay_state``) to continue from.
    chunk_size : the most rows rated at once (default ``duckrate.DEFAULT_CHUNK_ROWS``).

    Returns
    -------
    DataFrame, one row per (match, player): the team replay columns (``rating_*`` = mu, ``sd_*`` = sigma; the
    forecast before the match ``p_team_win``, ``predicted_rank``, ``p_draw``).
    """
    return TRUESKILL_TEAMS.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        mu=mu,
        sigma=sigma,
        beta=beta,
        tau=tau,
        draw_probability=draw_probability,
        min_delta=min_delta,
    )[0]
