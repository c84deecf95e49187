"""The marts' registry, :data:`MARTS`: each mart's fields, parameters, output columns, and its one
definition: the SQL query of :mod:`.queries` over its checked :attr:`Mart.inputs`, or (``contest_metrics``)
the Python computation both engines call per (league, system)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from duckrate.core.parameters import Parameter
from duckrate.evaluation import contest_marts, team_metrics
from duckrate.marts import queries
from duckrate.marts.parameters import (
    BIN_WIDTH,
    BINS,
    MAX_SD,
    MIN_GAMES,
    POINTS,
    WARMUP,
    count_parameter,
    number_parameter,
)
from duckrate.marts.queries import Query


@dataclass(frozen=True)
class Input:
    """A replay column a SQL mart reads, as its query sees it in ``r``: ``kind`` 'seq' (an integer, never
    NULL), 'text', 'number' (a DOUBLE), 'forecast' (a DOUBLE in [0, 1], never NULL or NaN) or 'any' (as it
    is: ``played_at``). With ``parameter``, read only when that parameter is given (NULL otherwise)."""

    name: str
    kind: str
    parameter: str | None = None


@dataclass(frozen=True)
class Mart:
    """A mart: what it reads, its parameters, what it returns, and how it is computed."""

    name: str
    fields: tuple[str, ...]  # the replay columns it reads (a SQL mart: ``system``, ``league`` and its inputs)
    parameters: tuple[Parameter, ...]
    # the output columns; their types type a Python mart's result (a leaderboard's last_played_at keeps the
    # replay's own type, whatever is written here)
    returns: tuple[tuple[str, str], ...]
    inputs: tuple[Input, ...] = ()
    query: Callable[..., Query] | None = None  # (Dialect) -> Query; None: a Python mart (``compute``)
    compute: Callable[..., pl.DataFrame] | None = None  # (replay frame, parameters...) -> rows
    order: tuple[str, ...] = ()  # the sort after league (NULL first) and system, where the engine sorts
    interval_ranks: bool = False  # a leaderboard: the engine appends rank_upper, rank_lower and tier
    contest: bool = False  # over a contest replay (its ``system`` column is optional in the Python API)


def _forecasts() -> tuple[Input, ...]:
    return (Input("score_a", "forecast"), Input("expected_a", "forecast"))


def _players() -> tuple[Input, ...]:
    return (Input("seq", "seq"), Input("player_a", "text"), Input("player_b", "text"))


def _leaderboard_returns(count: str) -> tuple[tuple[str, str], ...]:
    return (
        ("league", "VARCHAR"),
        ("system", "VARCHAR"),
        ("player", "VARCHAR"),
        ("rank", "BIGINT"),
        ("rating", "DOUBLE"),
        ("sd", "DOUBLE"),
        ("lower", "DOUBLE"),
        ("upper", "DOUBLE"),
        (count, "BIGINT"),
        ("last_played_at", "ANY"),
        ("rank_upper", "BIGINT"),
        ("rank_lower", "BIGINT"),
        ("tier", "BIGINT"),
    )


def _mart(name: str, inputs: tuple[Input, ...], fields: tuple[str, ...] = (), **kwargs) -> Mart:
    """A SQL mart: its fields are ``system``, ``league``, ``fields`` and its inputs (but ``played_at``), its
    query the function of :mod:`.queries` of the same name."""
    fields = ("system", "league", *fields, *(i.name for i in inputs if i.name != "played_at"))
    return Mart(name=name, fields=fields, inputs=inputs, query=getattr(queries, name), **kwargs)


def _contest_metrics(replay, min_contests, warmup, definition, min_history, top) -> pl.DataFrame:
    return contest_marts.contest_metrics(
        replay,
        min_contests=count_parameter("contest_metrics", "min_contests", min_contests, 0),
        warmup=number_parameter("contest_metrics", "warmup", warmup),
        definition=contest_marts.CONTEST_METRIC_DEFINITION.check("contest_metrics", definition),
        min_history=contest_marts.MIN_HISTORY.check("contest_metrics", min_history),
        top=contest_marts.CONTEST_TOP.check("contest_metrics", top),
    )


MATCH_MARTS = (
    _mart(
        "leaderboard",
        (
            *_players(),
            *(Input(f"{kind}_{side}_after", "number") for kind in ("rating", "sd") for side in "ab"),
            Input("played_at", "any"),
        ),
        parameters=(),
        returns=_leaderboard_returns("games"),
        interval_ranks=True,
    ),
    _mart(
        "calibration_bins",
        _forecasts(),
        fields=("seq",),
        parameters=(BINS,),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("bin", "BIGINT"),
            ("n", "BIGINT"),
            ("mean_expected", "DOUBLE"),
            ("mean_score", "DOUBLE"),
            ("lower", "DOUBLE"),
            ("upper", "DOUBLE"),
        ),
        order=("bin",),
    ),
    _mart(
        "calibration_summary",
        (
            *_players(),
            *_forecasts(),
            Input("sd_a_before", "number", parameter="max_sd"),
            Input("sd_b_before", "number", parameter="max_sd"),
        ),
        parameters=(MIN_GAMES, MAX_SD, WARMUP),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("n", "BIGINT"),
            ("log_loss", "DOUBLE"),
            ("brier", "DOUBLE"),
            ("accuracy", "DOUBLE"),
            ("n_established", "BIGINT"),
            ("log_loss_established", "DOUBLE"),
        ),
    ),
    _mart(
        "loss_curve",
        (*_players(), *_forecasts()),
        parameters=(POINTS,),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("t", "BIGINT"),
            ("t_over_n", "DOUBLE"),
            ("mean_log_loss", "DOUBLE"),
        ),
        order=("t",),
    ),
    _mart(
        "loss_by_gap",
        (Input("rating_a_before", "number"), Input("rating_b_before", "number"), *_forecasts()),
        parameters=(BIN_WIDTH,),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("gap_bin", "DOUBLE"),
            ("n", "BIGINT"),
            ("mean_log_loss", "DOUBLE"),
            ("share_of_total_loss", "DOUBLE"),
        ),
        order=("gap_bin NULLS FIRST",),
    ),
)

CONTEST_MARTS = (
    _mart(
        "contest_leaderboard",
        (
            Input("seq", "seq"),
            Input("player", "text"),
            Input("rating_after", "number"),
            Input("sd_after", "number"),
            Input("played_at", "any"),
        ),
        parameters=(),
        returns=_leaderboard_returns("contests"),
        interval_ranks=True,
        contest=True,
    ),
    Mart(
        name="contest_metrics",
        fields=("system", "league", "seq", "player", "rank", "rating_before"),
        parameters=contest_marts.CONTEST_METRIC_PARAMETERS,
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("pair_inversion", "DOUBLE"),
            ("rank_deviation", "DOUBLE"),
            ("n", "BIGINT"),
        ),
        compute=_contest_metrics,
        contest=True,
    ),
)

TEAM_MARTS = (
    _mart(
        "team_leaderboard",
        (
            Input("seq", "seq"),
            Input("player", "text"),
            Input("rating_after", "number"),
            Input("sd_after", "number"),
            Input("played_at", "any"),
        ),
        parameters=(),
        returns=(*_leaderboard_returns("matches")[:6], ("ordinal", "DOUBLE"), *_leaderboard_returns("matches")[6:]),
        interval_ranks=True,
        contest=True,
    ),
    _mart(
        "team_match_forecasts",
        (
            Input("seq", "seq"),
            Input("match_id", "any"),
            Input("team", "text"),
            Input("rank", "number"),
            Input("p_team_win", "forecast"),
            Input("rating_before", "number"),
            Input("sd_before", "number"),
            Input("played_at", "any"),
        ),
        parameters=(),
        returns=(
            ("league", "VARCHAR"),
            ("system", "VARCHAR"),
            ("seq", "BIGINT"),
            ("match_id", "ANY"),
            ("played_at", "ANY"),
            ("player_a", "VARCHAR"),
            ("player_b", "VARCHAR"),
            ("score_a", "DOUBLE"),
            ("expected_a", "DOUBLE"),
            ("rating_a_before", "DOUBLE"),
            ("rating_b_before", "DOUBLE"),
            ("sd_a_before", "DOUBLE"),
            ("sd_b_before", "DOUBLE"),
        ),
        order=("seq",),
        contest=True,
    ),
    Mart(
        name="team_metrics",
        fields=("system", "league", *team_metrics.NEEDED[1:]),
        parameters=(team_metrics.TEAM_WARMUP,),
        returns=tuple(
            (name, {pl.Utf8: "VARCHAR", pl.Int64: "BIGINT", pl.Float64: "DOUBLE"}[kind])
            for name, kind in team_metrics.TEAM_METRICS_COLUMNS.items()
        ),
        compute=lambda replay, warmup: team_metrics.team_metrics(replay, warmup=warmup),
        contest=True,
    ),
)

MARTS = MATCH_MARTS + CONTEST_MARTS + TEAM_MARTS


def mart_named(name: str) -> Mart:
    """The registry entry of the mart ``name``."""
    return next(mart for mart in MARTS if mart.name == name)


def required_columns(mart: Mart, values: dict) -> tuple[str, ...]:
    """The replay columns a call of ``mart`` with the parameter ``values`` needs (``system`` optional)."""
    if mart.query is None:
        return tuple(name for name in mart.fields if name != "system")
    given = [i.name for i in mart.inputs if i.parameter is None or values.get(i.parameter) is not None]
    return ("league", *given)
