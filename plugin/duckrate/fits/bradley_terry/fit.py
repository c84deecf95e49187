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
from typing import cast

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import (
    MATCHES,
    OPTIONAL_COLUMNS,
    REQUIRED_COLUMNS,
    PreparedMatches,
    cluster_codes,
    columns_from_polars,
    covariate_column,
    prepare_matches,
)
from duckrate.core.parameters import Parameter
from duckrate.core.priors import check_positive_priors, initial_states, prior_columns
from duckrate.core.protocol import Fit
from duckrate.core.ranks import INTERVAL_RANK_COLUMNS, with_interval_ranks
from duckrate.core.scales import NATURAL_PER_POINT, POINTS_PER_NATURAL
from duckrate.fits.bradley_terry.forecast import BT_FORECAST
from duckrate.fits.bradley_terry.league import LeagueData, fit_league
from duckrate.fits.bradley_terry.pairs import Pairs, pairs_from_rows
from duckrate.fits.bradley_terry.reweight import inverse_pair_frequency
from duckrate.fits.league_games import league_rows, name_ordered_codes

BASE_RATING = 1500.0

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
        ("kind", pa.string()),
    ]
)

# Every parameter but the priors table, in the SQL macro's order (one place for defaults and checks).
BT_FIT = Fit(
    name="bt_fit",
    input=MATCHES,
    forecast=BT_FORECAST,
    forecast_name="bt",
    run=lambda columns, priors, given, table: fit_columns(columns, priors, given, table),
    output=OUTPUT_SCHEMA,
    priors=True,
    row_columns="list_concat(CAST(covariates AS VARCHAR[]), [cluster])",  # the row-level options' columns, as they are
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
            "'auto', 'hessian', 'sparse', 'sandwich', 'bootstrap' or 'none'",
            choices=("auto", "hessian", "sparse", "sandwich", "bootstrap", "none"),
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
        Parameter(
            "covariates",
            None,
            "a list of numeric columns of the matches table (e.g. ['len_diff']), or NULL",
            names=True,
        ),
        Parameter("cluster", None, "a column name (VARCHAR) or NULL", nullable=True, text=True),
        Parameter(
            "reweight",
            "none",
            "'none' or 'inverse_pair_frequency'",
            choices=("none", "inverse_pair_frequency"),
        ),
        Parameter(
            "min_pair_count",
            50,
            "an integer >= 1 (the floor of a pair's count when reweighting)",
            lambda v: math.isfinite(v) and v >= 1,
            integer=True,
        ),
    ),
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


def _check_row_options(params: dict, columns: dict) -> None:
    """The row-level options make sense together: covariates are not canonical columns, and a cluster
    only matters to the sandwich."""
    canonical = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    for name in params["covariates"]:
        if name in canonical:
            raise DuckrateInputError(
                f"bt_fit: covariates names '{name}', a column bt_fit already reads; expected other columns "
                "(e.g. home_advantage := true for a side-A effect, weight for game weights)"
            )
    if params["cluster"] is not None and params["uncertainty"] != "sandwich":
        raise DuckrateInputError(
            f"bt_fit: cluster := {params['cluster']!r} needs uncertainty := 'sandwich' "
            f"(got uncertainty := {params['uncertainty']!r}); expected both or neither"
        )
    if params["covariates"] and params["method"] == "mm":
        raise DuckrateInputError("bt_fit: covariates are fitted by Newton's method; expected method := 'newton'")


def _league_data(prepared, games, local, slots, params, features_all, cluster_all, precision_all, mu_all):
    code_a, code_b = local[prepared.state_a[games]], local[prepared.state_b[games]]
    weighted = prepared.weight.shape[0] == prepared.n_rows
    weight = prepared.weight[games] if weighted else None
    if params["reweight"] == "inverse_pair_frequency":
        factor = inverse_pair_frequency(code_a, code_b, slots.size, params["min_pair_count"])
        weight = factor if weight is None else weight * factor
    pairs = pairs_from_rows(code_a, code_b, prepared.score[games], weight, slots.size)
    features = None
    if features_all is not None:
        features = np.ascontiguousarray(features_all[games])
    cluster = None if cluster_all is None else cluster_all[games]
    return LeagueData(pairs, precision_all[slots], mu_all[slots], features, cluster)


def fit_columns(columns: dict[str, pa.Array], priors, given: dict, table: str = "matches") -> pa.Table:
    """``bt_fit`` over Arrow columns (the Python API and the SQL UDF both land here): one row per
    (league, player), then with covariates one row per (league, covariate), in the order of
    :data:`OUTPUT_SCHEMA`, sorted by league, kind and rating (descending)."""
    params = resolve_parameters(given)
    _check_row_options(params, columns)
    prepared = prepare_matches(columns, table)

    def league_data_of():  # called after the priors are checked, as before the split
        covariates = params["covariates"]
        features_all = None
        if covariates:
            stacked = [covariate_column(columns, table, name) for name in covariates]
            if params["home_advantage"]:
                stacked.insert(0, np.ones(prepared.n_rows))
            features_all = np.column_stack(stacked)
        cluster_all = None if params["cluster"] is None else cluster_codes(columns, table, params["cluster"])
        rows = league_rows(prepared)

        def league_data(league, slots, local, precision_all, mu_all):
            return _league_data(
                prepared, rows[league], local, slots, params, features_all, cluster_all, precision_all, mu_all
            )

        return league_data

    return fit_prepared(prepared, priors, params, league_data_of)


def fit_prepared(prepared: PreparedMatches, priors, params: dict, league_data_of) -> pa.Table:
    """Fit every league of ``prepared`` (``params`` resolved and checked): ``league_data_of()``, called once
    the priors are checked, returns ``league_data(league, slots, local, precision, mu)``, a league's
    :class:`LeagueData` (its players' state ``slots`` in name order, ``local`` each slot's index among
    them, the prior precision and mean by slot). The rows of :func:`fit_columns`; the Spark path
    (:mod:`duckrate.spark`) calls it with pairs aggregated in Spark."""
    priors = prior_columns(priors)
    precision_all, mu_all = _prior_arrays(prepared, priors, params["prior_sd"])
    params["with_priors"] = priors is not None and len(priors.get("player", [])) > 0
    params["natural_per_point"] = NATURAL_PER_POINT
    if params["anchor_player"] is not None and params["with_priors"]:
        raise DuckrateInputError("bt_fit: give either priors (which fix the rating scale) or anchor_player, not both")
    covariates = params["covariates"]
    league_data = league_data_of()
    local, members = name_ordered_codes(prepared)
    anchor_code = None
    if params["anchor_player"] is not None:
        found = pc.index(prepared.players, params["anchor_player"]).as_py()
        anchor_code = found if found >= 0 else None
    player_part: dict[str, list[pa.Array]] = {
        name: [] for name in OUTPUT_SCHEMA.names if name not in INTERVAL_RANK_COLUMNS
    }
    covariate_part: dict[str, list[pa.Array]] = {name: [] for name in player_part}
    player_names = prepared.players.cast(pa.string())
    for league in range(prepared.n_leagues):
        slots = members[league]
        if slots.size == 0:
            continue
        league_name = prepared.league_names[league]
        data = league_data(league, slots, local, precision_all, mu_all)
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
        fit = fit_league(
            data,
            params,
            anchor,
            league_name,
            lambda code, codes=player_codes: player_names[int(codes[code])].as_py(),
        )
        shared = {
            "method": fit.solution.method,
            "converged": fit.solution.converged,
            "iterations": fit.solution.iterations,
            "home_advantage": None if fit.alpha is None else fit.alpha * POINTS_PER_NATURAL,
            "uncertainty": fit.uncertainty,
            "resamples": fit.resamples,
        }
        _append(
            player_part,
            league_name,
            player_names.take(pa.array(player_codes)),
            (fit.theta, fit.sd, fit.lower, fit.upper),
            data.pairs.games,
            shared,
            comparison_components(data.pairs),
            "player",
        )
        if covariates:
            _append(
                covariate_part,
                league_name,
                pa.array(list(covariates), pa.string()),
                (fit.coefficients, fit.coefficient_sd, fit.coefficient_lower, fit.coefficient_upper),
                np.full(len(covariates), data.pairs.row_pair.shape[0], dtype=np.int64),
                shared,
                np.full(len(covariates), -1, dtype=np.int64),
                "covariate",
                level=0.0,
            )
    players = _frame(player_part)
    players = players.sort(["league", "rating", "player"], descending=[False, True, False], nulls_last=True)
    components = numbered_by_first_appearance(players["component"].to_numpy(), players["league"].to_list())
    players = with_interval_ranks(players.with_columns(pl.Series("component", components)), ["league"])
    result = players.select(OUTPUT_SCHEMA.names)
    if covariates:
        coefficient_rows = _frame(covariate_part).with_columns(
            pl.lit(None, dtype=pl.Int64).alias(name) for name in (*INTERVAL_RANK_COLUMNS, "component")
        )
        result = pl.concat([result, coefficient_rows.select(OUTPUT_SCHEMA.names)]).sort(
            "league", nulls_last=True, maintain_order=True
        )
    return result.to_arrow().cast(OUTPUT_SCHEMA)


def _append(part, league_name, names, estimates, games, shared, components, kind, level=BASE_RATING):
    """One league's rows (players or covariates) on the display scale: ``level + points · value``."""
    count = len(names)
    part["league"].append(pa.array([league_name] * count, pa.string()))
    part["player"].append(names)
    for name, values in zip(("rating", "sd", "lower", "upper"), estimates):
        shifted = values * POINTS_PER_NATURAL + (level if name != "sd" else 0.0)
        part[name].append(pa.array(shifted, pa.float64(), from_pandas=True))  # NaN -> NULL
    part["games"].append(pa.array(games, pa.int64()))
    for name, value in shared.items():
        part[name].append(pa.array([value] * count, OUTPUT_SCHEMA.field(name).type))
    part["component"].append(pa.array(components, pa.int64()))
    part["kind"].append(pa.array([kind] * count, pa.string()))


def _frame(part: dict) -> pl.DataFrame:
    schema = pa.schema([OUTPUT_SCHEMA.field(name) for name in part])
    arrays = [
        pa.concat_arrays([chunk.cast(schema.field(name).type) for chunk in chunks])
        if chunks
        else pa.array([], schema.field(name).type)
        for name, chunks in part.items()
    ]
    return cast(pl.DataFrame, pl.from_arrow(pa.Table.from_arrays(arrays, schema=schema)))


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
    covariates: list[str] | None = None,
    cluster: str | None = None,
    reweight: str = "none",
    min_pair_count: int = 50,
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
        the cost of one more fit), 'sandwich' (the robust H⁻¹JH⁻¹ from the games' score contributions:
        exact up to 1000 players, above that 'sandwich_sparse'), 'bootstrap' or 'none'; ``resamples``
        and ``seed`` drive the bootstrap.
    tol : stop when the gradient's Euclidean norm (natural units) is below this; ``max_iter`` caps the
        iterations (``converged`` says whether tol was reached).
    covariates : numeric columns of ``matches`` entering each game's logit as ``θ_a - θ_b + β·x`` (style
        control); β is fitted jointly (unpenalised) and reported in rows of ``kind`` 'covariate'
        (``player`` = the column, ``rating`` = β in rating points per unit, with its sd and interval).
    cluster : a column of ``matches`` whose equal values form one cluster of the sandwich's middle
        matrix (e.g. a user or a conversation); needs ``uncertainty='sandwich'``.
    reweight : 'inverse_pair_frequency' weights each game by ``1 / max(n_pair, min_pair_count)`` (pairs
        unordered, scaled to mean 1): for data whose pairs were sampled adaptively.

    Returns
    -------
    DataFrame, one row per (league, player): ``league, player, rating, sd, lower, upper, games, method,
    converged, iterations, home_advantage, uncertainty, resamples, rank_upper, rank_lower, tier,
    component, kind``, then one row per (league, covariate) with ``kind`` 'covariate'.

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
        "covariates": covariates,
        "cluster": cluster,
        "reweight": reweight,
        "min_pair_count": min_pair_count,
    }
    table = fit_columns(columns_from_polars(matches), priors, given)
    return cast(pl.DataFrame, pl.from_arrow(table))
