"""Marts DuckDB computes itself, in SQL: ``leaderboard``, ``calibration_bins``, ``loss_by_gap`` and the others
of :data:`SQL_MARTS`.

They stream and run in parallel like any DuckDB query and spill to disk under ``memory_limit``; nothing is
packed into a list for Python. Results do not depend on the thread count or the row order: the leaderboard
only picks rows (each player's row with the largest ``seq``) and ranks them, and the calibration bins sum
in DECIMAL(38, 20), exact integer arithmetic, so the parallel partial sums add up to the same total in any
order (each forecast and score rounded once to 1e-20, far below a double's precision at 1). The Polars
functions of :mod:`duckrate.evaluation` compute the same tables (equal within 1e-12, checked by
tests/sql/test_marts_sql.py).

Same contract as the other marts (:mod:`.evaluation_udf`): a replay table without a ``system`` column takes
``system :=``; a missing or mistyped column, a NULL or NaN forecast or an invalid parameter is an error
that names it; an empty table gives no rows.
"""

from __future__ import annotations

from duckrate.evaluation.loss_by_gap import BIN_WIDTH, DEFAULT_BIN_WIDTH, system_bin_widths
from duckrate.evaluation.replay_rows import PROBABILITY_CLIP, Z_95
from duckrate.sql.evaluation_udf import Mart, replay_source, signature
from duckrate.sql.evaluation_udf import macro_sql as udf_macro_sql
from duckrate.sql.ranks_udf import ranks_sql

_INTEGER_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
)
_INTEGER_LIST = ", ".join(f"'{name}'" for name in _INTEGER_TYPES)
_NUMBER_CHECK = f"typeof({{x}}) IN ({_INTEGER_LIST}, 'FLOAT', 'DOUBLE') OR typeof({{x}}) LIKE 'DECIMAL%'"
_QUOTE = "''''"  # a SQL string literal holding one single quote
#: Exact sums: a value in [0, 1] rounded to 1e-20; 18 digits left for the total. (precision, scale)
EXACT_DIGITS = (38, 20)
EXACT = "DECIMAL({}, {})".format(*EXACT_DIGITS)


def _double(value: float) -> str:
    """A DOUBLE literal of exactly this float (a bare ``1.5`` would be a DECIMAL in DuckDB)."""
    return f"CAST({float(value)!r} AS DOUBLE)"


def _column(mart: Mart, name: str, kind: str, not_null: bool = False) -> str:
    """``r.<name>``, or an error naming it when the table lacks it, it has the wrong type or (``not_null``)
    it is NULL. ``kind``: 'integer', 'number' or 'any'."""
    missing = (
        f"{mart.name}: the table is missing column(s) ''{name}''; expected a replay table (the output of a "
        f"*_replay macro) with columns {', '.join(mart.fields)}"
    )
    cases = [f"""WHEN typeof(r.{name}) = '"NULL"' THEN error('{missing}')"""]
    if kind != "any":
        expected = "an integer" if kind == "integer" else "a number (DOUBLE)"
        ok = f"typeof(r.{name}) IN ({_INTEGER_LIST})" if kind == "integer" else _NUMBER_CHECK.format(x=f"r.{name}")
        cases.append(
            f"WHEN NOT ({ok}) THEN error('{mart.name}: column ''{name}'' has type ' || CASE typeof(r.{name}) WHEN 'VARCHAR' THEN 'string' WHEN 'BOOLEAN' THEN 'bool' ELSE typeof(r.{name}) END || "
            f"'; expected {expected} (a replay table''s column)')"
        )
    if not_null:
        cases.append(f"WHEN r.{name} IS NULL THEN error('{mart.name}: expected {name} without nulls')")
    return f"CASE {' '.join(cases)} ELSE r.{name} END"


def _forecast(mart: Mart, name: str) -> str:
    """A forecast or score column as DOUBLE, checked: non-null, not NaN, in [0, 1]."""
    value = f"CAST({_column(mart, name, 'number')} AS DOUBLE)"
    return (
        f"CASE WHEN {value} IS NULL OR isnan({value}) THEN error('{mart.name}: expected {name} without nulls or NaN') "
        f"WHEN {value} < 0 OR {value} > 1 THEN error('{mart.name}: expected {name} within [0, 1], found ' || {value}) "
        f"ELSE {value} END"
    )


def _integer_parameter(mart: Mart, name: str, minimum: int) -> str:
    """The macro parameter ``name`` as BIGINT, or an error that shows the value given (as the Python path
    words it: text quoted, NULL as None) when it is not a whole number >= ``minimum``."""
    given = (
        f"'{mart.name}: parameter {name} = ' || CASE WHEN {name} IS NULL THEN 'None' "
        f"WHEN typeof({name}) = 'VARCHAR' THEN {_QUOTE} || CAST({name} AS VARCHAR) || {_QUOTE} ELSE CAST({name} AS VARCHAR) END"
    )
    return (
        f"CASE WHEN {name} IS NULL OR NOT ({_NUMBER_CHECK.format(x=name)}) THEN error({given} || '; expected a number') "
        f"WHEN CAST({name} AS DOUBLE) < {minimum} OR CAST({name} AS DOUBLE) <> floor(CAST({name} AS DOUBLE)) "
        f"THEN error({given} || '; expected an integer >= {minimum}') ELSE CAST({name} AS BIGINT) END"
    )


def _log_loss(p: str, s: str) -> str:
    """Per-match log loss ``-(s ln p + (1 - s) ln(1 - p))``, p clipped to [1e-15, 1 - 1e-15], written as the
    Polars expression of :func:`duckrate.evaluation.replay_rows.log_loss_expr` is."""
    clipped = f"least(greatest({p}, {_double(PROBABILITY_CLIP)}), {_double(1.0 - PROBABILITY_CLIP)})"
    one = _double(1.0)
    return f"-({s} * ln({clipped}) + ({one} - {s}) * ln({one} - {clipped}))"


def _mean(value: str, rows: str = "count(*)") -> str:
    """An exact mean: the DECIMAL sum (order-free) rounded once to DOUBLE, over ``rows`` as DOUBLE."""
    return f"CAST(sum(CAST({value} AS {EXACT})) AS DOUBLE) / CAST(nullif({rows}, 0) AS DOUBLE)"


def _played_at(mart: Mart) -> str:
    message = f"{mart.name}: the table is missing column ''played_at''; expected a replay table (the output of a *_replay macro)"
    return f"""CASE WHEN typeof(r.played_at) = '"NULL"' THEN error('{message}') ELSE r.played_at END"""


def _ranked(count: str) -> str:
    """The end of both leaderboards after their ``players`` CTE (``last``: the struct of the latest row): rank
    1 = highest rating per (league, system), NULL last, ties by player name; rating ∓ z·sd; then the interval
    ranks and tiers (:mod:`.ranks_udf`)."""
    z = _double(Z_95)
    return f""", ranked AS (
SELECT p.league, p.system, p.player,
       row_number() OVER (PARTITION BY p.league, p.system ORDER BY p.last.rating DESC NULLS LAST, p.player) AS rank,
       p.last.rating AS rating, p.last.sd AS sd,
       p.last.rating - {z} * p.last.sd AS lower, p.last.rating + {z} * p.last.sd AS upper,
       p.{count}, p.last.played_at AS last_played_at
FROM players AS p
)
{ranks_sql("ranked")}
"""


def leaderboard_sql(mart: Mart) -> str:
    """Each player's state after their last match (largest ``seq``), ranked per (league, system) by rating
    (descending, NULL last), ties by player name; ``lower``/``upper`` = rating ∓ z·sd (95%)."""
    seq = _column(mart, "seq", "integer", not_null=True)
    numbers = {
        name: f"CAST({_column(mart, name, 'number')} AS DOUBLE)"
        for name in ("rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after")
    }
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH r AS (
    SELECT CAST(r.league AS VARCHAR) AS league, r.system AS system,
           {seq} AS seq,
           CAST({_column(mart, "player_a", "any")} AS VARCHAR) AS player_a,
           CAST({_column(mart, "player_b", "any")} AS VARCHAR) AS player_b,
           {numbers["rating_a_after"]} AS rating_a_after, {numbers["rating_b_after"]} AS rating_b_after,
           {numbers["sd_a_after"]} AS sd_a_after, {numbers["sd_b_after"]} AS sd_b_after,
           {_played_at(mart)} AS played_at
    FROM {replay_source(mart)} AS r
), sides AS (
    SELECT r.league, r.system, r.player_a AS player, r.seq, r.rating_a_after AS rating, r.sd_a_after AS sd, r.played_at FROM r
    UNION ALL
    SELECT r.league, r.system, r.player_b AS player, r.seq, r.rating_b_after AS rating, r.sd_b_after AS sd, r.played_at FROM r
), players AS (
    SELECT s.league, s.system, s.player, count(*) AS games,
           arg_max({{'rating': s.rating, 'sd': s.sd, 'played_at': s.played_at}}, s.seq) AS last
    FROM sides AS s
    GROUP BY s.league, s.system, s.player
)
{_ranked("games")}"""


def calibration_bins_sql(mart: Mart) -> str:
    """Per (league, system) and equal-width forecast bin: n, mean forecast, mean score and the 95% Wilson
    interval of the mean score (the Polars function's formula, operation for operation)."""
    bins = _integer_parameter(mart, "bins", 1)
    z2 = _double(Z_95 * Z_95)
    z = _double(Z_95)
    one, two, four = _double(1.0), _double(2.0), _double(4.0)
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH parameters AS (SELECT {bins} AS bins),
r AS (
    SELECT CAST(r.league AS VARCHAR) AS league, r.system AS system,
           {_forecast(mart, "expected_a")} AS expected_a, {_forecast(mart, "score_a")} AS score_a
    FROM {replay_source(mart)} AS r
), binned AS (
    SELECT r.league, r.system, r.expected_a, r.score_a,
           least(greatest(CAST(floor(r.expected_a * CAST(p.bins AS DOUBLE)) AS BIGINT), 0), p.bins - 1) + 1 AS bin
    FROM r CROSS JOIN parameters AS p
), per_bin AS (
    SELECT b.league, b.system, b.bin, count(*) AS n,
           CAST(sum(CAST(b.expected_a AS {EXACT})) AS DOUBLE) / CAST(count(*) AS DOUBLE) AS mean_expected,
           CAST(sum(CAST(b.score_a AS {EXACT})) AS DOUBLE) / CAST(count(*) AS DOUBLE) AS mean_score
    FROM binned AS b
    GROUP BY b.league, b.system, b.bin
), wilson AS (
    SELECT w.*, CAST(w.n AS DOUBLE) AS trials, {one} + {z2} / CAST(w.n AS DOUBLE) AS denominator FROM per_bin AS w
), bounds AS (
    SELECT w.*, (w.mean_score + {z2} / ({two} * w.trials)) / w.denominator AS centre,
           {z} * sqrt(w.mean_score * ({one} - w.mean_score) / w.trials + {z2} / ({four} * w.trials * w.trials)) / w.denominator AS half_width
    FROM wilson AS w
)
SELECT o.league, o.system, o.bin, o.n, o.mean_expected, o.mean_score,
       least(greatest(o.centre - o.half_width, {_double(0.0)}), {one}) AS lower,
       least(greatest(o.centre + o.half_width, {_double(0.0)}), {one}) AS upper
FROM bounds AS o
ORDER BY o.league NULLS FIRST, o.system, o.bin
"""


def loss_curve_sql(mart: Mart) -> str:
    """Per (league, system): the mean log loss of the first t matches (in seq order) at ``points`` evenly
    spaced t from 1 to T (every t when T <= points: ``t_k = 1 + round((T - 1)·k / (points - 1))``, halves
    up, as the Polars function), with ``t_over_n`` = t / the group's distinct players. Each match is summed
    (exact, DECIMAL) into the first checkpoint at or after its position, ``k = ceil((2·pos - 3)(points - 1)
    / (2(T - 1)))``, and the few checkpoint sums are accumulated."""
    points = _integer_parameter(mart, "points", 1)
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH parameters AS (SELECT {points} AS points),
r AS (
    SELECT CAST(r.league AS VARCHAR) AS league, r.system AS system, {_column(mart, "seq", "integer", not_null=True)} AS seq,
           CAST({_column(mart, "player_a", "any")} AS VARCHAR) AS player_a, CAST({_column(mart, "player_b", "any")} AS VARCHAR) AS player_b,
           {_forecast(mart, "expected_a")} AS expected_a, {_forecast(mart, "score_a")} AS score_a
    FROM {replay_source(mart)} AS r
), groups AS (
    SELECT g.league, g.system, count(*) AS matches FROM r AS g GROUP BY g.league, g.system
), positioned AS (  -- each match's position in seq order, and the checkpoint it first counts towards
    SELECT q.league, q.system, q.log_loss,
           CASE WHEN p.points = 1 THEN 0
                WHEN g.matches <= p.points THEN q.position - 1
                ELSE greatest(0, ((2 * q.position - 3) * (p.points - 1) + 2 * (g.matches - 1) - 1) // (2 * (g.matches - 1)))
           END AS checkpoint
    FROM (SELECT r.league, r.system, {_log_loss("r.expected_a", "r.score_a")} AS log_loss,
                 row_number() OVER (PARTITION BY r.league, r.system ORDER BY r.seq) AS position
          FROM r) AS q
    JOIN groups AS g ON g.league IS NOT DISTINCT FROM q.league AND g.system IS NOT DISTINCT FROM q.system
    CROSS JOIN parameters AS p
), buckets AS (
    SELECT b.league, b.system, b.checkpoint, sum(CAST(b.log_loss AS {EXACT})) AS total
    FROM positioned AS b GROUP BY b.league, b.system, b.checkpoint
), running AS (
    SELECT u.league, u.system, u.checkpoint,
           sum(u.total) OVER (PARTITION BY u.league, u.system ORDER BY u.checkpoint ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS total
    FROM buckets AS u
), players AS (
    SELECT q.league, q.system, count(DISTINCT q.player) AS players
    FROM (SELECT r.league, r.system, r.player_a AS player FROM r UNION ALL SELECT r.league, r.system, r.player_b FROM r) AS q
    GROUP BY q.league, q.system
), checkpoints AS (
    SELECT g.league, g.system, unnest(range(CASE WHEN g.matches <= p.points OR p.points = 1 THEN least(g.matches, p.points) ELSE p.points END)) AS checkpoint,
           g.matches, p.points
    FROM groups AS g CROSS JOIN parameters AS p
), steps AS (
    SELECT c.league, c.system, c.checkpoint, CASE
        WHEN c.points = 1 THEN c.matches
        WHEN c.matches <= c.points THEN c.checkpoint + 1
        ELSE 1 + (2 * (c.matches - 1) * c.checkpoint + (c.points - 1)) // (2 * (c.points - 1))
    END AS t
    FROM checkpoints AS c
)
SELECT c.league, c.system, c.t, CAST(c.t AS DOUBLE) / CAST(n.players AS DOUBLE) AS t_over_n,
       CAST(u.total AS DOUBLE) / CAST(c.t AS DOUBLE) AS mean_log_loss
FROM steps AS c
JOIN running AS u ON u.checkpoint = c.checkpoint AND u.league IS NOT DISTINCT FROM c.league AND u.system IS NOT DISTINCT FROM c.system
JOIN players AS n ON n.league IS NOT DISTINCT FROM c.league AND n.system IS NOT DISTINCT FROM c.system
ORDER BY c.league NULLS FIRST, c.system, c.t
"""


def calibration_summary_sql(mart: Mart) -> str:
    """Per (league, system): n, mean log loss, Brier score, accuracy over decisive games, and the same log
    loss over *established* matches: both players had at least ``min_games`` earlier matches and (with
    ``max_sd``: a number, or a MAP / STRUCT from system to number) both sds before the match at most that
    bound; ``warmup`` drops the first share of each (league, system)'s matches in seq order from every
    figure (not from the games counted). Exact sums (DECIMAL), as the other SQL marts."""
    min_games = _integer_parameter(mart, "min_games", 0)
    warmup_given = (
        f"'{mart.name}: expected warmup to be a share in [0, 1), got ' || coalesce(CAST(warmup AS VARCHAR), 'None')"
    )
    warmup = (
        f"CASE WHEN warmup IS NULL OR NOT ({_NUMBER_CHECK.format(x='warmup')}) THEN error({warmup_given}) "
        f"WHEN isnan(CAST(warmup AS DOUBLE)) OR CAST(warmup AS DOUBLE) < 0 OR CAST(warmup AS DOUBLE) >= 1 THEN error({warmup_given}) "
        "ELSE CAST(warmup AS DOUBLE) END"
    )
    bound_json = "to_json(max_sd)"
    max_sd_kind = (
        f"CASE WHEN max_sd IS NULL THEN 'none' WHEN json_type({bound_json}) = 'OBJECT' THEN 'map' "
        f"WHEN json_type({bound_json}) IN ('UBIGINT', 'BIGINT', 'DOUBLE') THEN 'number' "
        f"ELSE error('{mart.name}: parameter max_sd = ' || CASE WHEN typeof(max_sd) = 'VARCHAR' THEN {_QUOTE} || CAST(max_sd AS VARCHAR) || {_QUOTE} "
        f"ELSE CAST({bound_json} AS VARCHAR) END || '; expected a number') END"
    )
    bad_bound = f"{mart.name}: expected max_sd to be None, a non-negative number, or a mapping from system to such a number, got "
    bound = (
        f"CASE WHEN p.max_sd_kind = 'none' THEN NULL "
        f"WHEN p.max_sd_kind = 'map' THEN CAST({bound_json} AS MAP(VARCHAR, DOUBLE))[m.system] "
        f"ELSE CAST({bound_json} AS DOUBLE) END"
    )
    sd = {name: f"CAST({_column(mart, name, 'number')} AS DOUBLE)" for name in ("sd_a_before", "sd_b_before")}
    one = _double(1.0)
    half = _double(0.5)
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH parameters AS (SELECT {min_games} AS min_games, {warmup} AS warmup, {max_sd_kind} AS max_sd_kind),
r AS (
    SELECT CAST(r.league AS VARCHAR) AS league, r.system AS system, {_column(mart, "seq", "integer", not_null=True)} AS seq,
           CAST({_column(mart, "player_a", "any")} AS VARCHAR) AS player_a, CAST({_column(mart, "player_b", "any")} AS VARCHAR) AS player_b,
           {_forecast(mart, "expected_a")} AS expected_a, {_forecast(mart, "score_a")} AS score_a,
           CASE WHEN max_sd IS NULL THEN NULL ELSE {sd["sd_a_before"]} END AS sd_a_before,
           CASE WHEN max_sd IS NULL THEN NULL ELSE {sd["sd_b_before"]} END AS sd_b_before
    FROM {replay_source(mart)} AS r
), sides AS (
    SELECT r.league, r.system, r.seq, r.player_a AS player FROM r
    UNION ALL
    SELECT r.league, r.system, r.seq, r.player_b AS player FROM r
), thresholds AS (  -- each player's seq at their (min_games + 1)-th match: from there on they are experienced
    SELECT n.league, n.system, n.player, n.seq AS from_seq
    FROM (SELECT s.league, s.system, s.player, s.seq, p.min_games,
                 row_number() OVER (PARTITION BY s.league, s.system, s.player ORDER BY s.seq) AS nth
          FROM sides AS s CROSS JOIN parameters AS p WHERE p.min_games > 0) AS n
    WHERE n.nth = n.min_games + 1
), cutoffs AS (  -- warmup: the seq of each (league, system)'s floor(T · warmup)-th match
    SELECT w.league, w.system, w.seq AS cutoff
    FROM (SELECT r.league, r.system, r.seq, p.warmup,
                 row_number() OVER (PARTITION BY r.league, r.system ORDER BY r.seq) AS position,
                 count(*) OVER (PARTITION BY r.league, r.system) AS total
          FROM r CROSS JOIN parameters AS p WHERE p.warmup > 0) AS w
    WHERE CAST(w.position AS DOUBLE) = floor(CAST(w.total AS DOUBLE) * w.warmup)
), matches AS (
    SELECT r.*,
           p.min_games = 0 OR (r.seq >= a.from_seq AND r.seq >= b.from_seq) AS experienced
    FROM r
    CROSS JOIN parameters AS p
    LEFT JOIN thresholds AS a ON a.player = r.player_a AND a.league IS NOT DISTINCT FROM r.league AND a.system IS NOT DISTINCT FROM r.system
    LEFT JOIN thresholds AS b ON b.player = r.player_b AND b.league IS NOT DISTINCT FROM r.league AND b.system IS NOT DISTINCT FROM r.system
    LEFT JOIN cutoffs AS c ON c.league IS NOT DISTINCT FROM r.league AND c.system IS NOT DISTINCT FROM r.system
    WHERE c.cutoff IS NULL OR r.seq > c.cutoff
), bounded AS (
    SELECT m.*, {bound} AS bound
    FROM matches AS m CROSS JOIN parameters AS p
), scored AS (
    SELECT m.league, m.system, m.expected_a AS p, m.score_a AS s,
           {_log_loss("m.expected_a", "m.score_a")} AS log_loss,
           CASE WHEN m.score_a = 0 OR m.score_a = 1 THEN
               CASE WHEN m.expected_a > {half} THEN m.score_a WHEN m.expected_a < {half} THEN {one} - m.score_a ELSE {half} END
           END AS correct,
           CASE WHEN m.bound < 0 OR isnan(m.bound) THEN error('{bad_bound}' || CAST({bound_json} AS VARCHAR))
                ELSE coalesce(m.experienced, false) AND (m.bound IS NULL OR ((m.sd_a_before IS NULL OR m.sd_a_before <= m.bound)
                                                            AND (m.sd_b_before IS NULL OR m.sd_b_before <= m.bound))) END AS established
    FROM bounded AS m
)
SELECT o.league, o.system, count(*) AS n,
       {_mean("o.log_loss")} AS log_loss,
       {_mean("(o.p - o.s) * (o.p - o.s)")} AS brier,
       {_mean("o.correct", "count(o.correct)")} AS accuracy,
       count(*) FILTER (WHERE o.established) AS n_established,
       CAST(sum(CAST(o.log_loss AS {EXACT})) FILTER (WHERE o.established) AS DOUBLE)
           / CAST(nullif(count(*) FILTER (WHERE o.established), 0) AS DOUBLE) AS log_loss_established
FROM scored AS o
GROUP BY o.league, o.system
ORDER BY o.league NULLS FIRST, o.system
"""


def contest_leaderboard_sql(mart: Mart) -> str:
    """Each player's ``rating_after``/``sd_after`` of their contest with the largest ``seq``, ranked per
    (league, system) as :func:`leaderboard_sql`; ``contests`` = contests played."""
    numbers = {name: f"CAST({_column(mart, name, 'number')} AS DOUBLE)" for name in ("rating_after", "sd_after")}
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH r AS (
    SELECT CAST(r.league AS VARCHAR) AS league, r.system AS system, {_column(mart, "seq", "integer", not_null=True)} AS seq,
           CAST({_column(mart, "player", "any")} AS VARCHAR) AS player,
           {numbers["rating_after"]} AS rating_after, {numbers["sd_after"]} AS sd_after, {_played_at(mart)} AS played_at
    FROM {replay_source(mart)} AS r
), players AS (
    SELECT r.league, r.system, r.player, count(*) AS contests,
           arg_max({{'rating': r.rating_after, 'sd': r.sd_after, 'played_at': r.played_at}}, r.seq) AS last
    FROM r
    GROUP BY r.league, r.system, r.player
)
{_ranked("contests")}"""


def loss_by_gap_sql(mart: Mart) -> str:
    """Per (league, system) and equal-width bin of ``gap = rating_a_before - rating_b_before`` (lower edge
    ``floor(gap / w) * w``; NULL when a rating is NULL or NaN): n, the mean log loss and the bin's share of
    the group's summed log loss (exact DECIMAL sums). ``bin_width`` NULL: each system's default width
    (:func:`duckrate.evaluation.loss_by_gap.system_bin_widths`, else 50)."""
    given = (
        f"'{mart.name}: parameter bin_width = ' || CASE WHEN typeof(bin_width) = 'VARCHAR' THEN {_QUOTE} || "
        f"CAST(bin_width AS VARCHAR) || {_QUOTE} ELSE CAST(bin_width AS VARCHAR) END || '; expected {BIN_WIDTH.expected}'"
    )
    bin_width = (
        f"CASE WHEN bin_width IS NULL THEN NULL WHEN NOT ({_NUMBER_CHECK.format(x='bin_width')}) THEN error({given}) "
        f"WHEN isnan(CAST(bin_width AS DOUBLE)) OR isinf(CAST(bin_width AS DOUBLE)) OR CAST(bin_width AS DOUBLE) <= 0 "
        f"THEN error({given}) ELSE CAST(bin_width AS DOUBLE) END"
    )
    defaults = " ".join(f"WHEN '{system}' THEN {_double(width)}" for system, width in system_bin_widths().items())
    ratings = {
        name: f"CAST({_column(mart, name, 'number')} AS DOUBLE)" for name in ("rating_a_before", "rating_b_before")
    }
    return f"""CREATE OR REPLACE TEMP MACRO {mart.name}({signature(mart)}) AS TABLE
WITH parameters AS (SELECT {bin_width} AS bin_width),
r AS (
    SELECT CAST(r.league AS VARCHAR) AS league, r.system AS system,
           {ratings["rating_a_before"]} - {ratings["rating_b_before"]} AS gap,
           {_forecast(mart, "expected_a")} AS expected_a, {_forecast(mart, "score_a")} AS score_a
    FROM {replay_source(mart)} AS r
), binned AS (
    SELECT r.league, r.system,
           CASE WHEN isnan(r.gap) THEN NULL ELSE floor(r.gap / w.width) * w.width END AS gap_bin,
           {_log_loss("r.expected_a", "r.score_a")} AS log_loss
    FROM r CROSS JOIN parameters AS p
    CROSS JOIN LATERAL (SELECT coalesce(p.bin_width, CASE r.system {defaults} ELSE {_double(DEFAULT_BIN_WIDTH)} END) AS width) AS w
), per_bin AS (
    SELECT b.league, b.system, b.gap_bin, count(*) AS n, sum(CAST(b.log_loss AS {EXACT})) AS total
    FROM binned AS b
    GROUP BY b.league, b.system, b.gap_bin
)
SELECT o.league, o.system, o.gap_bin, o.n, CAST(o.total AS DOUBLE) / CAST(o.n AS DOUBLE) AS mean_log_loss,
       CAST(o.total AS DOUBLE) / nullif(CAST(sum(o.total) OVER (PARTITION BY o.league, o.system) AS DOUBLE), {_double(0.0)}) AS share_of_total_loss
FROM per_bin AS o
ORDER BY o.league NULLS FIRST, o.system, o.gap_bin NULLS FIRST
"""


#: Mart name -> the builder of its SQL macro (a mart without an entry has a UDF, :mod:`.evaluation_udf`).
SQL_MARTS = {
    "leaderboard": leaderboard_sql,
    "calibration_bins": calibration_bins_sql,
    "loss_curve": loss_curve_sql,
    "loss_by_gap": loss_by_gap_sql,
    "calibration_summary": calibration_summary_sql,
    "contest_leaderboard": contest_leaderboard_sql,
}


def macro_sql(mart: Mart) -> str:
    """The ``CREATE TEMP MACRO`` statement of any mart: its SQL, or the macro over its UDF."""
    return SQL_MARTS[mart.name](mart) if mart.compute is None else udf_macro_sql(mart)
