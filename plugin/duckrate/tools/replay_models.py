"""models/replays/replays.yml, generated from the registries: one entry per registered system's replay model
(``replay_<system>``), with its summary and the columns of the replay tables, described here once; and the
team systems' replay models themselves (``models/replays/replay_<team system>.sql``, all alike).

``python -m duckrate.cli generate`` writes them (:mod:`duckrate.tools.generate`); a test fails when one is stale,
and the demo's dbt build checks that the columns listed are those the models build.
"""

from __future__ import annotations

import json
import textwrap

from duckrate.core.contests import CONTEST_RESULTS
from duckrate.core.matches import MATCHES
from duckrate.core.protocol import System
from duckrate.core.teams import TEAM_RESULTS
from duckrate.registry import SYSTEMS
from duckrate.systems.contest import OUTPUT_COLUMNS as CONTEST_REPLAY_COLUMNS
from duckrate.systems.team import OUTPUT_COLUMNS as TEAM_REPLAY_COLUMNS
from duckrate.systems.two_player import OUTPUT_COLUMNS as MATCH_REPLAY_COLUMNS

_BETWEEN_0_AND_1 = "[not_null, {duckrate.between: {arguments: {min_value: 0, max_value: 1}}}]"

# Each column of a two-player replay table: (description, data tests as a YAML flow list or None).
MATCH_REPLAY_COLUMN_DOCS = {
    "league": ("The league (independent replay); NULL is the one unnamed league.", None),
    "seq": ("Position of the match in its league's replay (1, 2, ...), in (played_at, match_id) order.", "[not_null]"),
    "match_id": ("The staged match's id (unique).", "[not_null, unique]"),
    "played_at": ("When the match was played (the staged column's type).", None),
    "player_a": ("Player A (side with the first move, where that matters).", None),
    "player_b": ("Player B.", None),
    "score_a": ("A's result in [0, 1] (1 win, 0.5 draw, 0 loss).", None),
    "expected_a": ("The system's forecast before the match, P(A wins) + 0.5 P(draw).", _BETWEEN_0_AND_1),
    "rating_a_before": ("A's rating before the match (for rating periods, at the start of the period).", None),
    "rating_b_before": ("B's rating before the match.", None),
    "sd_a_before": ("A's rating sd before the match; NULL for systems without one (Elo, Elo2k, Pairwise).", None),
    "sd_b_before": ("B's rating sd before the match; NULL for systems without one.", None),
    "rating_a_after": ("A's rating after the match (for rating periods, after the period's update).", None),
    "rating_b_after": ("B's rating after the match.", None),
    "sd_a_after": ("A's rating sd after the match; NULL for systems without one.", None),
    "sd_b_after": ("B's rating sd after the match; NULL for systems without one.", None),
}

# Each column of a contest replay table, likewise.
CONTEST_REPLAY_COLUMN_DOCS = {
    "league": ("The league; NULL is the one unnamed league.", None),
    "contest_id": ("The contest.", "[not_null]"),
    "played_at": ("When the contest took place.", None),
    "player": ("The participant.", "[not_null]"),
    "rank": ("The participant's place (1 = first; tied participants share a place).", None),
    "n_players": ("Participants in the contest.", None),
    "performance": (
        "The participant's performance in the contest, on the rating scale (NaN for systems without one: "
        "glicko_contest, bar).",
        None,
    ),
    "rating_before": ("The rating before the contest (the prior the contest metrics score).", None),
    "sd_before": ("Its sd.", None),
    "rating_after": ("The rating after the contest.", None),
    "sd_after": ("Its sd.", None),
    "seq": (
        "Position of the contest in its league's replay (1, 2, ...), in (played_at, contest_id) order.",
        "[not_null]",
    ),
}

# Each column of a team replay table (one row per match and player), likewise.
TEAM_REPLAY_COLUMN_DOCS = {
    "league": ("The league; NULL is the one unnamed league.", None),
    "match_id": ("The match.", "[not_null]"),
    "played_at": ("When the match was played (the staged column's type).", None),
    "team": ("The player's team in the match (the staged key, in its type).", "[not_null]"),
    "player": ("The player.", "[not_null]"),
    "rank": (
        "The team's place in the match as rated, from its rank or score (1 = best; tied teams share a place and "
        "places follow on: 1, 1, 2).",
        "[not_null]",
    ),
    "weight": ("The player's share of the match, in (0, 1] (1 where the staged weight is NULL).", None),
    "rating_before": ("The player's rating (mu) before the match.", None),
    "sd_before": ("Its sd (sigma).", None),
    "rating_after": ("The player's rating after the match.", None),
    "sd_after": ("Its sd.", None),
    "p_team_win": ("The model's probability, before the match, that the player's team wins it.", _BETWEEN_0_AND_1),
    "predicted_rank": (
        "The team's predicted place before the match (1 = most likely to win; ties share the best place).",
        None,
    ),
    "p_draw": ("The model's probability, before the match, of a draw (one value per match).", None),
    "seq": (
        "Position of the match in its league's replay (1, 2, ...), in (played_at, match_id) order.",
        "[not_null]",
    ),
}

_HEADER = """\
# Generated from duckrate's registries by `python -m duckrate.cli generate`: do not edit.
# One entry per registered system's replay model. Ratings and sds are each system's own scale (Elo-like
# 1500/400 for Elo, Glicko, Glicko-2, the grid system's display scale, Elo2k and Pairwise; TrueSkill's own
# mu/sigma, as for the team systems).
version: 2
"""


def _columns_anchor(anchor: str, names: tuple[str, ...], docs: dict[str, tuple[str, str | None]]) -> list[str]:
    if tuple(docs) != names:
        raise ValueError(f"the column descriptions ({', '.join(docs)}) are not the columns ({', '.join(names)})")
    lines = [f"x-{anchor.replace('_', '-')}: &{anchor}"]
    for name, (description, tests) in docs.items():
        lines += [f"  - name: {name}", f"    description: {_scalar(description)}"]
        if tests:
            lines.append(f"    data_tests: {tests}")
    return lines


def _scalar(text: str) -> str:
    """``text`` as a YAML scalar: plain when that reads back as the same string, else double-quoted."""
    return json.dumps(text, ensure_ascii=False) if ": " in text or " #" in text or text[:1] in "[{&*!|>'\"%@`" else text


def _description(text: str) -> list[str]:
    return ["    description: >", *textwrap.wrap(text, 110, initial_indent="      ", subsequent_indent="      ")]


def replays_yml() -> str:
    """The text of models/replays/replays.yml."""
    lines = [_HEADER]
    lines += _columns_anchor("replay_columns", MATCH_REPLAY_COLUMNS, MATCH_REPLAY_COLUMN_DOCS)
    lines += ["", *_columns_anchor("contest_columns", CONTEST_REPLAY_COLUMNS, CONTEST_REPLAY_COLUMN_DOCS)]
    lines += ["", *_columns_anchor("team_columns", TEAM_REPLAY_COLUMNS, TEAM_REPLAY_COLUMN_DOCS)]
    lines += ["", "models:"]
    for system in SYSTEMS.of(MATCHES):
        lines += [f"  - name: replay_{system.name}"]
        lines += _description(
            f"{system.summary} Over the staged matches, one row per match with the forecast made before it; "
            f"parameters from var duckrate_params.{system.name}. Incremental: continues from its saved state "
            f"(replay_{system.name}__state) when new matches arrive."
        )
        lines += ["    columns: *replay_columns"]
    for contest_system in SYSTEMS.of(CONTEST_RESULTS):
        lines += [f"  - name: replay_{contest_system.name}"]
        lines += _description(
            f"{contest_system.summary} Over the staged contest results, one row per contest and participant; parameters "
            f"from var duckrate_params.{contest_system.name}. Incremental: continues from replay_{contest_system.name}__state when "
            "new contests arrive; a contest's rows are added or replaced together."
        )
        lines += [
            "    data_tests:",
            "      - unique:",
            "          arguments:",
            "            column_name: \"coalesce(league, '') || '/' || contest_id || '/' || player\"",
            "    columns: *contest_columns",
        ]
    for team_system in SYSTEMS.of(TEAM_RESULTS):
        lines += [f"  - name: replay_{team_system.name}"]
        lines += _description(
            f"{team_system.summary} Over the staged team results, one row per match and player; parameters from "
            f"var duckrate_params.{team_system.name}. Incremental: continues from replay_{team_system.name}__state "
            "when new matches arrive; a match's rows are added or replaced together."
        )
        lines += [
            "    data_tests:",
            "      - unique:",
            "          arguments:",
            "            column_name: \"coalesce(league, '') || '/' || match_id || '/' || player\"",
            "    columns: *team_columns",
        ]
    return "\n".join(lines) + "\n"


def team_replay_model(system: System) -> str:
    """The text of models/replays/replay_<system>.sql for a team system: the incremental replay
    (materialization ``duckrate_replay``) over stg_team_results, keyed by match_id."""
    name = system.name
    summary = textwrap.wrap(system.summary, 107, initial_indent="-- ", subsequent_indent="-- ")
    return "\n".join(
        [
            "-- Generated from duckrate's registry by `python -m duckrate.cli generate`: do not edit.",
            *summary,
            "-- Over the staged team results: one row per (match, player) with the ratings around the match and the",
            f"-- forecast made before it. Parameters from var('duckrate_params')['{name}'].",
            f"-- Incremental: continues from replay_{name}__state when new matches arrive (see macros/materializations);",
            "-- a match is one key (match_id): its rows are added or replaced together.",
            "-- Built only when a team results table is configured (var duckrate_teams_*) and the system is listed in",
            "-- var('duckrate_team_systems').",
            f"{{{{ config(enabled=(duckrate._teams_configured() and '{name}' in duckrate._team_systems()), "
            f"materialized='duckrate_replay', duckrate_system='{name}',",
            "          duckrate_key='match_id') }}",
            "{{ duckrate._team_replay_input(ref('stg_team_results')) }}",
            "",
        ]
    )
