"""Forecasts of a team match from current ratings: :func:`predict_win`, :func:`predict_draw`,
:func:`predict_rank`, :func:`match_quality`, and :func:`balance_teams`, which splits players into the fairest
teams.

The ratings come from any table of a team system (told apart by their columns):

- a team replay (``player``, ``rating_after``, ``sd_after``, ``seq``): each player's rating after their last
  match (largest ``seq``);
- a table of ratings (``player``, ``rating``, ``sd``): a leaderboard;
- a saved state (``kind``, ``value``; ``<system>_state``, ``replay_<system>__state``): its player rows, and the
  parameters it was saved with.

The system is the table's own (its ``system`` column or the state's league rows), or ``system``. Parameters
given override the saved ones (a state), which override the system's defaults. A player the table does not
hold is rated as a newcomer (the parameters' ``mu`` and ``sigma``). Each forecast is the system's own
(:attr:`~duckrate.systems.team.TeamSystem.predict`); match quality is TrueSkill's (Herbrich, Minka & Graepel
2006, eq. 4 generalised to teams, as the ``trueskill`` package computes it) with the system's ``beta``.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.registry import SYSTEMS
from duckrate.core.teams import TEAM_RESULTS
from duckrate.systems.team import TeamSystem
from duckrate.systems.trueskill_teams.factor_graph import settings_array as quality_settings
from duckrate.systems.trueskill_teams.quality import match_quality as _quality

#: One row per player the forecasts read.
RATED_COLUMNS: dict[str, Any] = {
    "source": pl.Utf8,
    "league": pl.Utf8,
    "system": pl.Utf8,
    "player": pl.Utf8,
    "rating": pl.Float64,
    "sd": pl.Float64,
    "kind": pl.Utf8,
    "value": pl.List(pl.Float64),
    "params": pl.Utf8,
}
PREDICTION_COLUMNS: dict[str, Any] = {
    "team": pl.Int64,
    "players": pl.List(pl.Utf8),
    "p_win": pl.Float64,
    "predicted_rank": pl.Int64,
}
BALANCE_COLUMNS: dict[str, Any] = {
    "team": pl.Int64,
    "player": pl.Utf8,
    "p_win": pl.Float64,
    "spread": pl.Float64,
    "exact": pl.Boolean,
}
#: balance_teams searches every split up to this many players, and uses :func:`_heuristic_split` above.
EXACT_UP_TO = 12
KINDS = "a team replay (the output of a team *_replay macro), a leaderboard, or a saved team state (<system>_state)"


def rated_rows(frame: pl.DataFrame, caller: str) -> pl.DataFrame:
    """A Polars table of any of the kinds above as :data:`RATED_COLUMNS` rows (the SQL macros build the same
    rows in DuckDB)."""
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(f"{caller}: expected the ratings as a polars.DataFrame, got {type(frame).__name__}")
    columns = set(frame.columns)
    if set(RATED_COLUMNS) <= columns:  # already such rows (what the SQL macros hand over)
        return frame.select(pl.col(name).cast(kind) for name, kind in RATED_COLUMNS.items())
    if {"kind", "value"} <= columns:
        rows, source = frame, "state"
    elif {"player", "rating_after", "seq"} <= columns:
        keys = [name for name in ("league", "system") if name in columns]
        sd = pl.col("sd_after") if "sd_after" in columns else pl.lit(None, dtype=pl.Float64)
        rows = (
            frame.select(
                *keys, "seq", pl.col("player").cast(pl.Utf8), pl.col("rating_after").alias("rating"), sd.alias("sd")
            )
            .group_by(*keys, "player")
            .agg(pl.col("rating", "sd").sort_by("seq").last())
        )
        source = "replay"
    elif {"player", "rating"} <= columns:
        rows, source = frame, "ratings"
    else:
        raise DuckrateInputError(f"{caller}: the table has columns {', '.join(frame.columns)}; expected {KINDS}")
    return rows.with_columns(
        pl.lit(source).alias("source"),
        *(
            pl.lit(None, dtype=kind).alias(name)
            for name, kind in RATED_COLUMNS.items()
            if name not in rows.columns and name != "source"
        ),
    ).select(pl.col(name).cast(kind) for name, kind in RATED_COLUMNS.items())


def _system(rows: pl.DataFrame, system: str | None, caller: str) -> TeamSystem:
    held = rows.filter((pl.col("source") != "state") | (pl.col("kind") == "league"))["system"].drop_nulls().unique()
    names = sorted(held.to_list())
    if system is None:
        if len(names) != 1:
            teams = ", ".join(repr(s.name) for s in SYSTEMS.of(TEAM_RESULTS))
            what = f"holds several systems ({', '.join(map(repr, names))})" if names else "names no system"
            raise DuckrateInputError(f"{caller}: the table {what}; choose one with system := '...' (one of {teams})")
        system = names[0]
    elif names and system not in names:
        raise DuckrateInputError(
            f"{caller}: the table holds no rows of system {system!r}; it holds {', '.join(map(repr, names))}"
        )
    entry = SYSTEMS.get(system, caller, TEAM_RESULTS)
    assert isinstance(entry, TeamSystem)
    return entry


def _parameters(rows: pl.DataFrame, system: TeamSystem, given: dict, caller: str) -> dict:
    saved: dict = {}
    texts = rows.filter(pl.col("kind") == "league")["params"].drop_nulls().unique().to_list()
    if len(texts) > 1:
        raise DuckrateInputError(
            f"{caller}: the state holds {len(texts)} parameter sets; expected one (one replay's state)"
        )
    if texts:
        saved = {
            key: value for key, value in json.loads(texts[0]).items() if key in {p.name for p in system.parameters}
        }
    return system.resolve({**saved, **{key: value for key, value in given.items() if value is not None}})


def _ratings(rows: pl.DataFrame, system: TeamSystem, league: str | None, caller: str) -> dict[str, tuple[float, float]]:
    if rows.height and rows["source"][0] == "state":
        players = rows.filter(pl.col("kind") == "player")
        players = players.with_columns(
            pl.col("value").list.get(0).alias("rating"), pl.col("value").list.get(1).alias("sd")
        )
    else:
        players = rows.filter(pl.col("system").is_null() | (pl.col("system") == system.name))
    leagues = players["league"].unique().to_list()
    if league is None and len(leagues) > 1:
        raise DuckrateInputError(
            f"{caller}: the table holds several leagues ({', '.join(repr(v) for v in sorted(leagues, key=str))}); "
            "choose one with league := '...'"
        )
    if league is not None:
        players = players.filter(pl.col("league") == league)
    twice = players.filter(pl.col("player").is_duplicated())
    if twice.height:
        raise DuckrateInputError(
            f"{caller}: the table has player {twice['player'][0]!r} twice; expected one row per player"
        )
    return {p: (r, s) for p, r, s in players.select("player", "rating", "sd").iter_rows()}


def _teams(teams: Sequence[Sequence[str]], caller: str) -> list[list[str]]:
    if isinstance(teams, str) or not isinstance(teams, Sequence) or len(teams) < 2:
        raise DuckrateInputError(
            f"{caller}: teams = {teams!r}; expected a list of at least two teams (lists of player names)"
        )
    seen: set = set()
    out = []
    for team in teams:
        if isinstance(team, str) or not isinstance(team, Sequence) or not team:
            raise DuckrateInputError(f"{caller}: team {team!r}; expected a non-empty list of player names")
        for player in team:
            if not isinstance(player, str) or not player:
                raise DuckrateInputError(f"{caller}: player {player!r}; expected a non-empty name")
            if player in seen:
                raise DuckrateInputError(f"{caller}: player {player!r} is in two teams (or twice); expected each once")
            seen.add(player)
        out.append(list(team))
    return out


class _Match:
    """The teams of one forecast as the systems' kernels read them."""

    def __init__(self, teams: list[list[str]], ratings: dict, params: dict):
        flat = [player for team in teams for player in team]
        newcomer = (params["mu"], params["sigma"])
        self.mu = np.array([ratings.get(p, newcomer)[0] for p in flat], dtype=np.float64)
        self.sigma = np.array([ratings.get(p, newcomer)[1] for p in flat], dtype=np.float64)
        self.bounds = np.concatenate([[0], np.cumsum([len(team) for team in teams])]).astype(np.int64)
        self.weight = np.ones(len(flat))


def _setup(ratings: pl.DataFrame, system, league, given: dict, caller: str):
    rows = rated_rows(ratings, caller)
    entry = _system(rows, system, caller)
    params = _parameters(rows, entry, given, caller)
    return entry, params, _ratings(rows, entry, league, caller)


def _forecast(ratings, teams, system, league, given, caller):
    checked = _teams(teams, caller)
    entry, params, rated = _setup(ratings, system, league, given, caller)
    match = _Match(checked, rated, params)
    p_win, ranks, p_draw = entry.predict(params, match.mu, match.sigma, match.bounds, match.weight)
    frame = pl.DataFrame(
        {
            "team": np.arange(1, len(checked) + 1, dtype=np.int64),
            "players": checked,
            "p_win": p_win,
            "predicted_rank": ranks,
        },
        schema=PREDICTION_COLUMNS,
    )
    return frame, p_draw, entry, params, match


def predict_win(
    ratings: pl.DataFrame, teams, system: str | None = None, league: str | None = None, **params
) -> pl.DataFrame:
    """Each team's probability of winning the match (the system's own forecast) and its predicted place:
    one row per team (``team`` 1, 2, ... in the order given, ``players``, ``p_win``, ``predicted_rank``)."""
    return _forecast(ratings, teams, system, league, params, "predict_win")[0]


def predict_rank(
    ratings: pl.DataFrame, teams, system: str | None = None, league: str | None = None, **params
) -> pl.DataFrame:
    """The predicted place of each team (1 = most likely to win; equal forecasts share a place) with the
    probability it rests on, as :func:`predict_win`'s rows sorted by place."""
    return _forecast(ratings, teams, system, league, params, "predict_rank")[0].sort("predicted_rank", "team")


def predict_draw(ratings: pl.DataFrame, teams, system: str | None = None, league: str | None = None, **params) -> float:
    """The probability that the match is drawn (the system's own forecast)."""
    return float(_forecast(ratings, teams, system, league, params, "predict_draw")[1])


def match_quality(
    ratings: pl.DataFrame, teams, system: str | None = None, league: str | None = None, **params
) -> float:
    """TrueSkill's match quality of the teams (1 = a perfectly even match of certain skills), with the system's
    ``beta``."""
    _, _, _, params_used, match = _forecast(ratings, teams, system, league, params, "match_quality")
    settings = quality_settings(params_used["beta"], 0.0, 0.0)  # quality reads beta alone
    return float(_quality(settings, match.mu, match.sigma, match.bounds, match.weight))


def _sizes(n_players: int, n_teams: int) -> list[int]:
    return [n_players // n_teams + (1 if t < n_players % n_teams else 0) for t in range(n_teams)]


def _spread(entry: TeamSystem, params: dict, teams: list[list[str]], rated: dict) -> tuple[float, np.ndarray]:
    match = _Match(teams, rated, params)
    p_win = entry.predict(params, match.mu, match.sigma, match.bounds, match.weight)[0]
    return float(p_win.max() - p_win.min()), p_win


def _splits(players: list[str], sizes: list[int]):
    """Every split of ``players`` into teams of ``sizes`` (non-increasing), each once: teams of equal size are
    unordered, so each team of a size class starts with the first player left."""
    if not sizes:
        yield []
        return
    size, rest = sizes[0], sizes[1:]
    first, others = players[0], players[1:]
    if rest and rest[0] == size:  # the next team has the same size: this team holds the first player left
        for mates in itertools.combinations(others, size - 1):
            team = [first, *mates]
            left = [p for p in others if p not in mates]
            for tail in _splits(left, rest):
                yield [team, *tail]
    else:
        for chosen in itertools.combinations(players, size):
            left = [p for p in players if p not in chosen]
            for tail in _splits(left, rest):
                yield [list(chosen), *tail]


def _heuristic_split(entry, params, players, sizes, rated) -> list[list[str]]:
    """Above :data:`EXACT_UP_TO` players: a snake draft by ordinal (mu - 3 sigma), then swaps of two players of
    different teams while a swap lowers the spread (first improving swap in a fixed order)."""
    newcomer = (params["mu"], params["sigma"])
    order = sorted(players, key=lambda p: (-(rated.get(p, newcomer)[0] - 3 * rated.get(p, newcomer)[1]), p))
    teams: list[list[str]] = [[] for _ in sizes]
    direction, t = 1, 0
    for player in order:
        while len(teams[t]) >= sizes[t]:
            t = (t + direction) % len(sizes)
        teams[t].append(player)
        if 0 <= t + direction < len(sizes):
            t += direction
        else:
            direction = -direction
    best, _ = _spread(entry, params, teams, rated)
    improved = True
    while improved:
        improved = False
        for a, b in itertools.combinations(range(len(teams)), 2):
            for i, j in itertools.product(range(len(teams[a])), range(len(teams[b]))):
                teams[a][i], teams[b][j] = teams[b][j], teams[a][i]
                spread, _ = _spread(entry, params, teams, rated)
                if spread < best - 1e-15:
                    best, improved = spread, True
                else:
                    teams[a][i], teams[b][j] = teams[b][j], teams[a][i]
    return teams


def balance_teams(
    ratings: pl.DataFrame,
    players: Sequence[str],
    n_teams: int = 2,
    system: str | None = None,
    league: str | None = None,
    exact: bool | None = None,
    **params,
) -> pl.DataFrame:
    """Split ``players`` into ``n_teams`` teams (sizes differ by at most one) whose win probabilities are as
    even as possible (smallest max - min of ``p_win``): every split is tried up to :data:`EXACT_UP_TO` players
    (or when ``exact`` is true), a snake draft improved by swaps above (``exact`` false). One row per player:
    ``team``, ``player``, the team's ``p_win``, the split's ``spread`` and whether the search was ``exact``."""
    caller = "balance_teams"
    if isinstance(players, str) or not isinstance(players, Sequence):
        raise DuckrateInputError(f"{caller}: players = {players!r}; expected a list of player names")
    names = _teams([list(players), ["?"]], caller)[0] if players else []
    if isinstance(n_teams, bool) or not isinstance(n_teams, int) or n_teams < 2 or n_teams > len(names):
        raise DuckrateInputError(
            f"{caller}: n_teams = {n_teams!r}; expected a whole number from 2 to the number of players ({len(names)})"
        )
    entry, params_used, rated = _setup(ratings, system, league, params, caller)
    sizes = sorted(_sizes(len(names), n_teams), reverse=True)
    search = len(names) <= EXACT_UP_TO if exact is None else exact
    ordered = sorted(names)
    if search:
        best, best_split = math.inf, None
        for split in _splits(ordered, sizes):
            spread, _ = _spread(entry, params_used, split, rated)
            if spread < best:
                best, best_split = spread, split
        assert best_split is not None
        teams = best_split
    else:
        teams = _heuristic_split(entry, params_used, ordered, sizes, rated)
    spread, p_win = _spread(entry, params_used, teams, rated)
    rows = [(t + 1, player, float(p_win[t]), spread, search) for t, team in enumerate(teams) for player in sorted(team)]
    return pl.DataFrame(rows, schema=BALANCE_COLUMNS, orient="row")
