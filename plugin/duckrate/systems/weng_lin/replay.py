"""The five Weng-Lin models as team systems: their parameters, their registry entries and the kernel that
replays a team history through them (Weng & Lin, "A Bayesian Approximation Method for Online Ranking",
JMLR 12, 2011, as the ``openskill`` package 6.2.0 computes it).

Each match is rated by :func:`.rate.rate_match` from its players' ratings before it, after the forecast
:func:`.predict.predict_match` made from the same ratings. The match is given to the model as openskill's
``scores`` when the input has a ``score`` column (the ``margin`` option reads their differences), as its
``ranks`` otherwise; with ``weights`` (partial play, normalised per team into ``weight_bounds``) only when some
player of the match has a weight below 1, so a match everyone played in full is rated as openskill rates it
without weights.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import polars as pl

from duckrate.core.borrowed import borrowed, borrowed_row, borrowed_slice
from duckrate.core.errors import DuckrateInputError
from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.parameters import Parameter, nonnegative, positive
from duckrate.core.protocol import Preset
from duckrate.core.scales import TRUESKILL_MU
from duckrate.core.sync import store_release
from duckrate.systems.team import MU, SIGMA, TeamSystem, run_team_kernel
from duckrate.systems.team_batches import (
    borrowed_matches,
    borrowed_outputs,
    gather_match,
    rate_in_waves,
    ready,
    uses_weights,
    write_match,
)
from duckrate.systems.weng_lin.common import MODEL_CODES, settings_array
from duckrate.systems.weng_lin.predict import predict_match, predict_match_in
from duckrate.systems.weng_lin.rate import rate_match_in
from duckrate.systems.weng_lin.scratch import (
    ROW_INPUT,
    ROW_MU,
    ROW_NEW_MU,
    ROW_NEW_SIGMA,
    ROW_SIGMA,
    ROW_WEIGHT,
    TEAM_BOUNDS,
    TEAM_P_WIN,
    TEAM_PREDICTED,
    match_scratch,
)

BETA = Parameter("beta", 25.0 / 6.0, "a finite performance sd beta > 0", positive)
KAPPA = Parameter("kappa", 0.0001, "a finite floor kappa > 0 of the variance factor", positive)
TAU = Parameter("tau", 25.0 / 300.0, "a finite dynamics tau >= 0 (added to sigma before each match)", nonnegative)
LIMIT_SIGMA = Parameter("limit_sigma", False, "true or false: sigma never grows in a match", boolean=True)
BALANCE = Parameter("balance", False, "true or false: weigh a team's weaker players up (by ordinal)", boolean=True)
MARGIN = Parameter("margin", 0.0, "a finite margin >= 0: score differences beyond it move ratings more", nonnegative)
WEIGHT_MIN = Parameter(
    "weight_min",
    1.0,
    "a finite lower weight bound > 0 (NULL with weight_max: weights used as given)",
    positive,
    nullable=True,
)
WEIGHT_MAX = Parameter(
    "weight_max", 2.0, "a finite upper weight bound >= weight_min (NULL with weight_min)", positive, nullable=True
)
WEIGHT_BOUNDS = Parameter(
    "weight_bounds",
    (1.0, 2.0),
    "[low, high] with 0 < low <= high (openskill's weight_bounds; NULL: weights used as given)",
    positive,
    nullable=True,
    bounds=True,
)
EPSILON = Parameter("epsilon", 0.1, "a finite draw margin epsilon > 0 of the Thurstone-Mosteller models", positive)
WINDOW_SIZE = Parameter(
    "window_size",
    4,
    "a whole number >= 1: how many neighbouring ranks each team is compared with",
    lambda value: math.isfinite(value) and value >= 1,
    integer=True,
)


def weight_bounds(params: dict) -> tuple[float, float] | None:
    """The bounds each team's weights are rescaled into (None: weights as given), from ``weight_bounds`` or
    its older spelling ``weight_min``/``weight_max``, whichever was moved from the default; both moved must
    agree."""
    pair = params["weight_bounds"]
    low, high = params["weight_min"], params["weight_max"]
    spelled = None if low is None and high is None else (low, high)
    default = WEIGHT_BOUNDS.default
    if spelled == default:
        return pair
    if pair in (default, spelled):
        return spelled
    raise DuckrateInputError(
        f"weight_bounds = {list(pair) if pair is not None else None!r} but weight_min = {low!r}, weight_max = "
        f"{high!r}; expected one spelling of the weight bounds (weight_bounds, or weight_min and weight_max)"
    )


def _check(params: dict) -> None:
    low, high = params["weight_min"], params["weight_max"]
    if (low is None) != (high is None):
        raise DuckrateInputError(
            f"weight_min = {low!r}, weight_max = {high!r}; expected both NULL (weights as given) or both numbers"
        )
    if low is not None and high is not None and low > high:
        raise DuckrateInputError(f"weight_min = {low!r} > weight_max = {high!r}; expected weight_min <= weight_max")
    weight_bounds(params)


@inlined_kernel
def _rate_one(m, model, settings, matches, mu, sigma, outputs, scratch):
    _, order, team_start, match_teams, team_rank, team_score, has_score, weight, slot = matches
    row_floats, row_ints, team_floats, team_ints, _ = scratch
    t0, t1 = match_teams[m], match_teams[m + 1]
    n, k = team_start[t1] - team_start[t0], t1 - t0
    rows = borrowed_row(row_ints, ROW_INPUT, n)
    local_mu, local_sigma = borrowed_row(row_floats, ROW_MU, n), borrowed_row(row_floats, ROW_SIGMA, n)
    local_weight, bounds = borrowed_row(row_floats, ROW_WEIGHT, n), borrowed_row(team_ints, TEAM_BOUNDS, k + 1)
    gather_match(
        m, order, team_start, match_teams, slot, weight, mu, sigma, rows, local_mu, local_sigma, local_weight, bounds
    )
    p_win, ranks = borrowed_row(team_floats, TEAM_P_WIN, k), borrowed_row(team_ints, TEAM_PREDICTED, k)
    draw = predict_match_in(scratch, settings, local_mu, local_sigma, bounds, p_win, ranks)
    new_mu, new_sigma = borrowed_row(row_floats, ROW_NEW_MU, n), borrowed_row(row_floats, ROW_NEW_SIGMA, n)
    rate_match_in(
        scratch,
        model,
        settings,
        local_mu,
        local_sigma,
        bounds,
        borrowed_slice(team_rank, t0, t1),
        borrowed_slice(team_score, t0, t1),
        has_score[m],
        local_weight,
        uses_weights(local_weight),
        new_mu,
        new_sigma,
    )
    write_match(rows, bounds, local_mu, local_sigma, new_mu, new_sigma, p_win, ranks, draw, slot, mu, sigma, outputs)


@kernel
def weng_lin_span(model, settings, matches, sequence, done, mu, sigma, outputs, scratch):
    """Rate the matches ``sequence`` in order, each once the previous matches of its players are (``done``, see
    :func:`duckrate.systems.team_batches.rate_in_waves`), in ``scratch`` (:func:`.scratch.match_scratch` for
    the largest match; one per thread). The loop works on borrowed views of its arguments
    (:mod:`duckrate.core.borrowed`), so a match costs no reference counts."""
    matches, outputs = borrowed_matches(matches), borrowed_outputs(outputs)
    mu, sigma, sequence, done = borrowed(mu), borrowed(sigma), borrowed(sequence), borrowed(done)
    row_floats, row_ints, team_floats, team_ints, margins = scratch
    scratch = (borrowed(row_floats), borrowed(row_ints), borrowed(team_floats), borrowed(team_ints), borrowed(margins))
    previous, team_start, match_teams = matches[0], matches[2], matches[3]
    for i in range(sequence.shape[0]):
        m = sequence[i]
        if not ready(m, team_start, match_teams, previous, done):
            return
        _rate_one(m, model, settings, matches, mu, sigma, outputs, scratch)
        store_release(done, m, 1)


def model_settings(params: dict) -> np.ndarray:
    """A model's settings array (:func:`.common.settings_array`) from its resolved parameters."""
    bounds = weight_bounds(params)
    return settings_array(
        params["beta"],
        params["kappa"],
        params["tau"],
        params["limit_sigma"],
        params["balance"],
        params["margin"],
        bounds,
        epsilon=params.get("epsilon", EPSILON.default),
        window_size=params.get("window_size", WINDOW_SIZE.default),
    )


def _runner(name: str):
    code = MODEL_CODES[name]

    def run(prepared, priors, params, start):
        settings = model_settings(params)

        def rate(matches, mu, sigma, outputs):
            arrays, (most_rows, most_teams) = matches.kernel_arrays(), matches.largest()
            rate_in_waves(
                matches,
                lambda sequence, done: weng_lin_span(
                    code, settings, arrays, sequence, done, mu, sigma, outputs, match_scratch(most_rows, most_teams)
                ),
            )

        return run_team_kernel(name, prepared, priors, params, start, rate)

    return run


def _predictor(name: str):
    code = MODEL_CODES[name]

    def predict(params: dict, mu: np.ndarray, sigma: np.ndarray, bounds: np.ndarray, weight: np.ndarray):
        p_win = np.empty(len(bounds) - 1)
        ranks = np.empty(len(bounds) - 1, dtype=np.int64)
        p_draw = predict_match(code, model_settings(params), mu, sigma, bounds, p_win, ranks)
        return p_win, ranks, float(p_draw)

    return predict


_COMMON = (MU, SIGMA, BETA, KAPPA, TAU, LIMIT_SIGMA, BALANCE, MARGIN, WEIGHT_MIN, WEIGHT_MAX, WEIGHT_BOUNDS)
_PRESETS = (
    Preset(),
    Preset({"tau": 0.3, "limit_sigma": True, "balance": True, "margin": 2.0}),
    Preset(
        {"weight_min": None, "weight_max": None, "beta": 3.0},
        priors={"player": ["p0", "p1"], "rating": [30.0, 20.0], "sd": [2.0, 4.0]},
    ),
)
_GRID = {"beta": [25.0 / 12.0, 25.0 / 6.0, 25.0 / 3.0], "tau": [0.0, 25.0 / 300.0, 0.25]}


def _entry(name: str, title: str, algorithm: str, extra: tuple[Parameter, ...]) -> TeamSystem:
    return TeamSystem(
        name=name,
        summary=(
            f"Weng-Lin {title} over team matches (Weng & Lin, JMLR 2011, {algorithm}), as openskill 6.2.0 rates "
            "them: ties, margins, partial play."
        ),
        parameters=(*_COMMON[:4], *extra, *_COMMON[4:]),
        check=_check,
        run=_runner(name),
        predict=_predictor(name),
        scale=TRUESKILL_MU,
        grid=_GRID,
        presets=_PRESETS,
    )


PLACKETT_LUCE = _entry("plackett_luce", "Plackett-Luce", "Algorithm 4", ())
BRADLEY_TERRY_FULL = _entry("bradley_terry_full", "Bradley-Terry, full pairing", "Algorithm 1", ())
BRADLEY_TERRY_PART = _entry("bradley_terry_part", "Bradley-Terry, partial pairing", "Algorithm 2", (WINDOW_SIZE,))
THURSTONE_MOSTELLER_FULL = _entry(
    "thurstone_mosteller_full", "Thurstone-Mosteller, full pairing", "Algorithm 3", (EPSILON,)
)
THURSTONE_MOSTELLER_PART = _entry(
    "thurstone_mosteller_part", "Thurstone-Mosteller, partial pairing", "Algorithm 3", (EPSILON, WINDOW_SIZE)
)


_PARAMETER_DOCS = """
    Parameters
    ----------
    results : DataFrame with ``match_id``, ``played_at``, ``team``, ``player``, and ``rank`` (1 = best; equal ranks
        tie) or ``score`` (higher is better; equal scores tie), optionally ``weight`` (the player's share of the
        match, in (0, 1]; NULL = 1) and ``league``.
    mu, sigma : a newcomer's skill N(mu, sigma²) (openskill's 25 and 25/3).
    beta : the performance sd (25/6).
    kappa : the floor of the factor that shrinks sigma (0.0001).
    tau : the dynamics added to sigma before each match (25/300).
    limit_sigma : sigma never grows in a match.
    balance : weigh a team's weaker players (by ordinal) up in the team's rating.
    margin : with scores, a score difference beyond the margin moves ratings more (log(1 + diff/margin)).
    weight_min, weight_max : the bounds each team's weights are rescaled into; both None: the weights as given.
    weight_bounds : the same as openskill spells it, ``(low, high)`` or None; give one spelling or agreeing
        ones.{extra}
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd``, ``league``).
    state : a saved state (``duckrate.replay_state``) to continue from.
    chunk_size : the most rows rated at once (default ``duckrate.DEFAULT_CHUNK_ROWS``).

    Returns
    -------
    DataFrame, one row per (match, player): the team replay columns (``rating_*`` = mu, ``sd_*`` = sigma; the
    forecast before the match ``p_team_win``, ``predicted_rank``, ``p_draw``).
"""
_EPSILON_DOC = "\n    epsilon : the draw margin of the Thurstone-Mosteller models (0.1)."
_WINDOW_DOC = "\n    window_size : each team is compared with the teams this many ranks around it (4)."


def _python_function(system: TeamSystem, title: str, extra: str = ""):
    """``duckrate.<system>(results, <parameters>, priors=None, state=None, chunk_size=None)``: the replay rows
    of a ``team_results`` frame, its signature (names and defaults) the system's parameter list."""

    def replay(results: pl.DataFrame, *args, priors=None, state=None, chunk_size=None, **params) -> pl.DataFrame:
        names = [p.name for p in system.parameters]
        if len(args) > len(names):
            raise TypeError(f"{system.name}() takes at most {len(names) + 1} positional arguments")
        given = {**dict(zip(names, args)), **params}
        return system.with_state(results, state, priors, chunk_size, want_state=False, **given)[0]

    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    replay.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("results", keyword, annotation=pl.DataFrame),
            *(inspect.Parameter(p.name, keyword, default=p.default) for p in system.parameters),
            *(inspect.Parameter(name, keyword, default=None) for name in ("priors", "state", "chunk_size")),
        ],
        return_annotation=pl.DataFrame,
    )
    replay.__name__ = replay.__qualname__ = system.name
    replay.__doc__ = (
        f"Weng-Lin {title} over a ``team_results`` table (see :mod:`duckrate.systems.weng_lin.replay`).\n"
        + _PARAMETER_DOCS.format(extra=extra)
    )
    return replay


plackett_luce = _python_function(PLACKETT_LUCE, "Plackett-Luce")
bradley_terry_full = _python_function(BRADLEY_TERRY_FULL, "Bradley-Terry (full pairing)")
bradley_terry_part = _python_function(BRADLEY_TERRY_PART, "Bradley-Terry (partial pairing)", _WINDOW_DOC)
thurstone_mosteller_full = _python_function(
    THURSTONE_MOSTELLER_FULL, "Thurstone-Mosteller (full pairing)", _EPSILON_DOC
)
thurstone_mosteller_part = _python_function(
    THURSTONE_MOSTELLER_PART, "Thurstone-Mosteller (partial pairing)", _EPSILON_DOC + _WINDOW_DOC
)
