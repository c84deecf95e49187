"""What ``win_probability`` and ``win_matrix`` read: any table of ratings, brought to one row per player.

Three kinds of table, told apart by their columns:

- ``replay``: a replay table (``player_a``, ``player_b``, ``seq``, ``rating_*_after``, ``sd_*_after``), each
  player's state after their last match (largest ``seq``), as the leaderboard takes it;
- ``ratings``: one row per player (``player``, ``rating``, ``sd``): a leaderboard (with ``system``) or a
  ``bt_fit`` result / the ``bt_ratings`` model (``method``, ``home_advantage``: the ``bt`` forecast);
- ``state``: a saved replay state (``kind``, ``value``; ``<system>_state``, ``replay_<system>__state``).

:func:`packed_rows` brings a Polars frame to :data:`PACKED_COLUMNS` (the SQL macros build the same rows in
DuckDB); :func:`rated_players` picks the system, its :class:`~.forecasts.Forecast` and the players.
"""

from __future__ import annotations

import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import PLAYER_COLUMNS, Players
from duckrate.evaluation.forecasts import NamedForecast, fit_forecast_names, forecasts

PACKED_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "source": pl.Utf8,  # 'replay', 'ratings' or 'state'
    "league": pl.Utf8,
    "system": pl.Utf8,
    "player": pl.Utf8,
    "rating": pl.Float64,
    "sd": pl.Float64,
    "home_advantage": pl.Float64,
    "method": pl.Utf8,
    "kind": pl.Utf8,
    "opponent": pl.Utf8,
    "value": pl.List(pl.Float64),
    "params": pl.Utf8,
}
"""One row per player (a replay's latest state, or a ratings table's row), or per row of a state table."""

REPLAY_FIELDS = ("player_a", "player_b", "seq", "rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after")
RATINGS_FIELDS = ("player", "rating")
KINDS = (
    "a bt_fit result (bt_ratings), a leaderboard, a replay table (the output of a *_replay macro) or a saved "
    "replay state (<system>_state)"
)


def _conform(frame: pl.DataFrame, source: str) -> pl.DataFrame:
    return frame.with_columns(
        pl.lit(source).alias("source"),
        *(
            pl.lit(None, dtype=kind).alias(name)
            for name, kind in PACKED_COLUMNS.items()
            if name not in frame.columns and name != "source"
        ),
    ).select(pl.col(name).cast(kind) for name, kind in PACKED_COLUMNS.items())


def _require(frame: pl.DataFrame, needed, caller: str, what: str) -> None:
    missing = [name for name in needed if name not in frame.columns]
    if missing:
        raise DuckrateInputError(
            f"{caller}: the table is missing column(s) {', '.join(map(repr, missing))}; expected {what} "
            f"with columns {', '.join(needed)}"
        )


def packed_rows(frame: pl.DataFrame, caller: str) -> pl.DataFrame:
    """A Polars table of any of the kinds above as :data:`PACKED_COLUMNS` rows."""
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(f"{caller}: expected the ratings as a polars.DataFrame, got {type(frame).__name__}")
    columns = set(frame.columns)
    if {"kind", "value"} <= columns:
        return _conform(frame, "state")
    if "player_a" in columns:
        _require(frame, REPLAY_FIELDS, caller, "a replay table (the output of a *_replay macro)")
        keys = [name for name in ("league", "system") if name in columns]
        sides = pl.concat(
            [
                frame.select(
                    *keys,
                    "seq",
                    pl.col(f"player_{side}").cast(pl.Utf8).alias("player"),
                    pl.col(f"rating_{side}_after").cast(pl.Float64).alias("rating"),
                    pl.col(f"sd_{side}_after").cast(pl.Float64).alias("sd"),
                )
                for side in ("a", "b")
            ]
        )
        latest = sides.group_by(*keys, "player").agg(pl.col("rating", "sd").sort_by("seq").last())
        return _conform(latest, "replay")
    if RATINGS_FIELDS[0] in columns or RATINGS_FIELDS[1] in columns:
        _require(frame, RATINGS_FIELDS, caller, "a table of ratings (a leaderboard or a bt_fit result)")
        if "kind" in columns:  # a bt_fit with covariates: its coefficients' rows are not players
            frame = frame.filter(pl.col("kind").is_null() | (pl.col("kind") == "player"))
        return _conform(frame, "ratings")
    raise DuckrateInputError(f"{caller}: the table has columns {', '.join(frame.columns)}; expected {KINDS}")


def _one_source(packed: pl.DataFrame, table: str, caller: str) -> str:
    sources = packed["source"].unique().to_list()
    if not sources:
        raise DuckrateInputError(f"{caller}: table {table!r} has no rows")
    if len(sources) > 1:  # the SQL macro's rows of different kinds (not from one table)
        raise DuckrateInputError(f"{caller}: table {table!r} mixes {', '.join(sorted(sources))} rows; expected {KINDS}")
    return sources[0]


def _system_names(rows: pl.DataFrame) -> list[str]:
    return sorted(name for name in rows["system"].unique().to_list() if name is not None)


def _chosen_system(packed: pl.DataFrame, source: str, system: str | None, table: str, caller: str) -> str:
    """The system whose forecast applies: the one the table holds (its ``system`` column, a state's league
    rows, a bt_fit's columns), or ``system``, which must be one of them when the table names any."""
    held = _system_names(packed.filter(pl.col("kind") == "league") if source == "state" else packed)
    if system is not None:
        if held and system not in held:
            raise DuckrateInputError(
                f"{caller}: table {table!r} holds no rows of system {system!r}; it holds {', '.join(map(repr, held))}"
            )
        return system
    if len(held) == 1:
        return held[0]
    if held:
        raise DuckrateInputError(
            f"{caller}: table {table!r} holds several systems ({', '.join(map(repr, held))}); choose one with system := '...'"
        )
    fits = fit_forecast_names()
    if source == "ratings" and packed["method"].is_not_null().any() and fits:
        return fits[0]
    what = {"replay": "a replay table without a system column", "ratings": "a table of ratings without a system column"}
    raise DuckrateInputError(
        f"{caller}: table {table!r} is {what.get(source, 'a state without league rows')}: say which system made it "
        f"with system := '...' (one of {', '.join(map(repr, forecasts()))})"
    )


def _forecast(name: str, source: str, table: str, caller: str) -> NamedForecast:
    known = forecasts()
    if name not in known:
        raise DuckrateInputError(
            f"{caller}: system {name!r} has no two-player forecast here; supported: {', '.join(map(repr, known))}"
        )
    forecast = known[name]
    if forecast.from_state and source != "state":
        raise DuckrateInputError(
            f"{caller}: the {name} forecast needs {forecast.state_holds}, which table {table!r} does not hold; pass "
            f"its saved state instead: {name}_state(...) in SQL, the model replay_{name}__state in dbt, "
            f"duckrate.replay_state({name!r}, ...) in Python"
        )
    if source == "state" and not forecast.from_state:
        raise DuckrateInputError(
            f"{caller}: table {table!r} is a saved {name} state; the {name} forecast needs only each player's rating "
            f"and sd: pass the replay table or its leaderboard instead"
        )
    return forecast


def _saved_parameters(state: pl.DataFrame, name: str, table: str, caller: str) -> str:
    """The parameters every league of the state was saved with (one set, as JSON)."""
    saved = state.filter(pl.col("kind") == "league")["params"].unique().to_list()
    if len(saved) != 1 or saved[0] is None:
        raise DuckrateInputError(
            f"{caller}: state table {table!r} has {len(saved)} parameter sets in its league rows; expected one "
            f"(a state saved by one {name} replay)"
        )
    return saved[0]


def _league_rows(rows: pl.DataFrame, league: str | None, table: str, caller: str) -> pl.DataFrame:
    if league is None:
        return rows
    chosen = rows.filter(pl.col("league") == league)
    if not chosen.height:
        held = rows["league"].unique().sort(nulls_last=False).to_list()
        raise DuckrateInputError(
            f"{caller}: table {table!r} has no league {league!r}; it has {', '.join(map(repr, held))}"
        )
    return chosen


def rated_players(
    packed: pl.DataFrame, system: str | None, league: str | None, table: str, caller: str
) -> tuple[NamedForecast, Players]:
    """The forecast of the table's system and its players (of ``league`` only, when given)."""
    source = _one_source(packed, table, caller)
    name = _chosen_system(packed, source, system, table, caller)
    forecast = _forecast(name, source, table, caller)
    if source == "state":
        saved = _saved_parameters(packed, name, table, caller)
        assert forecast.read_state is not None  # _forecast checked: a state's forecast reads one
        return forecast, forecast.read_state(_league_rows(packed, league, table, caller), saved)
    rows = _league_rows(packed.filter(pl.col("system").is_null() | (pl.col("system") == name)), league, table, caller)
    twice = rows.filter(pl.struct("league", "player").is_duplicated())
    if twice.height:
        row = twice.row(0, named=True)
        raise DuckrateInputError(
            f"{caller}: table {table!r} has player {row['player']!r} twice in league {row['league']!r}; expected one "
            "row per player and league"
        )
    return forecast, Players(rows.select(pl.col(name).cast(kind) for name, kind in PLAYER_COLUMNS.items()))
