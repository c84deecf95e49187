"""The demo seed CSVs bundled with the dbt package (matches, contest results, team results), in raw layouts with
a few deliberately bad rows: :func:`write_demo_seeds`."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from duckrate.synthetic.contests import generate_contests
from duckrate.synthetic.matches import generate_matches
from duckrate.synthetic.teams import generate_team_matches

#: Number of deliberately invalid rows that :func:`write_demo_seeds` injects into
#: ``demo_matches.csv`` (on top of the valid generated games); see its docstring.
DEMO_BAD_MATCH_ROWS = 6

#: ``game_id`` of the valid demo game that the injected duplicate row reuses.
DEMO_DUPLICATED_GAME_ID = 27_500


def _demo_matches_raw(matches: pl.DataFrame) -> pl.DataFrame:
    """Turn canonical matches into the raw demo layout (all columns as text or ints)."""
    return matches.select(
        pl.col("match_id").alias("game_id"),
        pl.col("played_at").dt.strftime("%Y-%m-%d %H:%M:%S").alias("played_at"),
        pl.col("league"),
        pl.col("player_a").alias("white"),
        pl.col("player_b").alias("black"),
        pl.col("score_a")
        .replace_strict({1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}, return_dtype=pl.Utf8)
        .alias("result"),
    )


def _with_injected_bad_rows(raw_matches: pl.DataFrame) -> pl.DataFrame:
    """Insert the ``DEMO_BAD_MATCH_ROWS`` bad rows documented in :func:`write_demo_seeds`."""
    n_valid = raw_matches.height
    # (valid game_id the bad row follows, game_id of the bad row, column overrides)
    bad_rows: list[tuple[int, int, dict[str, str | None]]] = [
        (5_000, n_valid + 1, {"black": None}),
        (10_000, n_valid + 2, {"black": "__white__"}),
        (15_000, n_valid + 3, {"result": "2-0"}),
        (20_000, n_valid + 4, {"played_at": None}),
        (25_000, n_valid + 5, {"played_at": "2024-13-45 25:61:00"}),
        (DEMO_DUPLICATED_GAME_ID, DEMO_DUPLICATED_GAME_ID, {"result": "__flip__"}),
    ]
    assert len(bad_rows) == DEMO_BAD_MATCH_ROWS
    flipped_result = {"1-0": "0-1", "0-1": "1-0", "1/2-1/2": "1-0"}

    pieces = []
    previous_game_id = 0
    for after_game_id, bad_game_id, overrides in bad_rows:
        pieces.append(raw_matches.slice(previous_game_id, after_game_id - previous_game_id))
        bad_row = raw_matches.row(after_game_id - 1, named=True)
        bad_row["game_id"] = bad_game_id
        for column, value in overrides.items():
            if value == "__white__":
                value = bad_row["white"]
            elif value == "__flip__":
                value = flipped_result[bad_row[column]]
            bad_row[column] = value
        pieces.append(pl.DataFrame([bad_row], schema=raw_matches.schema))
        previous_game_id = after_game_id
    pieces.append(raw_matches.slice(previous_game_id))
    return pl.concat(pieces)


#: The demo team leagues: 5v5 matches given by goals (with partial play), and squads of 1-3 players in 3-6
#: team free-for-alls given by places.
DEMO_TEAM_MATCHES = {"arena_5v5": 1_500, "squads": 500}
#: The deliberately bad team rows appended to ``demo_team_results.csv`` (one match each; see write_demo_seeds).
DEMO_BAD_TEAM_MATCHES = 2


def demo_team_results() -> pl.DataFrame:
    """The valid demo team results in canonical columns (both leagues, match ids 1..2000 in time order)."""
    arena = generate_team_matches(
        DEMO_TEAM_MATCHES["arena_5v5"], 400, seed=2024, partial_play_rate=0.1, scores=True, matches_per_day=100.0
    )
    squads = generate_team_matches(
        DEMO_TEAM_MATCHES["squads"], 300, seed=2025, teams_per_match=(3, 6), team_size=(1, 3), matches_per_day=40.0
    )
    arena = arena.with_columns(pl.lit("arena_5v5").alias("league"), pl.lit(None, dtype=pl.Int64).alias("rank"))
    squads = squads.with_columns(
        pl.lit("squads").alias("league"),
        pl.col("match_id") + DEMO_TEAM_MATCHES["arena_5v5"],
        pl.lit(None, dtype=pl.Float64).alias("score"),
        pl.col("player").str.replace("p", "s"),
    )
    columns = ["match_id", "played_at", "league", "team", "player", "rank", "score", "weight"]
    return pl.concat([arena.select(columns), squads.select(columns)])


def _demo_teams_raw(teams: pl.DataFrame) -> pl.DataFrame:
    return teams.select(
        pl.col("match_id").alias("match"),
        pl.col("played_at").dt.strftime("%Y-%m-%d %H:%M:%S").alias("played_at"),
        "league",
        pl.col("team").alias("squad"),
        pl.col("player").alias("gamer"),
        pl.col("rank").alias("place"),
        pl.col("score").alias("goals"),
        pl.when(pl.col("weight") < 1.0).then(pl.col("weight")).alias("share"),
    )


def _with_bad_team_rows(raw: pl.DataFrame) -> pl.DataFrame:
    """Two bad matches after the valid ones: 2001, a 1v1 whose second player's share is 1.5; 2002, a 1v1 with
    the same gamer on both sides."""
    last = raw.row(raw.height - 1, named=True)
    base = {**last, "league": "arena_5v5", "place": None, "share": None}
    bad = [
        {**base, "match": 2001, "squad": "red", "gamer": "p000001", "goals": 2.0},
        {**base, "match": 2001, "squad": "blue", "gamer": "p000002", "goals": 1.0, "share": 1.5},
        {**base, "match": 2002, "squad": "red", "gamer": "p000003", "goals": 2.0},
        {**base, "match": 2002, "squad": "blue", "gamer": "p000003", "goals": 0.0},
    ]
    assert len({row["match"] for row in bad}) == DEMO_BAD_TEAM_MATCHES
    return pl.concat([raw, pl.DataFrame(bad, schema=raw.schema)])


def write_demo_seeds(directory: str | Path) -> None:
    """Write the two demo seed CSVs bundled with the dbt package into ``directory``.

    ``demo_matches.csv`` holds ``generate_matches(30_000, 1_000, n_leagues=2,
    seed=2024)`` in a raw layout: ``game_id, played_at, league, white, black,
    result`` with ``game_id = match_id``, ``played_at`` as text
    ``YYYY-MM-DD HH:MM:SS``, ``white = player_a`` (first mover), ``black =
    player_b`` and ``result`` one of ``'1-0'``, ``'0-1'``, ``'1/2-1/2'``.

    Rows are in ``game_id`` order, except for ``DEMO_BAD_MATCH_ROWS`` (6)
    injected invalid rows. Each is a copy of the valid game it directly
    follows, with one field broken:

    ==========  ===========  ==============================================
    follows     game_id      what is wrong
    ==========  ===========  ==============================================
    game 5000   30001        ``black`` is empty
    game 10000  30002        self-match: ``black`` equals ``white``
    game 15000  30003        ``result`` is ``'2-0'``
    game 20000  30004        ``played_at`` is empty
    game 25000  30005        ``played_at`` is ``'2024-13-45 25:61:00'``
    game 27500  27500        duplicate ``game_id`` (``DEMO_DUPLICATED_GAME_ID``)
                             with the result changed
    ==========  ===========  ==============================================

    The duplicate comes right after the valid game 27500 in the file; the
    valid rows alone (game_id 1..30000, first occurrence) are exactly the
    generated matches.

    ``demo_contest_results.csv`` holds ``generate_contests(40, 200, 1_000,
    seed=2024)`` as ``contest_id, played_at, league, handle, place`` (``handle
    = player``, ``place = rank``, ``played_at`` as text); it has no bad rows.

    ``demo_team_results.csv`` holds :func:`demo_team_results` (league
    ``arena_5v5``: 1,500 matches of 5v5 given by goals, 10% partial play;
    league ``squads``: 500 free-for-alls of 3-6 squads of 1-3 players given by
    places) as ``match, played_at, league, squad, gamer, place, goals, share``
    (``share`` empty for a full match), then ``DEMO_BAD_TEAM_MATCHES`` (2) bad
    1v1 matches: 2001 with a share of 1.5, 2002 with one gamer on both sides.

    Parameters
    ----------
    directory : str or pathlib.Path
        Target directory; created if missing. Existing files are overwritten.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    matches = generate_matches(30_000, 1_000, n_leagues=2, seed=2024)
    raw_matches = _with_injected_bad_rows(_demo_matches_raw(matches))
    raw_matches.write_csv(directory / "demo_matches.csv")

    contests = generate_contests(40, 200, 1_000, seed=2024)
    raw_contests = contests.select(
        pl.col("contest_id"),
        pl.col("played_at").dt.strftime("%Y-%m-%d %H:%M:%S"),
        pl.col("league"),
        pl.col("player").alias("handle"),
        pl.col("rank").alias("place"),
    )
    raw_contests.write_csv(directory / "demo_contest_results.csv")

    _with_bad_team_rows(_demo_teams_raw(demo_team_results())).write_csv(directory / "demo_team_results.csv")
