"""Each SQL mart's query, written once for every engine: DuckDB runs it in the mart's table macro (and the
Python API through the macro), Spark as Spark SQL over the replay's DataFrame.

A query reads two relations the engine supplies: ``r``, the replay rows with the mart's :attr:`Mart.inputs`
checked and typed (``league`` and ``system`` as text, numbers as DOUBLE, forecasts checked within [0, 1],
``seq`` without NULLs) and ``parameters``, one row of the call's parameters. It returns its CTEs and its
final SELECT; the engine orders the rows (DuckDB) and appends the interval ranks of the leaderboards.

Results do not depend on the thread count, the partitioning or the row order: the leaderboards only pick
rows (each player's row with the largest ``seq``) and rank them, and the other marts sum in
``DECIMAL(38, 20)``, exact integer arithmetic (each value rounded once to 1e-20, far below a double's
precision at 1), so the partial sums add up to the same total in any order.
"""

from __future__ import annotations

from dataclasses import dataclass

from duckrate.evaluation.replay_rows import PROBABILITY_CLIP, Z_95
from duckrate.marts.dialect import Dialect
from duckrate.marts.parameters import DEFAULT_BIN_WIDTH, EXACT, system_bin_widths

#: A team leaderboard's ordinal is the rating less this many sds (openskill's ``ordinal()``: mu - 3 sigma).
ORDINAL_SDS = 3.0
_SAME_GROUP = "{a}.league IS NOT DISTINCT FROM {b}.league AND {a}.system IS NOT DISTINCT FROM {b}.system"


def _same_group(a: str, b: str) -> str:
    return _SAME_GROUP.format(a=a, b=b)


@dataclass(frozen=True)
class Query:
    """A mart's SQL over ``r`` and ``parameters``: its CTEs (name, body) and its final SELECT."""

    ctes: tuple[tuple[str, str], ...]
    select: str

    def sql(self) -> str:
        """``WITH <ctes> <select>``."""
        return "WITH " + ",\n".join(f"{name} AS (\n{body}\n)" for name, body in self.ctes) + "\n" + self.select

    def over(self, parameters: str, replay: str) -> Query:
        """The query over the engine's ``parameters`` (one row) and ``r`` (the checked replay rows)."""
        return Query((("parameters", parameters), ("r", replay), *self.ctes), self.select)

    def then(self, name: str, select: str) -> Query:
        """The query's result as the CTE ``name``, followed by ``select``."""
        return Query((*self.ctes, (name, self.select)), select)


def log_loss(d: Dialect, p: str, s: str) -> str:
    """Per-match log loss ``-(s ln p + (1 - s) ln(1 - p))``, p clipped to [1e-15, 1 - 1e-15]."""
    clipped = f"least(greatest({p}, {d.double(PROBABILITY_CLIP)}), {d.double(1.0 - PROBABILITY_CLIP)})"
    one = d.double(1.0)
    return f"-({s} * ln({clipped}) + ({one} - {s}) * ln({one} - {clipped}))"


def exact_sum(value: str) -> str:
    """The order-free sum of ``value`` in ``DECIMAL(38, 20)``."""
    return f"sum(CAST({value} AS {EXACT}))"


def exact_mean(value: str, rows: str = "count(*)") -> str:
    """The exact sum rounded once to DOUBLE, over ``rows`` as DOUBLE (NULL without rows)."""
    return f"CAST({exact_sum(value)} AS DOUBLE) / CAST(nullif({rows}, 0) AS DOUBLE)"


def _ranked(d: Dialect, count: str, extra: str = "") -> str:
    """The leaderboards after their ``players`` CTE (``last``: the struct of the latest row): rank 1 =
    highest rating per (league, system), NULL last, ties by player name; rating ∓ z·sd; ``extra`` columns
    after the sd."""
    z = d.double(Z_95)
    return f"""SELECT p.league, p.system, p.player,
       CAST(row_number() OVER (PARTITION BY p.league, p.system ORDER BY p.last.rating DESC NULLS LAST, p.player ASC NULLS LAST) AS BIGINT) AS rank,
       p.last.rating AS rating, p.last.sd AS sd,{extra}
       p.last.rating - {z} * p.last.sd AS lower, p.last.rating + {z} * p.last.sd AS upper,
       p.{count}, p.last.played_at AS last_played_at
FROM players AS p"""


def leaderboard(d: Dialect) -> Query:
    """Each player's state after their last match (largest ``seq``), ranked per (league, system) by rating
    (descending, NULL last), ties by player name; ``lower``/``upper`` = rating ∓ z·sd (95%)."""
    sides = " UNION ALL ".join(
        f"SELECT r.league, r.system, r.player_{side} AS player, r.seq, r.rating_{side}_after AS rating, "
        f"r.sd_{side}_after AS sd, r.played_at FROM r"
        for side in "ab"
    )
    last = d.struct(rating="s.rating", sd="s.sd", played_at="s.played_at")
    players = f"""SELECT s.league, s.system, s.player, count(*) AS games, max_by({last}, s.seq) AS last
FROM sides AS s
GROUP BY s.league, s.system, s.player"""
    return Query((("sides", sides), ("players", players)), _ranked(d, "games"))


def contest_leaderboard(d: Dialect) -> Query:
    """Each player's ``rating_after``/``sd_after`` of their contest with the largest ``seq``, ranked per
    (league, system) as :func:`leaderboard`; ``contests`` = contests played."""
    last = d.struct(rating="r.rating_after", sd="r.sd_after", played_at="r.played_at")
    players = f"""SELECT r.league, r.system, r.player, count(*) AS contests, max_by({last}, r.seq) AS last
FROM r
GROUP BY r.league, r.system, r.player"""
    return Query((("players", players),), _ranked(d, "contests"))


def team_leaderboard(d: Dialect) -> Query:
    """Each player's ``rating_after``/``sd_after`` of their team match with the largest ``seq``, ranked per
    (league, system) as :func:`leaderboard`; ``ordinal`` = rating - 3·sd (openskill's display rating, a
    conservative estimate); ``matches`` = matches played."""
    last = d.struct(rating="r.rating_after", sd="r.sd_after", played_at="r.played_at")
    players = f"""SELECT r.league, r.system, r.player, count(*) AS matches, max_by({last}, r.seq) AS last
FROM r
GROUP BY r.league, r.system, r.player"""
    ordinal = f" p.last.rating - {d.double(ORDINAL_SDS)} * p.last.sd AS ordinal,"
    return Query((("players", players),), _ranked(d, "matches", ordinal))


def team_match_forecasts(d: Dialect) -> Query:
    """The two-team matches of a team replay as two-player replay rows, so the calibration marts score them:
    per match, team A (the team whose key sorts first as text) against team B: ``player_a``/``player_b`` their
    keys, ``score_a`` 1 when A placed better, 0 when worse, ½ on a tie, ``expected_a`` = A's win probability
    plus half the probability that neither wins (``p_team_win`` of A + ½ (1 - both)), the teams' summed ratings
    (exact sums) and the root of their summed variances before the match. Matches of three or more teams are
    left out (``team_metrics`` scores those)."""
    rating = f"CAST({exact_sum('r.rating_before')} AS DOUBLE)"
    variance = f"CAST({exact_sum('r.sd_before * r.sd_before')} AS DOUBLE)"
    teams = f"""SELECT r.league, r.system, r.seq, r.team, min(r.match_id) AS match_id, min(r.played_at) AS played_at,
       min(r.rank) AS place, min(r.p_team_win) AS p_win, {rating} AS rating, sqrt({variance}) AS sd
FROM r
GROUP BY r.league, r.system, r.seq, r.team"""
    sides = """SELECT t.*, count(*) OVER (PARTITION BY t.league, t.system, t.seq) AS n_teams,
       row_number() OVER (PARTITION BY t.league, t.system, t.seq ORDER BY t.team) AS side
FROM teams AS t"""
    half, one, zero = d.double(0.5), d.double(1.0), d.double(0.0)
    select = f"""SELECT a.league, a.system, a.seq, a.match_id, a.played_at, a.team AS player_a, b.team AS player_b,
       CASE WHEN a.place < b.place THEN {one} WHEN a.place > b.place THEN {zero} ELSE {half} END AS score_a,
       least(greatest(a.p_win + {half} * ({one} - a.p_win - b.p_win), {zero}), {one}) AS expected_a,
       a.rating AS rating_a_before, b.rating AS rating_b_before, a.sd AS sd_a_before, b.sd AS sd_b_before
FROM sides AS a
JOIN sides AS b ON {_same_group("a", "b")} AND a.seq = b.seq AND a.side = 1 AND b.side = 2
WHERE a.n_teams = 2"""
    return Query((("teams", teams), ("sides", sides)), select)


def calibration_bins(d: Dialect) -> Query:
    """Per (league, system) and equal-width forecast bin: n, mean forecast, mean score and the 95% Wilson
    interval of the mean score."""
    z2, z = d.double(Z_95 * Z_95), d.double(Z_95)
    one, two, four, zero = d.double(1.0), d.double(2.0), d.double(4.0), d.double(0.0)
    binned = """SELECT r.league, r.system, r.expected_a, r.score_a,
       least(greatest(CAST(floor(r.expected_a * CAST(p.bins AS DOUBLE)) AS BIGINT), 0), p.bins - 1) + 1 AS bin
FROM r CROSS JOIN parameters AS p"""
    per_bin = f"""SELECT b.league, b.system, b.bin, count(*) AS n,
       CAST({exact_sum("b.expected_a")} AS DOUBLE) / CAST(count(*) AS DOUBLE) AS mean_expected,
       CAST({exact_sum("b.score_a")} AS DOUBLE) / CAST(count(*) AS DOUBLE) AS mean_score
FROM binned AS b
GROUP BY b.league, b.system, b.bin"""
    wilson = f"SELECT w.*, CAST(w.n AS DOUBLE) AS trials, {one} + {z2} / CAST(w.n AS DOUBLE) AS denominator FROM per_bin AS w"
    bounds = f"""SELECT w.*, (w.mean_score + {z2} / ({two} * w.trials)) / w.denominator AS centre,
       {z} * sqrt(w.mean_score * ({one} - w.mean_score) / w.trials + {z2} / ({four} * w.trials * w.trials)) / w.denominator AS half_width
FROM wilson AS w"""
    select = f"""SELECT o.league, o.system, CAST(o.bin AS BIGINT) AS bin, o.n, o.mean_expected, o.mean_score,
       least(greatest(o.centre - o.half_width, {zero}), {one}) AS lower,
       least(greatest(o.centre + o.half_width, {zero}), {one}) AS upper
FROM bounds AS o"""
    return Query((("binned", binned), ("per_bin", per_bin), ("wilson", wilson), ("bounds", bounds)), select)


def loss_curve(d: Dialect) -> Query:
    """Per (league, system): the mean log loss of the first t matches (in seq order) at ``points`` evenly
    spaced t from 1 to T (every t when T <= points: ``t_k = 1 + round((T - 1)·k / (points - 1))``, halves
    up), with ``t_over_n`` = t / the group's distinct players. Each match is summed (exact, DECIMAL) into
    the first checkpoint at or after its position, ``k = ceil((2·pos - 3)(points - 1) / (2(T - 1)))``, and
    the checkpoints' sums are accumulated in order. Every checkpoint ``k < min(T, points)`` receives at
    least its own match (the one at ``t_k``), so the checkpoints are those of the sums."""
    spread = d.integer_div("(2 * q.position - 3) * (p.points - 1) + 2 * (g.matches - 1) - 1", "2 * (g.matches - 1)")
    groups = "SELECT g.league, g.system, count(*) AS matches FROM r AS g GROUP BY g.league, g.system"
    positioned = f"""SELECT q.league, q.system, q.log_loss, g.matches, p.points,
       CASE WHEN p.points = 1 THEN CAST(0 AS BIGINT)
            WHEN g.matches <= p.points THEN q.position - 1
            ELSE greatest(CAST(0 AS BIGINT), {spread})
       END AS checkpoint
FROM (SELECT r.league, r.system, {log_loss(d, "r.expected_a", "r.score_a")} AS log_loss,
             CAST(row_number() OVER (PARTITION BY r.league, r.system ORDER BY r.seq) AS BIGINT) AS position
      FROM r) AS q
JOIN groups AS g ON {_same_group("g", "q")}
CROSS JOIN parameters AS p"""
    buckets = f"""SELECT b.league, b.system, b.checkpoint, max(b.matches) AS matches, max(b.points) AS points,
       {exact_sum("b.log_loss")} AS total
FROM positioned AS b GROUP BY b.league, b.system, b.checkpoint"""
    step = d.integer_div("2 * (u.matches - 1) * u.checkpoint + (u.points - 1)", "2 * (u.points - 1)")
    running = f"""SELECT u.league, u.system,
       CASE WHEN u.points = 1 THEN u.matches WHEN u.matches <= u.points THEN u.checkpoint + 1 ELSE 1 + {step} END AS t,
       sum(u.total) OVER (PARTITION BY u.league, u.system ORDER BY u.checkpoint ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS total
FROM buckets AS u"""
    players = """SELECT q.league, q.system, count(DISTINCT q.player) AS players
FROM (SELECT r.league, r.system, r.player_a AS player FROM r UNION ALL SELECT r.league, r.system, r.player_b AS player FROM r) AS q
GROUP BY q.league, q.system"""
    select = f"""SELECT c.league, c.system, CAST(c.t AS BIGINT) AS t, CAST(c.t AS DOUBLE) / CAST(n.players AS DOUBLE) AS t_over_n,
       CAST(c.total AS DOUBLE) / CAST(c.t AS DOUBLE) AS mean_log_loss
FROM running AS c
JOIN players AS n ON {_same_group("n", "c")}"""
    ctes = (("groups", groups), ("positioned", positioned), ("buckets", buckets), ("running", running))
    return Query((*ctes, ("players", players)), select)


def calibration_summary(d: Dialect) -> Query:
    """Per (league, system): n, mean log loss, Brier score, accuracy over decisive games, and the same log
    loss over *established* matches: both players had at least ``min_games`` earlier matches and (with
    ``max_sd``: a number, or a mapping from system to number) both sds before the match at most that
    bound; ``warmup`` drops the first share of each (league, system)'s matches in seq order from every
    figure (not from the games counted)."""
    one, half = d.double(1.0), d.double(0.5)
    bad_bound = d.string(
        "calibration_summary: expected max_sd to be None, a non-negative number, or a mapping from system to "
        "such a number, got "
    )
    bad_bound = f"{bad_bound} || {d.shown('max_sd')}"
    sides = (
        "SELECT r.league, r.system, r.seq, r.player_a AS player FROM r "
        "UNION ALL SELECT r.league, r.system, r.seq, r.player_b AS player FROM r"
    )
    # each player's seq at their (min_games + 1)-th match: from there on they are experienced
    thresholds = """SELECT n.league, n.system, n.player, n.seq AS from_seq
FROM (SELECT s.league, s.system, s.player, s.seq, p.min_games,
             row_number() OVER (PARTITION BY s.league, s.system, s.player ORDER BY s.seq) AS nth
      FROM sides AS s CROSS JOIN parameters AS p WHERE p.min_games > 0) AS n
WHERE n.nth = n.min_games + 1"""
    # warmup: the seq of each (league, system)'s floor(T · warmup)-th match
    cutoffs = f"""SELECT w.league, w.system, w.seq AS cutoff
FROM (SELECT r.league, r.system, r.seq, p.warmup,
             row_number() OVER (PARTITION BY r.league, r.system ORDER BY r.seq) AS position,
             count(*) OVER (PARTITION BY r.league, r.system) AS total
      FROM r CROSS JOIN parameters AS p WHERE p.warmup > 0) AS w
WHERE CAST(w.position AS DOUBLE) = {d.floor_double("CAST(w.total AS DOUBLE) * w.warmup")}"""
    matches = f"""SELECT r.*, p.min_games = 0 OR (r.seq >= a.from_seq AND r.seq >= b.from_seq) AS experienced
FROM r
CROSS JOIN parameters AS p
LEFT JOIN thresholds AS a ON a.player = r.player_a AND {_same_group("a", "r")}
LEFT JOIN thresholds AS b ON b.player = r.player_b AND {_same_group("b", "r")}
LEFT JOIN cutoffs AS c ON {_same_group("c", "r")}
WHERE c.cutoff IS NULL OR r.seq > c.cutoff"""
    bounded = (
        f"SELECT m.*, {d.bound_by_system('max_sd', 'm.system')} AS bound FROM matches AS m CROSS JOIN parameters AS p"
    )
    scored = f"""SELECT m.league, m.system, m.expected_a AS p, m.score_a AS s,
       {log_loss(d, "m.expected_a", "m.score_a")} AS log_loss,
       CASE WHEN m.score_a = 0 OR m.score_a = 1 THEN
           CASE WHEN m.expected_a > {half} THEN m.score_a WHEN m.expected_a < {half} THEN {one} - m.score_a ELSE {half} END
       END AS correct,
       CASE WHEN m.bound < 0 OR isnan(m.bound) THEN {d.error(bad_bound)}
            ELSE coalesce(m.experienced, false) AND (m.bound IS NULL OR ((m.sd_a_before IS NULL OR m.sd_a_before <= m.bound)
                                                            AND (m.sd_b_before IS NULL OR m.sd_b_before <= m.bound))) END AS established
FROM bounded AS m"""
    n_established = "count(*) FILTER (WHERE o.established)"
    select = f"""SELECT o.league, o.system, count(*) AS n,
       {exact_mean("o.log_loss")} AS log_loss,
       {exact_mean("(o.p - o.s) * (o.p - o.s)")} AS brier,
       {exact_mean("o.correct", "count(o.correct)")} AS accuracy,
       {n_established} AS n_established,
       CAST({exact_sum("o.log_loss")} FILTER (WHERE o.established) AS DOUBLE)
           / CAST(nullif({n_established}, 0) AS DOUBLE) AS log_loss_established
FROM scored AS o
GROUP BY o.league, o.system"""
    ctes = (("sides", sides), ("thresholds", thresholds), ("cutoffs", cutoffs), ("matches", matches))
    return Query((*ctes, ("bounded", bounded), ("scored", scored)), select)


def loss_by_gap(d: Dialect) -> Query:
    """Per (league, system) and equal-width bin of ``gap = rating_a_before - rating_b_before`` (lower edge
    ``floor(gap / w) * w``; NULL when a rating is NULL or NaN): n, the mean log loss and the bin's share of
    the group's summed log loss (exact DECIMAL sums). ``bin_width`` NULL: each system's default width
    (:func:`duckrate.marts.parameters.system_bin_widths`, else 50)."""
    defaults = " ".join(
        f"WHEN {d.string(system)} THEN {d.double(width)}" for system, width in system_bin_widths().items()
    )
    widths = f"""SELECT r.league, r.system, r.rating_a_before - r.rating_b_before AS gap, r.expected_a, r.score_a,
       coalesce(p.bin_width, CASE r.system {defaults} ELSE {d.double(DEFAULT_BIN_WIDTH)} END) AS width
FROM r CROSS JOIN parameters AS p"""
    binned = f"""SELECT w.league, w.system,
       CASE WHEN isnan(w.gap) THEN NULL ELSE {d.floor_double("w.gap / w.width")} * w.width END AS gap_bin,
       {log_loss(d, "w.expected_a", "w.score_a")} AS log_loss
FROM widths AS w"""
    per_bin = f"""SELECT b.league, b.system, b.gap_bin, count(*) AS n, {exact_sum("b.log_loss")} AS total
FROM binned AS b
GROUP BY b.league, b.system, b.gap_bin"""
    select = f"""SELECT o.league, o.system, CAST(o.gap_bin AS DOUBLE) AS gap_bin, o.n,
       CAST(o.total AS DOUBLE) / CAST(o.n AS DOUBLE) AS mean_log_loss,
       CAST(o.total AS DOUBLE) / nullif(CAST(sum(o.total) OVER (PARTITION BY o.league, o.system) AS DOUBLE), {d.double(0.0)}) AS share_of_total_loss
FROM per_bin AS o"""
    return Query((("widths", widths), ("binned", binned), ("per_bin", per_bin)), select)
