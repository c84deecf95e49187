"""``duckrate.tune``: which parameters (and which system) describe a history best.

Each parameter set of the grid (:mod:`.grids`) replays the whole history afresh; its forecasts are scored
per league under the chosen protocol (:mod:`.scores`), and the sets are ranked per (league, system) by the
protocol's criterion. Two-player systems are scored by their match forecasts, prepared and checked once
for every parameter set; contest systems by the Elo-MMR paper's metrics (``contest_metrics``, the reference
definition): ``holdout`` ranks by the pair inversion over the first ``train_share`` of each league's
contests (every participant seen before counting: few have the default five earlier contests that early)
and reports the metrics over the rest (the paper's protocol); ``cumulative`` uses every contest for both. Team
systems are scored by the log loss of each match's winner (:mod:`duckrate.evaluation.team_metrics`), under
either protocol as two-player systems are. Parameter sets run on ``threads`` threads (the kernels release the GIL); each set's result is
computed from its own inputs only, so the table is identical, bit for bit, to a serial run.
"""

from __future__ import annotations

import json
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import MATCHES, columns_from_polars, prepare_matches
from duckrate.core.parameters import Parameter
from duckrate.core.priors import prior_columns
from duckrate.core.progress import Progress
from duckrate.core.registry import SYSTEMS
from duckrate.core.teams import TEAM_RESULTS
from duckrate.evaluation.contest_marts import contest_metrics
from duckrate.evaluation.team_metrics import match_scores as team_match_scores
from duckrate.marts.parameters import POINTS
from duckrate.tuning.grids import parameter_sets
from duckrate.tuning.scores import PROTOCOLS, LeagueSplit, league_scores, team_league_scores

PROTOCOL = Parameter("protocol", "holdout", "'holdout' or 'cumulative'", choices=PROTOCOLS)
TRAIN_SHARE = Parameter(
    "train_share", 0.1, "a share of each league's history in (0, 1)", lambda v: math.isfinite(v) and 0 < v < 1
)
TUNING_COLUMNS = (
    "league",
    "system",
    "protocol",
    "params",
    "log_loss",
    "brier",
    "accuracy",
    "pair_inversion",
    "rank_deviation",
    "n",
    "criterion",
    "rank",
)
TUNING_SCHEMA = {
    "league": pl.Utf8,
    "system": pl.Utf8,
    "protocol": pl.Utf8,
    "params": pl.Utf8,
    "log_loss": pl.Float64,
    "brier": pl.Float64,
    "accuracy": pl.Float64,
    "pair_inversion": pl.Float64,
    "rank_deviation": pl.Float64,
    "n": pl.Int64,
    "criterion": pl.Float64,
    "rank": pl.Int64,
}


def _params_text(params: dict) -> str:
    return json.dumps(params, sort_keys=True, allow_nan=True)


def _two_player_rows(system, columns, sets, protocol, train_share, points, priors, threads, table="matches"):
    prepared = prepare_matches(columns, table)
    system.check_matches(columns, prepared, table)
    priors = prior_columns(priors)
    resolved = [system.resolve(params) for params in sets]  # every bad value reported before any work
    for params in resolved:
        system.check_model(columns, prepared, table, params)
    split = LeagueSplit(prepared.order, prepared.league, prepared.n_leagues)

    progress = Progress(f"tune {system.name}", len(resolved), "parameter sets")

    def one(params):
        expected = system.forecasts(prepared, priors, params)
        scores = league_scores(split, expected, prepared.score, protocol, train_share, points)
        progress.advance()
        return scores

    with ThreadPoolExecutor(max_workers=threads) as pool:
        results = list(pool.map(one, resolved))
    rows = []
    for params, per_league in zip(sets, results):
        for league, scores in zip(prepared.league_names, per_league):
            rows.append({"league": league, "params": _params_text(params), **scores})
    return rows


def _contest_rows(system, results, sets, protocol, train_share, priors, threads):
    for params in sets:
        system.resolve(params)
    progress = Progress(f"tune {system.name}", len(sets), "parameter sets")

    def one(params):
        replay, _ = system.with_state(results, priors=priors, want_state=False, **params)
        if protocol == "holdout":
            contests = replay.group_by("league").agg(pl.col("seq").max().alias("_contests"))
            train = replay.join(contests, on="league", nulls_equal=True).filter(
                pl.col("seq") <= (pl.col("_contests") * train_share).floor()
            )
            chosen = contest_metrics(train, warmup=0.0, min_history=1)  # early on few have 5 contests
            reported = contest_metrics(replay, warmup=train_share)
        else:
            chosen = reported = contest_metrics(replay, warmup=0.0)
        criterion = {row["league"]: 1.0 - row["pair_inversion"] for row in chosen.iter_rows(named=True)}
        leagues = replay["league"].unique(maintain_order=True).to_list()
        scored = {row["league"]: row for row in reported.iter_rows(named=True)}
        progress.advance()
        return [
            {
                "league": league,
                "pair_inversion": scored.get(league, {}).get("pair_inversion"),
                "rank_deviation": scored.get(league, {}).get("rank_deviation"),
                "n": scored.get(league, {}).get("n", 0),
                "criterion": criterion.get(league, float("nan")),
            }
            for league in leagues
        ]

    with ThreadPoolExecutor(max_workers=threads) as pool:
        per_set = list(pool.map(one, sets))
    return [{**row, "params": _params_text(params)} for params, rows in zip(sets, per_set) for row in rows]


def _team_rows(system, results, sets, protocol, train_share, points, priors, threads):
    for params in sets:
        system.resolve(params)
    progress = Progress(f"tune {system.name}", len(sets), "parameter sets")

    def one(params):
        replay, _ = system.with_state(results, priors=priors, want_state=False, **params)
        scores = team_match_scores(replay).sort("league", "seq", nulls_last=False)
        rows = []
        for (league,), matches in scores.group_by("league", maintain_order=True):
            rows.append({"league": league, **team_league_scores(matches, protocol, train_share, points)})
        progress.advance()
        return rows

    with ThreadPoolExecutor(max_workers=threads) as pool:
        per_set = list(pool.map(one, sets))
    return [{**row, "params": _params_text(params)} for params, rows in zip(sets, per_set) for row in rows]


def tune(
    data: pl.DataFrame,
    system: str,
    grid=None,
    protocol: str = PROTOCOL.default,
    train_share: float = TRAIN_SHARE.default,
    points: int = POINTS.default,
    priors: pl.DataFrame | None = None,
    threads: int | None = None,
    **fixed,
) -> pl.DataFrame:
    """Replay ``system`` over ``data`` once per parameter set of ``grid`` and rank the sets.

    Parameters
    ----------
    data : a ``matches`` frame (two-player systems), a ``contest_results`` frame (contest systems) or a
        ``team_results`` frame (team systems).
    system : a registered system's name (``'elo'``, ``'glicko2'``, ``'elo_mmr'``, ...).
    grid : ``{parameter: [values, ...]}`` (every combination), a list of ``{parameter: value}``, the same as
        JSON text, or None for the system's default grid (its registry entry's ``grid``).
    protocol : ``'holdout'`` (criterion over the first ``train_share`` of each league's history, scores over
        the rest) or ``'cumulative'`` (criterion: the mean of the cumulative mean log loss over ``points``
        checkpoints, scores over everything); see :mod:`duckrate.tuning.scores`.
    priors : as for the system's replay.
    threads : parameter sets run at once (default: the machine's cores); results do not depend on it.
    fixed : parameters every set shares (a grid entry overrides them).

    Returns
    -------
    One row per (league, parameter set): ``league, system, protocol, params`` (JSON of the set's
    parameters), ``log_loss, brier, accuracy`` (two-player systems), ``pair_inversion, rank_deviation``
    (contest systems, fractions), ``log_loss`` (of each match's winner), ``accuracy``, ``pair_inversion``,
    ``rank_deviation`` (team systems, :mod:`duckrate.evaluation.team_metrics`), ``n`` (matches or contest rows
    scored), ``criterion`` (lower is better)
    and ``rank`` (1 = the best set of that league and system; ties keep the grid's order).
    """
    if not isinstance(data, pl.DataFrame):
        raise DuckrateInputError(f"tune: expected a Polars DataFrame, got {type(data).__name__}")
    return tune_columns(data, system, grid, protocol, train_share, points, priors, threads, **fixed)


def tune_columns(
    data,
    system: str,
    grid=None,
    protocol: str = PROTOCOL.default,
    train_share: float = TRAIN_SHARE.default,
    points: int = POINTS.default,
    priors=None,
    threads: int | None = None,
    table: str = "matches",
    **fixed,
) -> pl.DataFrame:
    """:func:`tune` over a two-player system's match columns (``{name: Arrow array}``, as the SQL macro
    collects them) or a contest system's results frame."""
    protocol = PROTOCOL.check("tune", protocol)
    train_share = TRAIN_SHARE.check("tune", train_share)
    points = POINTS.check("tune", points)
    if system not in SYSTEMS:
        raise DuckrateInputError(
            f"tune: unknown system {system!r}; expected one of {', '.join(sorted(SYSTEMS.names()))}"
        )
    entry = SYSTEMS.get(system, "tune")
    sets = parameter_sets(entry, grid, fixed)
    threads = max(1, min(len(sets), threads or os.cpu_count() or 1))
    two_player = entry.input == MATCHES  # forecasts per match, scored by log loss; else contests, by ranks
    if not two_player and not isinstance(data, pl.DataFrame):
        macro = "tune_teams" if entry.input == TEAM_RESULTS else "tune_contests"
        raise DuckrateInputError(f"tune: {system!r} rates {entry.input.what}; tune it with {macro}(system, tbl, ...)")
    if two_player and isinstance(data, pl.DataFrame):
        data = columns_from_polars(data)
    if two_player:
        rows = _two_player_rows(entry, data, sets, protocol, train_share, points, priors, threads, table)
    elif entry.input == TEAM_RESULTS:
        rows = _team_rows(entry, data, sets, protocol, train_share, points, priors, threads)
    else:
        rows = _contest_rows(entry, data, sets, protocol, train_share, priors, threads)
    frame = pl.DataFrame(
        [{**{name: None for name in TUNING_COLUMNS}, **row, "system": system, "protocol": protocol} for row in rows],
        schema=TUNING_SCHEMA,
    )
    order = pl.col("criterion").fill_nan(None)
    ranked = frame.with_row_index("_grid").with_columns(
        pl.struct(order.fill_null(np.inf), "_grid")
        .rank("ordinal")
        .over("league", "system")
        .cast(pl.Int64)
        .alias("rank")
    )
    return ranked.sort("league", "system", "rank", nulls_last=True).select(TUNING_COLUMNS)
