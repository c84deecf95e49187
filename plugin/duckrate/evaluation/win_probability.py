"""Win probabilities from the latest ratings: ``win_probability`` for named pairs, ``win_matrix`` for the top
players of each league, over any table :mod:`.forecast_inputs` reads, by each system's own forecast
(:mod:`.forecasts`).

``p_win_a`` is the expected score of A, P(A wins) + ½ P(draw), the ``expected_a`` a replay would give a
match between the two next; ``p_draw`` is P(draw) where the model has draws (TrueSkill), else NULL.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import Players
from duckrate.core.parameters import Parameter, Signature, resolve_parameters
from duckrate.evaluation.forecast_inputs import packed_rows, rated_players
from duckrate.evaluation.forecasts import NamedForecast, forecasts

WIN_PROBABILITY_COLUMNS = {
    "league": pl.Utf8,
    "system": pl.Utf8,
    "player_a": pl.Utf8,
    "player_b": pl.Utf8,
    "rating_a": pl.Float64,
    "rating_b": pl.Float64,
    "sd_a": pl.Float64,
    "sd_b": pl.Float64,
    "p_win_a": pl.Float64,
    "p_draw": pl.Float64,
}
WIN_MATRIX_COLUMNS = {
    "league": pl.Utf8,
    "system": pl.Utf8,
    "player_a": pl.Utf8,
    "rank_a": pl.Int64,
    "player_b": pl.Utf8,
    "rank_b": pl.Int64,
    "rating_a": pl.Float64,
    "rating_b": pl.Float64,
    "p_win_a": pl.Float64,
    "p_draw": pl.Float64,
}


def forecast_parameters() -> tuple[Parameter, ...]:
    """Every registered forecast's parameters, once each, NULL by default: the system's own default then
    applies."""
    seen: dict[str, Parameter] = {}
    users: dict[str, list[str]] = {}
    for forecast in forecasts().values():
        for p in forecast.parameters:
            seen.setdefault(p.name, p)
            users.setdefault(p.name, []).append(f"{forecast.name}: {p.sql_default}")
    return tuple(
        Parameter(
            p.name,
            None,
            f"{p.expected}; NULL: the default ({', '.join(users[p.name])})",
            p.valid,
            nullable=True,
            boolean=p.boolean,
        )
        for p in seen.values()
    )


SYSTEM = Parameter(
    "system",
    None,
    "the system whose forecast applies (required for a replay table without a system column; chooses one of "
    "several), or NULL",
    nullable=True,
    text=True,
)
LEAGUE = Parameter("league", None, "one league's name, or NULL for every league", nullable=True, text=True)
TOP = Parameter("top", 20, "an integer >= 1", lambda v: v >= 1, integer=True)


def win_probability_signature() -> Signature:
    """``win_probability``'s parameters: its own, then every registered forecast's (:func:`forecast_parameters`)."""
    return Signature(
        name="win_probability",
        summary=(
            "P(A beats B) + ½ P(draw) for named pairs from the latest ratings (a bt_fit result, a leaderboard, a "
            "replay table or a saved state), by the system's own forecast."
        ),
        parameters=(SYSTEM, LEAGUE, *forecast_parameters()),
    )


def win_matrix_signature() -> Signature:
    """``win_matrix``'s parameters: its own, then every registered forecast's."""
    return Signature(
        name="win_matrix",
        summary="win_probability between every two of each league's top players by rating, in long form.",
        parameters=(TOP, SYSTEM, LEAGUE, *forecast_parameters()),
    )


def _resolved(signature: Signature, given: dict) -> dict:
    return resolve_parameters(signature.name, signature.parameters, given)


def _forecast_values(forecast: NamedForecast, resolved: dict, caller: str) -> dict:
    """The forecast's parameters: the given ones (not NULL) checked, the others the system's defaults."""
    given = {p.name: resolved[p.name] for p in forecast_parameters() if resolved[p.name] is not None}
    takes = [p.name for p in forecast.parameters]
    extra = sorted(set(given) - set(takes))
    if extra:
        note = " (it uses the parameters the state was saved with)" if forecast.from_state else ""
        raise DuckrateInputError(
            f"{caller}: parameter(s) {', '.join(extra)} do not apply to the {forecast.name} forecast; it takes "
            f"{', '.join(takes) if takes else 'none'}{note}"
        )
    return resolve_parameters(f"{caller} ({forecast.name})", forecast.parameters, given)


def _probabilities(forecast: NamedForecast, players: Players, a: np.ndarray, b: np.ndarray, params: dict):
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    if not a.shape[0]:
        return np.zeros(0), None
    return forecast.compute(players, a, b, params)


def _names(value, which: str, caller: str) -> list[str]:
    names = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
    if not names or not all(isinstance(name, str) for name in names):
        raise DuckrateInputError(f"{caller}: {which} = {value!r}; expected a player's name or a list of names")
    return names


def _pairs(player_a, player_b, caller: str) -> list[tuple[str, str]]:
    """(A, B) pairs: two names, two lists of one length, or one name against a list."""
    a, b = _names(player_a, "player_a", caller), _names(player_b, "player_b", caller)
    if len(a) == 1:
        a = a * len(b)
    if len(b) == 1:
        b = b * len(a)
    if len(a) != len(b):
        raise DuckrateInputError(
            f"{caller}: player_a has {len(a)} names and player_b {len(b)}; expected lists of one length (or one name)"
        )
    for x, y in zip(a, b):
        if x == y:
            raise DuckrateInputError(f"{caller}: player_a and player_b are both {x!r}; expected two different players")
    return list(zip(a, b))


def _missing_error(frame: pl.DataFrame, a: str, b: str, table: str, caller: str) -> DuckrateInputError:
    """Why no league holds both players: whom each league lacks."""
    leagues = frame["league"].unique().sort(nulls_last=False).to_list()
    if not leagues:
        return DuckrateInputError(f"{caller}: table {table!r} has no players")
    lacking = []
    for league in leagues:
        present = set(frame.filter(pl.col("league").eq_missing(league))["player"].to_list())
        lacking.append((league, " and ".join(repr(name) for name in (a, b) if name not in present)))
    if len(lacking) == 1:
        league, gone = lacking[0]
        where = f" (league {league!r})" if league is not None else ""
        return DuckrateInputError(f"{caller}: player {gone} is not in table {table!r}{where}")
    notes = "; ".join(f"league {league!r} lacks {gone}" for league, gone in lacking)
    return DuckrateInputError(f"{caller}: no league of table {table!r} holds both {a!r} and {b!r}: {notes}")


def _rows_of_pairs(players: Players, pairs: list[tuple[str, str]], table: str, caller: str) -> pl.DataFrame:
    """(league, row_a, row_b) for every league holding both players of a pair; an error for a pair no league
    holds."""
    frame = players.frame.with_row_index("row")
    wanted = pl.DataFrame({"a": [a for a, _ in pairs], "b": [b for _, b in pairs]}).with_row_index("pair")
    by_name = frame.select("league", "player", pl.col("row").cast(pl.Int64))
    found = wanted.join(by_name.rename({"player": "a", "row": "row_a"}), on="a", how="inner").join(
        by_name.rename({"player": "b", "row": "row_b"}), on=["league", "b"], how="inner", nulls_equal=True
    )
    missing = wanted.join(found.select("pair").unique(), on="pair", how="anti").sort("pair")
    if missing.height:
        raise _missing_error(players.frame, missing["a"][0], missing["b"][0], table, caller)
    return found.sort("league", "pair", nulls_last=False).select("league", "row_a", "row_b")


def _output(players: Players, name: str, rows: pl.DataFrame, probabilities, extra: dict, columns: dict) -> pl.DataFrame:
    expected, draw = probabilities
    frame = players.frame
    a, b = rows["row_a"].to_numpy(), rows["row_b"].to_numpy()
    result = pl.DataFrame(
        {
            "league": rows["league"],
            "system": pl.Series([name] * rows.height, dtype=pl.Utf8),
            "player_a": frame["player"].gather(a),
            "player_b": frame["player"].gather(b),
            "rating_a": frame["rating"].gather(a),
            "rating_b": frame["rating"].gather(b),
            "sd_a": frame["sd"].gather(a),
            "sd_b": frame["sd"].gather(b),
            "p_win_a": pl.Series(expected, dtype=pl.Float64).fill_nan(None),
            "p_draw": pl.Series(draw, dtype=pl.Float64).fill_nan(None)
            if draw is not None
            else pl.Series([None] * rows.height, dtype=pl.Float64),
            **extra,
        }
    )
    return result.select(pl.col(column).cast(kind) for column, kind in columns.items())


def win_probability_of(packed: pl.DataFrame, player_a, player_b, table: str, **given) -> pl.DataFrame:
    """:func:`win_probability` over packed rows (:mod:`.forecast_inputs`); ``table`` names the table in errors."""
    signature = win_probability_signature()
    caller = signature.name
    params = _resolved(signature, given)
    pairs = _pairs(player_a, player_b, caller)
    if not packed.height:
        raise DuckrateInputError(f"{caller}: player {pairs[0][0]!r} is not in table {table!r}: it has no rows")
    forecast, players = rated_players(packed, params["system"], params["league"], table, caller)
    values = _forecast_values(forecast, params, caller)
    rows = _rows_of_pairs(players, pairs, table, caller)
    probabilities = _probabilities(forecast, players, rows["row_a"].to_numpy(), rows["row_b"].to_numpy(), values)
    return _output(players, forecast.name, rows, probabilities, {}, WIN_PROBABILITY_COLUMNS)


def win_matrix_of(packed: pl.DataFrame, table: str, **given) -> pl.DataFrame:
    """:func:`win_matrix` over packed rows (:mod:`.forecast_inputs`); ``table`` names the table in errors."""
    signature = win_matrix_signature()
    caller = signature.name
    params = _resolved(signature, given)
    if not packed.height:  # an empty table: no players, no pairs (as the marts)
        return pl.DataFrame(schema=WIN_MATRIX_COLUMNS)
    forecast, players = rated_players(packed, params["system"], params["league"], table, caller)
    values = _forecast_values(forecast, params, caller)
    ranked = (
        players.frame.with_row_index("row")
        .sort(["league", "rating", "player"], descending=[False, True, False], nulls_last=[False, True, False])
        .with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("league").alias("rank"))
        .filter(pl.col("rank") <= params["top"])
        .select("league", pl.col("row").cast(pl.Int64), "rank")
    )
    rows = (
        ranked.rename({"row": "row_a", "rank": "rank_a"})
        .join(ranked.rename({"row": "row_b", "rank": "rank_b"}), on="league", how="inner", nulls_equal=True)
        .filter(pl.col("row_a") != pl.col("row_b"))
        .sort("league", "rank_a", "rank_b", nulls_last=False)
    )
    probabilities = _probabilities(forecast, players, rows["row_a"].to_numpy(), rows["row_b"].to_numpy(), values)
    ranks = {"rank_a": rows["rank_a"], "rank_b": rows["rank_b"]}
    return _output(players, forecast.name, rows, probabilities, ranks, WIN_MATRIX_COLUMNS)


def win_probability(
    ratings: pl.DataFrame,
    player_a,
    player_b,
    system: str | None = None,
    league: str | None = None,
    **forecast_parameters,
) -> pl.DataFrame:
    """P(A wins) + ½ P(draw) between named players, from the latest ratings, by the system's own forecast.

    Parameters
    ----------
    ratings : a ``bt_fit`` result (``bt_ratings``), a leaderboard, a replay table (each player's state after
        their last match) or, for ``chance``, ``elo2k`` and ``pairwise``, a saved replay state
        (``duckrate.replay_state``).
    player_a, player_b : two names, two lists of names of one length (pairs in order), or one name and a list.
    system : the system whose forecast applies: required for a replay table (or ratings) without a
        ``system`` column; picks one system of a table holding several. A ``bt_fit`` result is ``'bt'``.
    league : one league only (default: every league that holds both players).
    **forecast_parameters : the forecast's own parameters, by name (docs/reference.md lists them; None or
        absent: the system's default). E.g. ``side_a_advantage`` (``bt``: add the fit's ``home_advantage``
        to side A), ``scale`` and ``advantage`` (``elo``), ``c`` and ``rd_max`` (``glicko``: both RDs first
        grow by one rating period, as before their next game), ``beta``, ``tau``, ``draw_probability``
        (``trueskill``). A parameter another system's forecast takes is an error.

    Returns
    -------
    DataFrame with ``league, system, player_a, player_b, rating_a, rating_b, sd_a, sd_b, p_win_a, p_draw``,
    one row per pair and league holding both players (leagues in order, NULL first). ``p_win_a`` is the
    expected score of A (P(A wins) + ½ P(draw), the replays' ``expected_a``); ``p_draw`` is P(draw) for
    TrueSkill, NULL for systems without a draw model. A pair that no league holds is an error naming the
    player missing and the league.
    """
    return win_probability_of(
        packed_rows(ratings, "win_probability"),
        player_a,
        player_b,
        "ratings",
        system=system,
        league=league,
        **forecast_parameters,
    )


def win_matrix(
    ratings: pl.DataFrame,
    top: int = 20,
    system: str | None = None,
    league: str | None = None,
    **forecast_parameters,
) -> pl.DataFrame:
    """:func:`win_probability` between every two of the ``top`` players of each league, in long form.

    Players are ranked per league by rating (highest first; ties by name; no rating last), as the
    leaderboard ranks them. Returns ``league, system, player_a, rank_a, player_b, rank_b, rating_a,
    rating_b, p_win_a, p_draw``: N(N - 1) rows per league of N players kept (no diagonal: a player never
    meets itself), ordered by league, ``rank_a``, ``rank_b``; pivot on ``player_a`` x ``player_b``. The
    other parameters are :func:`win_probability`'s.
    """
    return win_matrix_of(
        packed_rows(ratings, "win_matrix"),
        "ratings",
        top=top,
        system=system,
        league=league,
        **forecast_parameters,
    )
