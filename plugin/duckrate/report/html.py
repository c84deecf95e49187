"""The report page: one self-contained HTML file (inline CSS and SVG, no script, nothing loaded from the
network), one section per league.

Every number shown from a mart is a cell ``<td data-mart=... data-column=... data-value=...>`` (the exact
value as Python's ``repr``, the text in the fixed format of :data:`FORMATS`), in a row ``<tr data-key=...>``
naming the mart row (league, system and the row's own key joined by ``|``), so the page can be checked
against the marts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from html import escape

from duckrate.report.svg import PALETTE, Series, chart
from duckrate.report.tables import DAYS_PER_YEAR, TOP_ROWS, TRAJECTORY_PLAYERS

#: Display format of each column (default: 4 decimals for floats, the integer for integers).
FORMATS: dict[str, Callable[[float], str]] = {
    "rating": lambda v: f"{v:.1f}",
    "ordinal": lambda v: f"{v:.1f}",
    "sd": lambda v: f"{v:.1f}",
    "lower": lambda v: f"{v:.1f}",
    "upper": lambda v: f"{v:.1f}",
    "gap_bin": lambda v: f"{v:.1f}",
    "p_value": lambda v: f"{v:.3g}",
    "statistic": lambda v: f"{v:.4g}",
    "df": lambda v: f"{v:.0f}",
    "seconds": lambda v: f"{v:.2f}",
}
#: Columns shown from each mart, in order.
COLUMNS = {
    "leaderboard": ("rank", "player", "rating", "sd", "lower", "upper", "games"),
    "bt_ratings": ("player", "rating", "sd", "lower", "upper", "games"),
    "contest_leaderboard": ("rank", "player", "rating", "sd", "lower", "upper", "contests"),
    "calibration_summary": ("system", "n", "log_loss", "brier", "accuracy", "n_established", "log_loss_established"),
    "bt_tests": ("test", "statistic", "df", "p_value", "n_games", "games_per_player"),
    "contest_metrics": ("system", "pair_inversion", "rank_deviation", "n"),
    "contest_system_comparison": (
        "system",
        "pair_inversion",
        "rank_deviation",
        "rank_by_pair_inversion",
        "rank_by_rank_deviation",
        "seconds",
        "build_mode",
    ),
    "team_leaderboard": ("rank", "player", "rating", "sd", "ordinal", "lower", "upper", "matches"),
    "team_metrics": ("system", "n", "winner_log_loss", "accuracy", "pair_inversion", "rank_deviation"),
    "team_calibration_summary": ("system", "n", "log_loss", "brier", "accuracy"),
    "tuning": ("system", "rank", "protocol", "params", "criterion", "log_loss", "brier", "accuracy", "n"),
}
#: The key columns of each mart's rows (beside league), for ``data-key``.
KEYS = {
    "leaderboard": ("system", "player"),
    "bt_ratings": ("player",),
    "contest_leaderboard": ("system", "player"),
    "calibration_summary": ("system",),
    "bt_tests": ("test",),
    "contest_metrics": ("system",),
    "contest_system_comparison": ("system",),
    "team_leaderboard": ("system", "player"),
    "team_metrics": ("system",),
    "team_calibration_summary": ("system",),
    "tuning": ("system", "params"),
}
#: Tuning rows shown per league and system (the best parameter sets).
TUNING_ROWS = 3

#: What a rejection of each Bradley-Terry test means, in one line (docs/bradley-terry.md).
BT_TEST_MEANINGS = {
    "split": "Rejected: ratings learned from other games predict these games better than one fixed strength "
    "per player; strengths are not fixed (or depend on the opponent).",
    "martingale": "Caution: this test (online Elo ratings as features, paper App. B.3) rejects even data that "
    "follow Bradley-Terry; do not read its rejection as evidence against the model.",
    "martingale_split": "Rejected: Elo ratings from the first half predict the second half beyond a fixed "
    "strength per player: strengths drift, or opponents are paired by rating.",
    "lowrank": "Rejected: one number per player is not enough: there is structure such as non-transitive "
    "(rock-paper-scissors) match-ups.",
    "matchmaking": "Rejected: strong players are paired with strong players (rating-based matchmaking); "
    "games are not random pairings, which biases naive estimates.",
    "order_permutation": "Rejected: the order of the games matters (strengths drift over time or pairing "
    "adapts to results); a static Bradley-Terry fit misses it.",
}
#: The significance level the report marks rejections at.
ALPHA = 0.05

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5rem; color: #222; }
h1 { margin-bottom: 0.2rem; } h2 { border-bottom: 2px solid #444; margin-top: 2.5rem; }
h3 { margin-top: 1.8rem; } h4 { margin: 0.8rem 0 0.3rem; }
p.note { color: #555; max-width: 60rem; font-size: 0.92rem; }
.grid { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
table { border-collapse: collapse; font-size: 0.82rem; margin-bottom: 0.6rem; }
th, td { border: 1px solid #ccc; padding: 0.15rem 0.45rem; }
th { background: #eee; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.rejected td { background: #fde8e8; }
svg.chart { border: 1px solid #ddd; background: #fff; }
svg .chart-title { font-size: 13px; font-weight: 600; } svg .tick { font-size: 10px; fill: #444; }
svg .axis { font-size: 11px; } svg .legend { font-size: 11px; }
nav a { margin-right: 1rem; }
"""


def format_value(column: str, value) -> str:
    """The text of a value in the report: the column's fixed format; '—' for NULL or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return FORMATS.get(column, lambda v: f"{v:.4f}")(value)
    return str(value)


def _league_label(league: str | None) -> str:
    return "(no league)" if league is None else league


def _slug(*parts) -> str:
    text = "-".join("none" if part is None else str(part) for part in parts)
    return "".join(c if c.isalnum() else "-" for c in text)


def _key(league: str | None, row: dict, columns: Iterable[str]) -> str:
    return "|".join("" if v is None else str(v) for v in (league, *(row[c] for c in columns)))


def _cell(mart: str, column: str, value) -> str:
    text = escape(format_value(column, value))
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        exact = "" if value is None else repr(value)
        return f'<td class="num" data-mart="{mart}" data-column="{column}" data-value="{exact}">{text}</td>'
    return f'<td data-mart="{mart}" data-column="{column}">{text}</td>'


_NUMBER_CLASS = ' class="num"'


def table(mart: str, rows: list[dict], columns: tuple[str, ...], extra: dict[str, list] | None = None) -> str:
    """An HTML table of mart rows; ``extra``: computed columns (e.g. the tier), one value per row, shown
    after the mart's columns (not marked as mart values)."""
    extra = extra or {}
    head = "".join(f"<th>{escape(c)}</th>" for c in (*columns, *extra))
    body = []
    for index, row in enumerate(rows):
        cells = "".join(_cell(mart, c, row.get(c)) for c in columns)
        cells += "".join(
            f"<td{_NUMBER_CLASS if isinstance(values[index], (int, float)) or values[index] is None else ''} "
            f'data-column="{escape(name)}">{escape(format_value(name, values[index]))}</td>'
            for name, values in extra.items()
        )
        css = ""
        if mart == "bt_tests" and row.get("p_value") is not None and row["p_value"] < ALPHA:
            css = ' class="rejected"'
        body.append(f'<tr data-key="{escape(_key(row.get("league"), row, KEYS[mart]))}"{css}>{cells}</tr>')
    return f'<table data-mart="{mart}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _group(rows: list[dict], key: str) -> dict:
    groups: dict = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups


def _colors(systems: Iterable[str]) -> dict[str, str]:
    return {system: PALETTE[index % len(PALETTE)] for index, system in enumerate(sorted(systems))}


def shown_tiers(rows: list[dict]) -> list[int | None]:
    """The marts' ``tier`` of each row, None where the player has no interval (a system without an sd, whose
    tiers would only say which ratings are equal)."""
    return [row.get("tier") if row.get("lower") is not None and row.get("upper") is not None else None for row in rows]


def leaderboard_section(league, marts) -> str:
    parts = []
    for mart, by in (("leaderboard", "system"), ("contest_leaderboard", "system")):
        rows = [r for r in marts.get(mart, []) if r["league"] == league]
        for system, group in _group(rows, by).items():
            tier = shown_tiers(group)
            parts.append(f"<div><h4>{escape(system)}</h4>{table(mart, group, COLUMNS[mart], {'tier': tier})}</div>")
    bt = [r for r in marts.get("bt_ratings", []) if r["league"] == league]
    if bt:
        tier = shown_tiers(bt)
        parts.append(
            f"<div><h4>Bradley-Terry fit</h4>{table('bt_ratings', bt, COLUMNS['bt_ratings'], {'tier': tier})}</div>"
        )
    if not parts:
        return ""
    return (
        "<h3>Leaderboard</h3>"
        f'<p class="note">The top {TOP_ROWS} players per system with their 95% intervals (rating ± 1.96 sd; '
        "the Bradley-Terry fit's own interval). Tier (the marts' column): players are taken best first; the first "
        "player opens tier 1, and each next player stays in the current tier while their interval overlaps the "
        "interval of the tier's first player, otherwise they open the next tier. Systems without an sd (Elo, ...) "
        "show no tiers.</p>"
        f'<div class="grid">{"".join(parts)}</div>'
    )


def calibration_section(league, marts) -> str:
    bins = [r for r in marts.get("calibration_bins", []) if r["league"] == league]
    summary = [r for r in marts.get("calibration_summary", []) if r["league"] == league]
    if not bins and not summary:
        return ""
    colors = _colors({r["system"] for r in bins})
    charts = []
    for system, group in _group(bins, "system").items():
        series = Series(
            system,
            [(r["mean_expected"], r["mean_score"]) for r in group],
            color=colors[system],
            line=False,
            dots=True,
            errors=[(r["mean_expected"], r["lower"], r["upper"]) for r in group],
            marks=[
                {
                    "mart": "calibration_bins",
                    "bin": r["bin"],
                    "mean-expected": repr(r["mean_expected"]),
                    "mean-score": repr(r["mean_score"]),
                }
                for r in group
            ],
        )
        charts.append(
            chart(
                [series],
                title=f"Reliability: {system}",
                x_label="mean forecast expected_a",
                y_label="mean score_a (95% Wilson)",
                chart_id=_slug("calibration", league, system),
                x_range=(0.0, 1.0),
                y_range=(0.0, 1.0),
                diagonal=True,
                width=300,
                height=280,
            )
        )
    text = (
        "<h3>Calibration</h3>"
        '<p class="note">Reliability diagrams: per forecast bin, the mean forecast against the mean result with '
        "its 95% Wilson interval; a calibrated system lies on the diagonal. Summary: mean log loss, Brier score "
        "and accuracy over all matches and over established ones.</p>"
        f'<div class="grid">{"".join(charts)}</div>'
    )
    if summary:
        text += table("calibration_summary", summary, COLUMNS["calibration_summary"])
    return text


def loss_curve_section(league, marts) -> str:
    rows = [r for r in marts.get("loss_curve", []) if r["league"] == league]
    if not rows:
        return ""
    colors = _colors({r["system"] for r in rows})
    series = [
        Series(system, [(r["t_over_n"], r["mean_log_loss"]) for r in group], color=colors[system])
        for system, group in _group(rows, "system").items()
    ]
    return (
        "<h3>Loss curve</h3>"
        '<p class="note">Cumulative mean log loss of the first t forecasts against t/N (N: the league\'s players), '
        "per system: Figure 5 of Tang, Wang &amp; Jin on Elo under misspecification.</p>"
        + chart(
            series,
            title="Cumulative mean log loss",
            x_label="t / N",
            y_label="mean log loss of the first t matches",
            chart_id=_slug("loss-curve", league),
            width=640,
            height=340,
        )
    )


def loss_by_gap_section(league, marts) -> str:
    rows = [r for r in marts.get("loss_by_gap", []) if r["league"] == league and r["gap_bin"] is not None]
    if not rows:
        return ""
    colors = _colors({r["system"] for r in rows})
    charts = []
    for system, group in _group(rows, "system").items():
        series = Series(
            system,
            [(r["gap_bin"], r["mean_log_loss"]) for r in group],
            color=colors[system],
            dots=True,
            marks=[
                {
                    "mart": "loss_by_gap",
                    "gap-bin": repr(r["gap_bin"]),
                    "n": r["n"],
                    "mean-log-loss": repr(r["mean_log_loss"]),
                    "share-of-total-loss": repr(r["share_of_total_loss"]),
                }
                for r in group
            ],
        )
        charts.append(
            chart(
                [series],
                title=f"Log loss by rating gap: {system}",
                x_label="rating gap a − b (bin start)",
                y_label="mean log loss",
                chart_id=_slug("loss-by-gap", league, system),
                width=300,
                height=260,
            )
        )
    return (
        "<h3>Log loss by rating difference</h3>"
        '<p class="note">Mean log loss of the forecasts per bin of the rating difference before the match '
        "(each system on its own scale), from the mart loss_by_gap: Figure 5.1 of Cowan's paper on games of "
        "chance. Hover a point for its number of matches and its share of the total log loss.</p>"
        f'<div class="grid">{"".join(charts)}</div>'
    )


def trajectories_section(league, marts) -> str:
    rows = [r for r in marts.get("trajectories", []) if r["league"] == league]
    if not rows:
        return ""
    charts = []
    for system, group in _group(rows, "system").items():
        series = []
        for index, (player, steps) in enumerate(_group(group, "player").items()):
            has_sd = any(s["sd"] is not None for s in steps)
            series.append(
                Series(
                    f"{steps[0]['rank']}. {player}",
                    [(s["seq"], s["rating"]) for s in steps],
                    color=PALETTE[index % len(PALETTE)],
                    band=[(s["seq"], s["rating"] - 1.96 * s["sd"], s["rating"] + 1.96 * s["sd"]) for s in steps]
                    if has_sd
                    else [],
                )
            )
        charts.append(
            chart(
                series,
                title=f"Top {TRAJECTORY_PLAYERS} trajectories: {system}",
                x_label="seq (match in the league)",
                y_label="rating after the match (± 1.96 sd)",
                chart_id=_slug("trajectories", league, system),
                width=420,
                height=280,
            )
        )
    return (
        "<h3>Rating trajectories</h3>"
        f'<p class="note">The rating of the top {TRAJECTORY_PLAYERS} players of each system after each of their '
        "matches (from the replays), with the band rating ± 1.96 sd where the system has an sd.</p>"
        f'<div class="grid">{"".join(charts)}</div>'
    )


def _time_axis(xs: list[float], timed: bool) -> tuple[Callable[[float], float], str]:
    """How to draw times given in years since year 0 (``timed``) or as integer steps: years when they span
    two years or more, else days since the first one."""
    if not timed:
        return (lambda x: x), "time step (played_at)"
    first = min(xs)
    if max(xs) - first >= 2.0:
        return (lambda x: x), "time (years)"
    start = datetime(1970, 1, 1) + timedelta(days=(first - 1970.0) * DAYS_PER_YEAR)
    return (lambda x: (x - first) * DAYS_PER_YEAR), f"days since {start:%Y-%m-%d}"


def history_section(league, marts) -> str:
    rows = [r for r in marts.get("history", []) if r["league"] == league]
    if not rows:
        return ""
    charts = []
    for system, group in _group(rows, "system").items():
        to_x, x_label = _time_axis([r["x"] for r in group], timed=any(r["timed"] for r in group))
        series = [
            Series(
                f"{steps[0]['rank']}. {player}",
                [(to_x(s["x"]), s["rating"]) for s in steps],
                color=PALETTE[index % len(PALETTE)],
                dots=len(steps) == 1,
                band=[(to_x(s["x"]), s["rating"] - 1.96 * s["sd"], s["rating"] + 1.96 * s["sd"]) for s in steps],
            )
            for index, (player, steps) in enumerate(_group(group, "player").items())
        ]
        charts.append(
            chart(
                series,
                title=f"Top {TRAJECTORY_PLAYERS} rating histories: {system}",
                x_label=x_label,
                y_label="rating at the time step (± 1.96 sd)",
                chart_id=_slug("history", league, system),
                width=420,
                height=280,
            )
        )
    return (
        "<h3>Rating history</h3>"
        f'<p class="note">The ratings of the top {TRAJECTORY_PLAYERS} players (by their latest rating) at each '
        "time step they played, from the whole-history fits (rating_history): smoothed over the whole history, "
        "so early ratings use later games too. Band: rating ± 1.96 sd.</p>"
        f'<div class="grid">{"".join(charts)}</div>'
    )


def _meaning(test: str) -> str:
    for prefix in ("martingale_split", "martingale", "order_permutation", "matchmaking", "lowrank", "split"):
        if test.startswith(prefix):
            return BT_TEST_MEANINGS[prefix]
    return ""


def bt_tests_section(league, marts) -> str:
    rows = [r for r in marts.get("bt_tests", []) if r["league"] == league]
    if not rows:
        return ""
    meanings = [_meaning(r["test"]) for r in rows]
    return (
        "<h3>Bradley-Terry tests</h3>"
        f'<p class="note">Does one fixed strength per player explain the games? Rows with p &lt; {ALPHA} are '
        "shaded: the column on the right says what such a rejection means.</p>"
        + table("bt_tests", rows, COLUMNS["bt_tests"], {"what a rejection means": meanings})
    )


def contest_section(league, marts) -> str:
    text = ""
    metrics = [r for r in marts.get("contest_metrics", []) if r["league"] == league]
    if metrics:
        text += "<h4>Contest metrics</h4>" + table("contest_metrics", metrics, COLUMNS["contest_metrics"])
    comparison = [r for r in marts.get("contest_system_comparison", []) if r["league"] == league]
    if comparison:
        text += "<h4>System comparison</h4>" + table(
            "contest_system_comparison", comparison, COLUMNS["contest_system_comparison"]
        )
    if not text:
        return ""
    return (
        "<h3>Contest metrics</h3>"
        '<p class="note">Ebtekar &amp; Liu, Section 6.2: pair inversion (share of pairs ordered as the ratings '
        "predicted; higher is better) and rank deviation (lower is better).</p>" + text
    )


def team_section(league, marts) -> str:
    parts = []
    rows = [r for r in marts.get("team_leaderboard", []) if r["league"] == league]
    for system, group in _group(rows, "system").items():
        tier = shown_tiers(group)
        board = table("team_leaderboard", group, COLUMNS["team_leaderboard"], {"tier": tier})
        parts.append(f"<div><h4>{escape(system)}</h4>{board}</div>")
    text = f'<div class="grid">{"".join(parts)}</div>' if parts else ""
    metrics = [r for r in marts.get("team_metrics", []) if r["league"] == league]
    if metrics:
        text += "<h4>How well each system forecast the matches</h4>" + table(
            "team_metrics", metrics, COLUMNS["team_metrics"]
        )
    calibration = [r for r in marts.get("team_calibration_summary", []) if r["league"] == league]
    if calibration:
        text += "<h4>Two-team matches: calibration</h4>" + table(
            "team_calibration_summary", calibration, COLUMNS["team_calibration_summary"]
        )
    if not text:
        return ""
    return (
        "<h3>Team games</h3>"
        f'<p class="note">The top {TOP_ROWS} players per team system, with ordinal = rating - 3 sd (a conservative '
        "estimate, openskill's display rating) and 95% intervals. Forecasts: the log loss of each match's winner "
        "(lower is better), the share of matches the predicted winner won, and the pair inversion (share of pairs "
        "of teams placed as predicted; higher is better) and rank deviation (lower is better) of the predicted "
        "places; for matches of two teams, the calibration marts' log loss, Brier score and accuracy.</p>" + text
    )


def tuning_section(league, marts) -> str:
    rows = [
        r
        for r in marts.get("tuning", [])
        if r["league"] == league and r["rank"] is not None and r["rank"] <= TUNING_ROWS
    ]
    if not rows:
        return ""
    return (
        "<h3>Tuning</h3>"
        f'<p class="note">The best {TUNING_ROWS} parameter sets per system (rank 1 = lowest criterion; see '
        "docs/tuning.md for the protocols).</p>" + table("tuning", rows, COLUMNS["tuning"])
    )


SECTIONS = (
    leaderboard_section,
    calibration_section,
    loss_curve_section,
    loss_by_gap_section,
    trajectories_section,
    history_section,
    bt_tests_section,
    contest_section,
    team_section,
    tuning_section,
)


def leagues(marts: dict[str, list[dict]]) -> list[str | None]:
    """Every league of any mart, the unnamed league (None) first."""
    found = {row["league"] for rows in marts.values() for row in rows if "league" in row}
    return sorted(found, key=lambda league: (league is not None, league or ""))


def page(marts: dict[str, list[dict]], title: str = "duckrate report") -> str:
    """The whole HTML page of the marts read by :func:`duckrate.report.tables.read_marts`."""
    sections = []
    for league in leagues(marts):
        body = "".join(section(league, marts) for section in SECTIONS)
        if body:
            sections.append(
                f'<section class="league" id="{_slug("league", league)}"><h2>League {escape(_league_label(league))}</h2>{body}</section>'
            )
    nav = "".join(
        f'<a href="#{_slug("league", league)}">{escape(_league_label(league))}</a>' for league in leagues(marts)
    )
    shown = ", ".join(name for name in marts if name not in ("trajectories", "history")) or "none"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,"><title>{escape(title)}</title><style>{_CSS}</style></head><body>'
        f"<h1>{escape(title)}</h1>"
        f'<p class="note">Built from the warehouse\'s marts: {escape(shown)}. Each section is per league.</p>'
        f"<nav>{nav}</nav>{''.join(sections) or '<p>No marts found in this warehouse.</p>'}</body></html>\n"
    )
