"""Bradley-Terry batch fits over a matches table: ``duckrate.bt_fit`` and the ``bt_fit`` SQL macro.

Model (the MAP paper, section 1.2; docs/papers.md): ``P(a beats b) = σ(θ_a - θ_b + α)``, θ natural-scale
strengths, α an optional side-A (first-move, home) effect; a draw counts as half a win each way; match
weights multiply a game's contribution. Estimates: plain MLE (``prior_sd`` NULL), ridge (``prior_sd``,
prior mean 1500) or MAP with per-player prior means (and sds) from a ``player_priors`` table on the
display scale, converted to natural units with ``ln(10)/400`` (the paper's text inverts the factor).
Each league is an independent fit. Ratings are reported as ``1500 + 400/ln10 · θ``: θ mean-zero for MLE and
ridge, or shifted so that ``anchor_player`` sits at ``anchor_rating``; with priors the prior fixes the scale.

Solvers: ``method := 'newton'`` (default; Newton-CG on the sparse Hessian, :mod:`._bt_newton`) or
``'mm'`` (the paper's MM with the Wright-omega form of the Lambert W update, :mod:`._bt_mm`); both stop
at gradient norm ``tol`` (natural units). Uncertainty: :mod:`._bt_uncertainty`.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ...errors import DuckrateInputError
from ...evaluation.ranks import INTERVAL_RANK_COLUMNS, with_interval_ranks
from ...matches import PreparedMatches, columns_from_polars, prepare_matches
from ...parameters import Parameter, Signature
from ...priors import check_positive_priors, initial_states, prior_columns
from ..league_games import league_rows, name_ordered_codes
from .existence import describe
from .model import evaluate
from .pairs import Pairs, pairs_from_rows
from .solve import NoFiniteOptimum, fit_pairs
from .uncertainty import (
    HESSIAN_HARD_LIMIT,
    HESSIAN_MAX_PLAYERS,
    Z_95,
    bootstrap_replicates,
    bootstrap_summary,
    hessian_variances,
    sparse_variances,
)

NATURAL_PER_POINT = math.log(10.0) / 400.0  # θ per rating point
POINTS_PER_NATURAL = 400.0 / math.log(10.0)
BASE_RATING = 1500.0

# Every parameter but the priors table, in the SQL macro's order (one place for defaults and checks).
BT_FIT = Signature(
    name="bt_fit",
    parameters=(
        Parameter(
            "prior_sd",
            None,
            "a prior sd > 0 in rating points, or NULL for the plain MLE",
            lambda v: math.isfinite(v) and v > 0,
            nullable=True,
        ),
        Parameter("method", "newton", "'newton' or 'mm'", choices=("newton", "mm")),
        Parameter("home_advantage", False, "true or false", boolean=True),
        Parameter("anchor_player", None, "a player name (VARCHAR) or NULL", nullable=True, text=True),
        Parameter("anchor_rating", BASE_RATING, "a finite rating for anchor_player"),
        Parameter(
            "uncertainty",
            "auto",
            "'auto', 'hessian', 'sparse', 'bootstrap' or 'none'",
            choices=("auto", "hessian", "sparse", "bootstrap", "none"),
        ),
        Parameter(
            "resamples",
            100,
            "an integer number of bootstrap resamples >= 2",
            lambda v: math.isfinite(v) and v >= 2,
            integer=True,
        ),
        Parameter("seed", 0, "an integer seed >= 0", lambda v: math.isfinite(v) and 0 <= v < 2**63, integer=True),
        Parameter("tol", 1e-9, "a gradient-norm tolerance > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter(
            "max_iter",
            None,
            "an integer >= 1, or NULL for the method's default (newton 100, mm 100000)",
            lambda v: math.isfinite(v) and v >= 1,
            nullable=True,
            integer=True,
        ),
    ),
)

#: Output columns and their Arrow types, in the contract's order (then this module's extras).
OUTPUT_SCHEMA = pa.schema(
    [
        ("league", pa.string()),
        ("player", pa.string()),
        ("rating", pa.float64()),
        ("sd", pa.float64()),
        ("lower", pa.float64()),
        ("upper", pa.float64()),
        ("games", pa.int64()),
        ("method", pa.string()),
        ("converged", pa.bool_()),
        ("iterations", pa.int64()),
        ("home_advantage", pa.float64()),
        ("uncertainty", pa.string()),
        ("resamples", pa.int64()),
        ("rank_upper", pa.int64()),
        ("rank_lower", pa.int64()),
        ("tier", pa.int64()),
        ("component", pa.int64()),
    ]
)


def comparison_components(pairs: Pairs) -> np.ndarray:
    """Each player's connected component of the comparison graph (an edge wherever two players met),
    numbered from 0 in no particular order."""
    graph = coo_matrix((np.ones(pairs.n_pairs), (pairs.a, pairs.b)), shape=(pairs.n_players, pairs.n_players))
    return connected_components(graph, directed=False)[1].astype(np.int64)


def numbered_by_first_appearance(labels: np.ndarray, leagues: list) -> np.ndarray:
    """Each league's labels renumbered 1, 2, ... in the order they first appear (rows sorted league by
    league, so the top-rated player's component is 1)."""
    out = np.empty(labels.shape[0], dtype=np.int64)
    seen: dict[int, int] = {}
    for k, label in enumerate(labels.tolist()):
        if k and leagues[k] != leagues[k - 1]:
            seen = {}
        if label not in seen:
            seen[label] = len(seen) + 1
        out[k] = seen[label]
    return out


def resolve_parameters(given: dict) -> dict:
    """Defaults overlaid with ``given``, every value checked (unknown names are errors)."""
    known = [p.name for p in BT_FIT.parameters]
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise DuckrateInputError(
            f"bt_fit: unknown parameter(s) {', '.join(unknown)}; expected some of {', '.join([*known, 'priors'])}"
        )
    return BT_FIT.resolve(given)


def _prior_arrays(prepared: PreparedMatches, priors, prior_sd: float | None):
    """Prior precision and mean (natural units) per state slot; zeros for the plain MLE."""
    if prior_sd is None:
        if priors is not None and len(priors.get("player", [])):
            raise DuckrateInputError(
                "bt_fit: priors need prior_sd (the prior's sd in rating points for players "
                "whose prior row has no sd, e.g. prior_sd := 200)"
            )
        zeros = np.zeros(prepared.n_states)
        return zeros, zeros.copy()
    check_positive_priors(priors, ("sd",), "bt_fit")
    states = initial_states(prepared, priors, {"rating": BASE_RATING, "sd": prior_sd})
    mu = (states["rating"] - BASE_RATING) * NATURAL_PER_POINT
    sigma = states["sd"] * NATURAL_PER_POINT
    return 1.0 / (sigma * sigma), mu


def _league_seed(seed: int, league_name) -> np.random.Generator:
    tag = zlib.crc32(("" if league_name is None else "L:" + str(league_name)).encode("utf-8"))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, tag])))


def _fit_league(pairs: Pairs, precision, mu, params, anchor, league_name, name_of) -> dict:
    """Fit one league; returns its reported arrays (natural-unit θ shifted to the reporting convention)."""
    where = "bt_fit" if league_name is None else f"bt_fit, league {league_name!r}"
    use_alpha = params["home_advantage"]
    tol = params["tol"]
    try:
        solution = fit_pairs(pairs, precision, mu, use_alpha, params["method"], tol, params["max_iter"])
    except NoFiniteOptimum as failure:
        if failure.existence is not None:
            raise DuckrateInputError(describe(failure.existence, name_of, where)) from None
        suggestion = (
            "fit without home_advantage"
            if "side A" in failure.reason
            else "set prior_sd (e.g. prior_sd := 300) for a MAP fit"
        )
        raise DuckrateInputError(f"{where}: no finite fit: {failure.reason}; {suggestion}") from None
    n = pairs.n_players
    shift = 0.0
    if anchor is not None:
        shift = (params["anchor_rating"] - BASE_RATING) * NATURAL_PER_POINT - solution.theta[anchor]

    def normalise(theta):
        theta = theta - theta.mean() if not params["with_priors"] else theta
        return (
            theta + ((params["anchor_rating"] - BASE_RATING) * NATURAL_PER_POINT - theta[anchor])
            if anchor is not None
            else theta
        )

    theta = solution.theta + shift
    sd = lower = upper = np.full(n, np.nan)
    kind = params["uncertainty"]
    if kind == "auto":
        kind = "hessian" if n <= HESSIAN_MAX_PLAYERS else "sparse"
    used = None
    if kind in ("hessian", "sparse"):
        if kind == "hessian" and n > HESSIAN_HARD_LIMIT:
            raise DuckrateInputError(
                f"{where}: uncertainty := 'hessian' with {n} players needs a dense {n}x{n} inverse; "
                f"the limit is {HESSIAN_HARD_LIMIT} players: use 'sparse', 'bootstrap' or 'none'"
            )
        grad, curvature, diagonal = np.empty(n + 1), np.empty(pairs.n_pairs), np.empty(n + 1)
        evaluate(
            pairs.a,
            pairs.b,
            pairs.wins,
            pairs.losses,
            solution.theta,
            solution.alpha,
            mu,
            precision,
            grad,
            curvature,
            diagonal,
        )
        centred = anchor is None and not params["with_priors"]  # MLE and ridge report θ mean-zero
        if kind == "hessian":
            variance, _ = hessian_variances(pairs, curvature, precision, use_alpha, anchor, centred)
        else:
            variance = sparse_variances(pairs, curvature, diagonal, precision, use_alpha, anchor, centred)
            if variance is None:  # belief propagation diverged: too little information around some player
                kind = "bootstrap"
        if variance is not None:
            sd = np.sqrt(np.maximum(variance, 0.0))
            lower, upper = theta - Z_95 * sd, theta + Z_95 * sd
    if kind == "bootstrap":
        refit_tol = max(tol, 1e-7)

        def refit(sample):
            return fit_pairs(
                sample, precision, mu, use_alpha, "newton", refit_tol, None, solution.theta, solution.alpha
            )

        refit.needs_existence = not np.any(precision > 0)
        try:
            replicates, _, used = bootstrap_replicates(
                pairs, refit, normalise, params["resamples"], _league_seed(params["seed"], league_name)
            )
        except NoFiniteOptimum:
            replicates, used = np.empty((0, n)), 0
        sd, lower, upper = bootstrap_summary(replicates)
    return {
        "theta": theta,
        "sd": sd,
        "lower": lower,
        "upper": upper,
        "solution": solution,
        "uncertainty": kind,
        "resamples": used,
        "alpha": solution.alpha if use_alpha else None,
    }


def fit_columns(columns: dict[str, pa.Array], priors, given: dict, table: str = "matches") -> pa.Table:
    """``bt_fit`` over Arrow columns (the Python API and the SQL UDF both land here): one row per
    (league, player), in the order of :data:`OUTPUT_SCHEMA`, sorted by league and rating (descending)."""
    params = resolve_parameters(given)
    prepared = prepare_matches(columns, table)
    priors = prior_columns(priors)
    precision_all, mu_all = _prior_arrays(prepared, priors, params["prior_sd"])
    params["with_priors"] = priors is not None and len(priors.get("player", [])) > 0
    if params["anchor_player"] is not None and params["with_priors"]:
        raise DuckrateInputError("bt_fit: give either priors (which fix the rating scale) or anchor_player, not both")
    local, members = name_ordered_codes(prepared)
    rows = league_rows(prepared)
    weighted = prepared.weight.shape[0] == prepared.n_rows
    anchor_code = None
    if params["anchor_player"] is not None:
        found = pc.index(prepared.players, params["anchor_player"]).as_py()
        anchor_code = found if found >= 0 else None
    out = {
        name: []
        for name in (
            "league",
            "player",
            "rating",
            "sd",
            "lower",
            "upper",
            "games",
            "method",
            "converged",
            "iterations",
            "home_advantage",
            "uncertainty",
            "resamples",
            "component",
        )
    }
    player_names = prepared.players.cast(pa.string())
    for league in range(prepared.n_leagues):
        slots = members[league]
        if slots.size == 0:
            continue
        league_name = prepared.league_names[league]
        games = rows[league]
        pairs = pairs_from_rows(
            local[prepared.state_a[games]],
            local[prepared.state_b[games]],
            prepared.score[games],
            prepared.weight[games] if weighted else None,
            slots.size,
        )
        anchor = None
        if params["anchor_player"] is not None:
            hit = (
                np.flatnonzero(prepared.state_player[slots] == anchor_code) if anchor_code is not None else np.empty(0)
            )
            if hit.size == 0:
                where = "" if league_name is None else f" in league {league_name!r}"
                raise DuckrateInputError(
                    f"bt_fit: anchor_player {params['anchor_player']!r} has no games{where}; "
                    "expected a player of every league fitted"
                )
            anchor = int(hit[0])
        player_codes = prepared.state_player[slots]
        fit = _fit_league(
            pairs,
            precision_all[slots],
            mu_all[slots],
            params,
            anchor,
            league_name,
            lambda code, codes=player_codes: player_names[int(codes[code])].as_py(),
        )
        n = slots.size
        solution = fit["solution"]
        out["league"].append(pa.array([league_name] * n, pa.string()))
        out["player"].append(player_names.take(pa.array(player_codes)))
        out["rating"].append(BASE_RATING + POINTS_PER_NATURAL * fit["theta"])
        for name in ("sd", "lower", "upper"):
            values = fit[name] * POINTS_PER_NATURAL + (BASE_RATING if name != "sd" else 0.0)
            out[name].append(pa.array(values, pa.float64(), from_pandas=True))  # NaN -> NULL
        out["games"].append(pairs.games)
        out["method"].append(pa.array([solution.method] * n, pa.string()))
        out["converged"].append(np.full(n, solution.converged))
        out["iterations"].append(np.full(n, solution.iterations, dtype=np.int64))
        alpha = fit["alpha"]
        out["home_advantage"].append(
            pa.array([None if alpha is None else alpha * POINTS_PER_NATURAL] * n, pa.float64())
        )
        out["uncertainty"].append(pa.array([fit["uncertainty"]] * n, pa.string()))
        out["resamples"].append(pa.array([fit["resamples"]] * n, pa.int64()))
        out["component"].append(comparison_components(pairs))
    arrays = []
    for field in OUTPUT_SCHEMA:
        if field.name in INTERVAL_RANK_COLUMNS:
            continue  # from the sorted table below
        parts = [
            pa.array(part, field.type) if not isinstance(part, pa.Array) else part.cast(field.type)
            for part in out[field.name]
        ]
        arrays.append(pa.concat_arrays(parts) if parts else pa.array([], field.type))
    fitted = pa.schema(
        [field for field in OUTPUT_SCHEMA if field.name not in INTERVAL_RANK_COLUMNS and field.name != "component"]
        + [OUTPUT_SCHEMA.field("component")]
    )
    result = pl.from_arrow(pa.Table.from_arrays(arrays, schema=fitted))
    result = result.sort(["league", "rating", "player"], descending=[False, True, False], nulls_last=True)
    components = numbered_by_first_appearance(result["component"].to_numpy(), result["league"].to_list())
    result = result.with_columns(pl.Series("component", components))
    return with_interval_ranks(result, ["league"]).select(OUTPUT_SCHEMA.names).to_arrow().cast(OUTPUT_SCHEMA)


def bt_fit(
    matches: pl.DataFrame,
    prior_sd: float | None = None,
    priors: pl.DataFrame | None = None,
    method: str = "newton",
    home_advantage: bool = False,
    anchor_player: str | None = None,
    anchor_rating: float = BASE_RATING,
    uncertainty: str = "auto",
    resamples: int = 100,
    seed: int = 0,
    tol: float = 1e-9,
    max_iter: int | None = None,
) -> pl.DataFrame:
    """Bradley-Terry fit of every league of a matches table.

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` (1 win,
        0.5 draw, 0 loss, fractions allowed) and optionally ``league`` (independent fits) and ``weight``.
    prior_sd : Gaussian prior sd in rating points (NULL: plain MLE). Without ``priors`` every prior mean
        is 1500 (ridge, ``λ = 1/σ²`` with ``σ = prior_sd·ln10/400``).
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd``, ``league``): per-player
        prior means (and sds) on the display scale; players without a row get 1500 and ``prior_sd``.
    method : 'newton' (Newton-CG, default) or 'mm' (the paper's MM iteration with Wright omega).
    home_advantage : also fit a side-A (first-move/home) effect α, reported in rating points.
    anchor_player, anchor_rating : report ratings shifted so this player has this rating (default: mean 1500).
    uncertainty : 'auto' (the dense inverse Hessian up to 1000 players per league, else 'sparse'),
        'hessian' (dense inverse), 'sparse' (the sparse Hessian by Gaussian belief propagation, about
        the cost of one more fit), 'bootstrap' or 'none'; ``resamples`` and ``seed`` drive the bootstrap.
    tol : stop when the gradient's Euclidean norm (natural units) is below this; ``max_iter`` caps the
        iterations (``converged`` says whether tol was reached).

    Returns
    -------
    DataFrame, one row per (league, player): ``league, player, rating, sd, lower, upper, games, method,
    converged, iterations, home_advantage, uncertainty, resamples``.

    Raises
    ------
    DuckrateInputError
        On bad input or parameters, and when the plain MLE does not exist (naming the players).
    """
    given = {
        "prior_sd": prior_sd,
        "method": method,
        "home_advantage": home_advantage,
        "anchor_player": anchor_player,
        "anchor_rating": anchor_rating,
        "uncertainty": uncertainty,
        "resamples": resamples,
        "seed": seed,
        "tol": tol,
        "max_iter": max_iter,
    }
    table = fit_columns(columns_from_polars(matches), priors, given)
    return pl.from_arrow(table)
