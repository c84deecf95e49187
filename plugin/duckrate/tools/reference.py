"""docs/reference.md, generated from the registries (:mod:`duckrate.registry`): every macro's parameters with
their defaults and what they accept, and its output columns. ``python -m duckrate.cli generate`` writes it;
a test fails when the file in the repository is stale."""

from __future__ import annotations

from duckrate.core.contests import CONTEST_RESULTS
from duckrate.core.matches import MATCHES
from duckrate.core.parameters import Parameter
from duckrate.core.teams import TEAM_RESULTS
from duckrate.evaluation.win_probability import (
    WIN_MATRIX_COLUMNS,
    WIN_PROBABILITY_COLUMNS,
    win_matrix_signature,
    win_probability_signature,
)
from duckrate.fits.bt_lr_test import OUTPUT_SCHEMA as BT_LR_TEST_COLUMNS
from duckrate.registry import FITS, MARTS, SYSTEMS, TESTS
from duckrate.systems.contest import OUTPUT_COLUMNS as CONTEST_COLUMNS
from duckrate.systems.team import OUTPUT_COLUMNS as TEAM_COLUMNS
from duckrate.systems.two_player import OUTPUT_COLUMNS as REPLAY_COLUMNS
from duckrate.systems.two_player import SD_COLUMNS

HEADER = """# Reference: every macro, its parameters and its columns

Generated from duckrate's registries by `python -m duckrate.cli generate` (do not edit by hand; a test
fails when this file is stale). Every SQL macro takes its parameters by name (`k := 24`); the Python
function of the same name (`duckrate.elo(matches, k=24)`) takes the same names with the same defaults.
Defaults are shown as SQL literals (NULL = none). Replays and fits also take `priors := '<table>'` where
the system has priors (see sql.md). The prose on each system is in [sql.md](sql.md),
[contests.md](contests.md) and [bradley-terry.md](bradley-terry.md); the sources in [papers.md](papers.md).
"""


def _parameter_rows(parameters: tuple[Parameter, ...]) -> list[str]:
    if not parameters:
        return ["No parameters."]
    rows = ["| parameter | default | accepts |", "| --- | --- | --- |"]
    rows += [f"| `{p.name}` | `{p.sql_default}` | {p.expected.replace('|', '/')} |" for p in parameters]
    return rows


def _columns(names) -> str:
    return "Columns: " + ", ".join(f"`{name}`" for name in names) + "."


def _section(
    title: str, call: str, python: str | None, parameters, columns: str, note: str = "", summary: str = ""
) -> list[str]:
    lines = [f"### {title}", ""] + ([summary, ""] if summary else [])
    lines += [f"SQL: `{call}`" + (f"; Python: `{python}`" if python else "") + ".", ""]
    lines += _parameter_rows(parameters)
    lines += ["", columns + (" " + note if note else ""), ""]
    return lines


def reference_markdown() -> str:
    """The text of docs/reference.md."""
    lines = [HEADER, "## Two-player replays (over matches)", ""]
    for system in SYSTEMS.of(MATCHES):
        note = "" if system.has_sd else f"No sd: {', '.join(f'`{c}`' for c in SD_COLUMNS)} are NULL."
        lines += _section(
            f"`{system.name}_replay`",
            f"SELECT * FROM {system.name}_replay('matches', ...)",
            f"duckrate.{system.name}(matches, ...)",
            system.parameters,
            _columns(REPLAY_COLUMNS),
            note,
            system.summary,
        )
    lines += ["## Contest replays (over ranked results)", ""]
    for contest_system in SYSTEMS.of(CONTEST_RESULTS):
        lines += _section(
            f"`{contest_system.name}_replay`",
            f"SELECT * FROM {contest_system.name}_replay('contest_results', ...)",
            f"duckrate.{contest_system.name}(results, ...)",
            contest_system.parameters,
            _columns(CONTEST_COLUMNS),
            summary=contest_system.summary,
        )
    lines += [
        "## Team systems (over team results)",
        "",
        "Over `team_results`, one row per player per match: `match_id`, `played_at`, `team` (unique within the "
        "match), `player`, and `rank` (1 = best; equal ranks tie) and/or `score` (higher is better), optional "
        "`weight` (the player's share of the match, in (0, 1]; NULL = 1) and `league`. In dbt, "
        "`replay_<system>` over `stg_team_results` (vars `duckrate_teams_model` / `_source` / `_table`, "
        "`duckrate_team_columns`, `duckrate_team_systems`).",
        "",
    ]
    for team_system in SYSTEMS.of(TEAM_RESULTS):
        name = team_system.name
        lines += _section(
            f"`{name}_replay`",
            f"SELECT * FROM {name}_replay('team_results', ...)",
            f"duckrate.{name}(results, ...)",
            team_system.parameters,
            _columns(TEAM_COLUMNS),
            f"Also `{name}_replay_and_state`, `{name}_state` and `{name}_resume_check` (the same parameters, "
            "`state := '<saved state>'` to continue one).",
            team_system.summary,
        )
    lines += ["## Batch fits", ""]
    for fit in FITS:
        lines += _section(
            f"`{fit.name}`",
            f"SELECT * FROM {fit.name}('{fit.input.name}', ...)",
            f"duckrate.{fit.name}({fit.input.name}, ...)",
            fit.parameters,
            _columns(fit.output.names if fit.output is not None else ()),
            summary=fit.summary,
        )
    lines += ["## Tests of the model", ""]
    for test in TESTS:
        lines += _section(
            f"`{test.name}`",
            f"SELECT * FROM {test.name}('matches', ...)",
            f"duckrate.{test.name}(matches, ...)",
            test.parameters,
            _columns(BT_LR_TEST_COLUMNS),
        )
    lines += [
        "## Marts (over a replay table)",
        "",
        "Each also takes `system := NULL`, the label of a replay table's rows that have no `system` column.",
        "",
    ]
    for mart in MARTS:
        lines += _section(
            f"`{mart.name}`",
            f"SELECT * FROM {mart.name}('replay_table', ...)",
            f"duckrate.{mart.name}(replay, ...)",
            mart.parameters,
            _columns(name for name, _ in mart.returns),
        )
    from_state = ", ".join(s.name for s in SYSTEMS.of(MATCHES) if s.forecast is not None and s.forecast.from_state)
    win_probability, win_matrix = win_probability_signature(), win_matrix_signature()
    lines += [
        "## Forecasts (over ratings)",
        "",
        f"Over a `bt_fit` result, a leaderboard, a replay table or ({from_state}) a saved state; see "
        "sql.md. A NULL forecast parameter takes the system's replay default shown.",
        "",
    ]
    lines += _section(
        "`win_probability`",
        "SELECT * FROM win_probability('ratings', 'player A', 'player B', ...)",
        "duckrate.win_probability(ratings, player_a, player_b, ...)",
        win_probability.parameters,
        _columns(WIN_PROBABILITY_COLUMNS),
        summary=win_probability.summary,
    )
    lines += _section(
        "`win_matrix`",
        "SELECT * FROM win_matrix('ratings', ...)",
        "duckrate.win_matrix(ratings, ...)",
        win_matrix.parameters,
        _columns(WIN_MATRIX_COLUMNS),
        summary=win_matrix.summary,
    )
    return "\n".join(lines).rstrip() + "\n"
