"""The kinds of table a Spark replay rates, and the columns and types of its rows.

``matches`` (two-player systems), ``contest_results`` (contest systems) and ``team_results`` (team systems):
the canonical input columns a
task receives, and the replay's output columns typed as the DuckDB macros type them (``league`` text; the
columns passed through keep their input types; counts are longs, the rest doubles). A ``match_id`` is a
key across all leagues and is checked so; a contest is one ``(league, contest_id)``, so every check of a
contest table runs within its league's task, as does every check of a team match, one ``(league, match_id)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from duckrate.core import contests, matches, teams
from duckrate.core.protocol import InputShape
from duckrate.spark.canonical import MATCH_COLUMNS
from duckrate.spark.unique_keys import check_unique_match_ids
from duckrate.systems import contest as contest_rows
from duckrate.systems import team as team_rows
from duckrate.systems.two_player import OUTPUT_COLUMNS as MATCH_OUTPUT_COLUMNS


@dataclass(frozen=True)
class RatedTable:
    """One kind of input table: its canonical ``columns`` and the replay's ``outputs``."""

    columns: tuple[str, ...]
    outputs: tuple[str, ...]
    passthrough: tuple[str, ...]  # output columns typed as the input's column of the same name
    text: tuple[str, ...]  # output columns cast to text
    counts: tuple[str, ...]  # output columns that are longs; every other one is a double
    key: str  # the column naming a match or a contest: a league's open rating period is a set of its values
    check_keys: Callable[[DataFrame], None] | None = None  # a check across leagues, on the driver

    def output_type(self, name: str, inputs: T.StructType) -> T.DataType:
        if name in self.passthrough:
            return inputs[name].dataType
        if name in self.text:
            return T.StringType()
        return T.LongType() if name in self.counts else T.DoubleType()


MATCHES = RatedTable(
    columns=MATCH_COLUMNS,
    outputs=MATCH_OUTPUT_COLUMNS,
    passthrough=("match_id", "played_at"),
    text=("league", "player_a", "player_b"),
    counts=("seq",),
    key="match_id",
    check_keys=check_unique_match_ids,
)
CONTESTS = RatedTable(
    columns=(*contests.REQUIRED_COLUMNS, *contests.OPTIONAL_COLUMNS),
    outputs=contest_rows.OUTPUT_COLUMNS,
    passthrough=("contest_id", "played_at", "player", "rank"),
    text=("league",),
    counts=("n_players", "seq"),
    key="contest_id",
)

TEAMS = RatedTable(
    columns=(*teams.REQUIRED_COLUMNS, *teams.OPTIONAL_COLUMNS),
    outputs=team_rows.OUTPUT_COLUMNS,
    passthrough=("match_id", "played_at", "team", "player"),
    text=("league",),
    counts=team_rows.INTEGER_COLUMNS,
    key="match_id",
)


#: The Spark tables of each input shape.
RATED_TABLES: dict[InputShape, RatedTable] = {
    matches.MATCHES: MATCHES,
    contests.CONTEST_RESULTS: CONTESTS,
    teams.TEAM_RESULTS: TEAMS,
}


def rated_table(shape: InputShape) -> RatedTable:
    """The Spark table of systems that rate ``shape``."""
    return RATED_TABLES[shape]
