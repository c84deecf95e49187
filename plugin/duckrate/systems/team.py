"""What every team rating system provides: the family over ``team_results`` (one row per player per match),
built like the contest family (:class:`.event_replay.EventSystem`: the run from a saved state, the check of
a continuation, the Python API in chunks of whole matches).

A team system is registered in :data:`duckrate.core.registry.SYSTEMS` as a :class:`TeamSystem`: its
signature (its first two parameters are the newcomer's ``mu`` and ``sigma``), and ``run``, which rates
prepared matches from a start (see :mod:`.event_replay`). Every team system keeps the same player row in its
saved state, ``[mu, sigma]``, and returns the same columns (:data:`OUTPUT_COLUMNS`), one row per (match,
player):

- ``rank``: the team's place in the match as rated (1 = best; tied teams share a place and places follow on:
  1, 1, 2), from the ``rank`` or ``score`` column; ``weight``: the player's share of the match (1 when NULL);
- ``rating_before``/``sd_before``/``rating_after``/``sd_after``: the player's mu and sigma around the match;
- the forecast the model made before the match: ``p_team_win`` (the team's probability of winning the match,
  as the model itself computes it), ``predicted_rank`` (the team's predicted place: 1 = most likely to win,
  ties share the best place) and ``p_draw`` (per match);
- ``seq``: the match's position in its league.

:func:`run_team_kernel` runs a system whose kernel rates the matches in waves of matches with no shared player
(:mod:`.team_batches`), on every core, with the same result whatever the thread count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyarrow as pa

from duckrate.core.parameters import Parameter, positive
from duckrate.core.priors import check_positive_priors, initial_states
from duckrate.core.protocol import InputShape
from duckrate.core.registry import SYSTEMS
from duckrate.core.teams import TEAM_RESULTS, PreparedTeams, prepare_team_results
from duckrate.systems.event_replay import EventSystem
from duckrate.systems.event_state import EventStart, fixed_values, restore_fixed
from duckrate.systems.team_batches import match_waves

# Columns of one team replay row (one per match and player), in the contract's order.
OUTPUT_COLUMNS = (
    "league",
    "match_id",
    "played_at",
    "team",
    "player",
    "rank",
    "weight",
    "rating_before",
    "sd_before",
    "rating_after",
    "sd_after",
    "p_team_win",
    "predicted_rank",
    "p_draw",
    "seq",
)
# The columns the system computes (the rest come from the input table).
COMPUTED_COLUMNS = (
    "rank",
    "weight",
    "rating_before",
    "sd_before",
    "rating_after",
    "sd_after",
    "p_team_win",
    "predicted_rank",
    "p_draw",
    "seq",
)
INTEGER_COLUMNS = ("rank", "predicted_rank", "seq")
#: The columns a kernel writes, by input row, in this order.
KERNEL_COLUMNS = ("rating_before", "sd_before", "rating_after", "sd_after", "p_team_win", "predicted_rank", "p_draw")
ROW_ORDER = ["league", "seq", "rank", "team", "player"]
#: The saved player row of every team system.
PLAYER_FIELDS = ("mu", "sigma")
# A newcomer's rating and sd: the first two parameters of every team system (or the ``priors`` row). The
# scale is TrueSkill's and openskill's: mu 25, sigma 25/3.
MU = Parameter("mu", 25.0, "a finite newcomer mean skill mu")
SIGMA = Parameter("sigma", 25.0 / 3.0, "a finite newcomer skill sd sigma > 0", positive)


@dataclass(frozen=True, kw_only=True)
class TeamSystem(EventSystem):
    """A rating system over team matches (:class:`~duckrate.core.protocol.System` over
    :data:`~duckrate.core.teams.TEAM_RESULTS`): its signature and its ``run`` (see the module docstring)."""

    input: ClassVar[InputShape] = TEAM_RESULTS
    prepare: ClassVar[Callable[[dict[str, pa.Array], str], PreparedTeams]] = staticmethod(prepare_team_results)
    output_columns: ClassVar[tuple[str, ...]] = OUTPUT_COLUMNS
    computed_columns: ClassVar[tuple[str, ...]] = COMPUTED_COLUMNS
    integer_columns: ClassVar[tuple[str, ...]] = INTEGER_COLUMNS
    row_order: ClassVar[list[str]] = ROW_ORDER

    # The model's forecast of one match from its players' ratings before it (the kernels' own forecast):
    # ``predict(params, mu, sigma, team_bounds, weight) -> (p_win per team, predicted rank per team, p_draw)``,
    # rows teams first to last, each team's players together (``team_bounds`` their offsets), ``params`` the
    # resolved parameters. ``predict_win``, ``predict_draw`` and ``predict_rank`` call it.
    predict: Callable[[dict, np.ndarray, np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, float]]


def registered() -> tuple[TeamSystem, ...]:
    """Every registered team system: the registry's entries over :data:`~duckrate.core.teams.TEAM_RESULTS`."""
    return tuple(system for system in SYSTEMS.of(TEAM_RESULTS) if isinstance(system, TeamSystem))


@dataclass(frozen=True)
class TeamMatches:
    """The prepared matches as a kernel reads them (all int64 but ``team_score`` and ``weight``, float64):
    the waves and each row's previous match of its player (:func:`.team_batches.match_waves`), the rows in
    replay order (``order``, ``team_start``, ``match_teams``), each team's place and score (NaN where none),
    whether each match was given by scores (``has_score``, bool per match), and each input row's weight and
    state slot."""

    wave_start: np.ndarray
    wave_matches: np.ndarray
    previous: np.ndarray
    order: np.ndarray
    team_start: np.ndarray
    match_teams: np.ndarray
    team_rank: np.ndarray
    team_score: np.ndarray
    has_score: np.ndarray
    weight: np.ndarray
    slot: np.ndarray

    def kernel_arrays(self) -> tuple:
        """The arrays the kernels unpack, in this order (``previous`` through ``slot``)."""
        return (
            self.previous,
            self.order,
            self.team_start,
            self.match_teams,
            self.team_rank,
            self.team_score,
            self.has_score,
            self.weight,
            self.slot,
        )

    def largest(self) -> tuple[int, int]:
        """The most players and the most teams of one match."""
        if len(self.match_teams) < 2:
            return 0, 0
        return int(np.diff(self.team_start[self.match_teams]).max()), int(np.diff(self.match_teams).max())

    @classmethod
    def of(cls, prepared: PreparedTeams) -> TeamMatches:
        wave_start, wave_matches, previous = match_waves(
            prepared.order, prepared.team_start, prepared.match_teams, prepared.state, prepared.n_states
        )
        return cls(
            wave_start,
            wave_matches,
            previous,
            prepared.order,
            prepared.team_start,
            prepared.match_teams,
            prepared.team_rank,
            prepared.team_score,
            prepared.match_has_score,
            prepared.weight,
            prepared.state,
        )


def run_team_kernel(
    name: str,
    prepared: PreparedTeams,
    priors,
    params: dict,
    start: EventStart,
    rate: Callable[[TeamMatches, np.ndarray, np.ndarray, tuple[np.ndarray, ...]], None],
):
    """``run`` for a team system whose kernel is ``rate(matches, mu, sigma, outputs)``: ``matches`` a
    :class:`TeamMatches`, ``mu`` and ``sigma`` the players' ratings by state slot (updated in place),
    ``outputs`` the :data:`KERNEL_COLUMNS` by input row. Newcomers start at ``params['mu']`` and
    ``params['sigma']`` or their ``priors`` row."""
    if priors is not None:
        check_positive_priors(priors, ("sd",), name)
    starting = initial_states(prepared, priors, {"rating": params["mu"], "sd": params["sigma"]})
    mu, sigma = starting["rating"], starting["sd"]
    restore_fixed(name, PLAYER_FIELDS, (mu, sigma), start)
    outputs = {
        column: np.empty(prepared.n_rows, np.int64 if column in INTEGER_COLUMNS else np.float64)
        for column in KERNEL_COLUMNS
    }
    rate(TeamMatches.of(prepared), mu, sigma, tuple(outputs.values()))
    place = np.empty(prepared.n_rows, dtype=np.int64)
    place[prepared.order] = np.repeat(prepared.team_rank, np.diff(prepared.team_start))
    computed = {"rank": place, "weight": prepared.weight, **outputs}
    return computed, lambda: fixed_values((mu, sigma))
