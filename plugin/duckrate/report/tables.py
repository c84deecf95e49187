"""What the report reads: the warehouse's marts, through a read-only DuckDB connection (no duckrate functions
needed: the marts are plain tables). Only tables that exist are read."""

from __future__ import annotations

from pathlib import Path

#: The marts the report shows, in the order of its sections (each read only when the warehouse holds it).
MARTS = (
    "leaderboard",
    "bt_ratings",
    "contest_leaderboard",
    "calibration_bins",
    "calibration_summary",
    "loss_curve",
    "loss_by_gap",
    "bt_tests",
    "contest_metrics",
    "contest_system_comparison",
    "team_leaderboard",
    "team_metrics",
    "team_calibration_summary",
    "tuning",
)
#: Leaderboard rows shown per league and system (the tiers of the top rows do not depend on the rest).
TOP_ROWS = 20
#: Players whose rating trajectory is drawn, per league and system.
TRAJECTORY_PLAYERS = 5


def _rows(con, sql: str, parameters: list | None = None) -> list[dict]:
    relation = con.execute(sql, parameters or [])
    names = [column[0] for column in relation.description]
    return [dict(zip(names, row)) for row in relation.fetchall()]


def present_tables(con) -> set[str]:
    """Names of the tables and views in the warehouse's main schema."""
    return {
        name
        for (name,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
    }


_ORDER = {
    "leaderboard": "league NULLS FIRST, system, rank",
    "bt_ratings": "league NULLS FIRST, rating DESC NULLS LAST, player",
    "contest_leaderboard": "league NULLS FIRST, system, rank",
    "calibration_bins": "league NULLS FIRST, system, bin",
    "calibration_summary": "league NULLS FIRST, system",
    "loss_curve": "league NULLS FIRST, system, t",
    "loss_by_gap": "league NULLS FIRST, system, gap_bin NULLS FIRST",
    "bt_tests": "league NULLS FIRST, test",
    "contest_metrics": "league NULLS FIRST, system",
    "contest_system_comparison": "league NULLS FIRST, rank_by_pair_inversion, system",
    "team_leaderboard": "league NULLS FIRST, system, rank",
    "team_metrics": "league NULLS FIRST, system",
    "team_calibration_summary": "league NULLS FIRST, system",
    "tuning": "league NULLS FIRST, system, rank",
}
_FILTER = {
    "leaderboard": f"rank <= {TOP_ROWS}",
    "contest_leaderboard": f"rank <= {TOP_ROWS}",
    "team_leaderboard": f"rank <= {TOP_ROWS}",
    "bt_ratings": f"row_number() OVER (PARTITION BY league ORDER BY rating DESC NULLS LAST, player) <= {TOP_ROWS}",
}


def read_marts(warehouse: Path) -> dict[str, list[dict]]:
    """Every mart of :data:`MARTS` the warehouse holds (rows as dicts; leaderboards cut to the top
    :data:`TOP_ROWS` per league and system), and ``trajectories``: each step of the top
    :data:`TRAJECTORY_PLAYERS` players of each league and system (``rating`` and ``sd`` after each of their
    matches, from the ``replays`` view), and ``history``: the same players' ratings at each time step in
    ``rating_history`` for the whole-history fits (:data:`HISTORY_SYSTEMS`)."""
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as con:
        present = present_tables(con)
        marts: dict[str, list[dict]] = {}
        for name in MARTS:
            if name not in present:
                continue
            where = (
                f" QUALIFY {_FILTER[name]}"
                if name == "bt_ratings"
                else (f" WHERE {_FILTER[name]}" if name in _FILTER else "")
            )
            marts[name] = _rows(con, f"SELECT * FROM {name}{where} ORDER BY {_ORDER[name]}")
        if {"replays", "leaderboard"} <= present:
            marts["trajectories"] = _rows(
                con,
                f"""WITH top AS (SELECT league, system, player, rank FROM leaderboard WHERE rank <= {TRAJECTORY_PLAYERS}),
                sides AS (
                    SELECT league, system, seq, player_a AS player, rating_a_after AS rating, sd_a_after AS sd FROM replays
                    UNION ALL
                    SELECT league, system, seq, player_b AS player, rating_b_after AS rating, sd_b_after AS sd FROM replays
                )
                SELECT t.league, t.system, t.player, t.rank, s.seq, s.rating, s.sd
                FROM sides AS s
                JOIN top AS t ON t.player = s.player AND t.system = s.system AND t.league IS NOT DISTINCT FROM s.league
                ORDER BY t.league NULLS FIRST, t.system, t.rank, s.seq""",
            )
        if "rating_history" in present:
            marts["history"] = _rows(con, _HISTORY_SQL)
    return marts


#: The systems whose rating history the report draws: the whole-history fits (the replays' trajectories are
#: drawn by match already).
HISTORY_SYSTEMS = ("whr_fit", "ttt_fit")
#: A mean Gregorian year in days (the history chart's years since 1970).
DAYS_PER_YEAR = 365.2425
# The top TRAJECTORY_PLAYERS players of each league and whole-history system by their rating at their last
# step, each step of theirs with its time: ``x`` in years (1970 + seconds / a mean Gregorian year), or the
# integer step where played_at is an integer.
_HISTORY_SQL = f"""
WITH timed AS (
    SELECT league, system, player, rating, sd, period_start IS NOT NULL AS timed,
        coalesce(1970 + epoch(period_start) / ({DAYS_PER_YEAR} * 86400), step::DOUBLE) AS x
    FROM rating_history
    WHERE system IN ({", ".join(f"'{name}'" for name in HISTORY_SYSTEMS)})
), last AS (
    SELECT league, system, player, arg_max(rating, x) AS final
    FROM timed GROUP BY league, system, player
), top AS (
    SELECT *, row_number() OVER (PARTITION BY league, system ORDER BY final DESC, player) AS rank
    FROM last QUALIFY rank <= {TRAJECTORY_PLAYERS}
)
SELECT t.league, t.system, t.player, p.rank, t.timed, t.x, t.rating, t.sd
FROM timed AS t
JOIN top AS p ON p.player = t.player AND p.system = t.system AND p.league IS NOT DISTINCT FROM t.league
ORDER BY t.league NULLS FIRST, t.system, p.rank, t.x
"""
