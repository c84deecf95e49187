"""TrueSkill Through Time over a team_results table: ``duckrate.ttt_team_fit``.

The model of :mod:`.fit` with games of any number of teams of any size (Dangauthier, Herbrich, Minka &
Graepel 2007; Landfried & Mocskos, TrueSkill Through Time, and their package ``trueskillthroughtime``'s
``History(composition, results, times, weights)``): a team's performance is the sum of its players'
performances ``N(s, beta^2)``, each weighted by the player's share of the match (``weight``, partial play);
the teams of a match are ordered by their ``rank`` (or ``score``), and two teams of equal rank tie (a draw,
within the margin that makes a draw between two equal teams of their players happen with probability
``p_draw``). The game's messages are :mod:`.game`'s (two teams without partial play in closed form, else the
package's iterated chain of the teams' differences), the message passing over time :mod:`.passes`'. The
numbers are the package's: after the same iterations both agree to 1e-6 and better.

A match's teams are laid out in order of their key (the kernels take them by place, tied teams in that
order, as the package takes them in the order given), its players by name within a team, and
the matches in the canonical order (time step, ``played_at``, ``match_id``), so the same rows in any order
give the same bits; a two-team match of one player a side gives the bits of ``ttt_fit`` on the same match.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import columns_from_polars
from duckrate.core.protocol import Fit
from duckrate.core.teams import TEAM_RESULTS, PreparedTeams, prepare_team_results
from duckrate.fits.league_games import name_ordered_codes
from duckrate.fits.through_time.fit import TTT_FIT, LeagueFit, fitted_league, history_rows
from duckrate.fits.through_time.gaussian import draw_margin
from duckrate.fits.through_time.layout import Layout, build_team_layout
from duckrate.fits.whole_history.periods import resolve_period, time_steps
from duckrate.fits.whole_history.rows import SQL_SCHEMA

OWNER = "ttt_team_fit"

TTT_TEAM_FIT = Fit(
    name=OWNER,
    input=TEAM_RESULTS,
    run=lambda columns, priors, given, table: fit_columns(columns, given, table),
    output=SQL_SCHEMA,
    summary=(
        "TrueSkill Through Time over team results (Dangauthier et al. 2007; Landfried & Mocskos' "
        "trueskillthroughtime): games of any number of teams of any size, a team's performance the sum of its "
        "players' (weighted by their share of the match), equal ranks tying; Gaussian skills per player and "
        "time step fitted to the whole history by forward-backward expectation propagation."
    ),
    parameters=TTT_FIT.parameters,
)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[i], starts[i] + 1, .., starts[i] + counts[i] - 1`` for each i, concatenated."""
    total = int(counts.sum())
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + (np.arange(total, dtype=np.int64) - offsets)


def _offsets(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _check_draws(columns: dict, prepared: PreparedTeams, p_draw: float, table: str) -> None:
    """Tied teams are impossible under ``p_draw`` 0: an error naming a tied match."""
    if p_draw > 0.0:
        return
    first = prepared.match_teams[:-1]
    rank = prepared.team_rank
    tied = np.zeros(prepared.n_matches, dtype=np.bool_)
    if rank.size > 1:
        # equal neighbours: of one match, or the last of a match whose teams all tie and the next's first
        same = np.flatnonzero(rank[1:] == rank[:-1])
        tied[np.searchsorted(first, same, side="right") - 1] = True
    if tied.any():
        match = int(np.flatnonzero(tied)[0])
        row = int(prepared.order[prepared.team_start[prepared.match_teams[match]]])
        key = columns["match_id"][row].as_py()
        raise DuckrateInputError(
            f"{OWNER}: {table} has {int(tied.sum())} match(es) with tied teams (equal rank or score, e.g. "
            f"match_id={key!r}) and p_draw = 0, under which a tie is impossible; expected p_draw > 0 (the "
            "probability of a draw between equal teams), or no ties"
        )


def _key_order(columns: dict, prepared: PreparedTeams) -> np.ndarray:
    """The teams (indices into ``prepared``'s) with each match's teams in order of their key, the matches as
    they are."""
    team = columns["team"]
    if pa.types.is_dictionary(team.type):
        team = team.dictionary_decode()
    keys = team.take(pa.array(prepared.order[prepared.team_start[:-1]]))
    key_rank = np.asarray(pc.rank(keys, sort_keys="ascending", tiebreaker="dense"), dtype=np.int64)
    match = np.repeat(np.arange(prepared.n_matches), np.diff(prepared.match_teams))
    return np.lexsort((key_rank, match))


def _league_layout(
    prepared: PreparedTeams, by_key: np.ndarray, matches: np.ndarray, steps: np.ndarray, local: np.ndarray, n: int
) -> Layout:
    """The :class:`~.layout.Layout` of one league's matches (in canonical order), each match's teams in order
    of their key (``by_key``, :func:`_key_order`)."""
    team_counts = np.diff(prepared.match_teams)[matches]
    teams = by_key[_ranges(prepared.match_teams[matches], team_counts)]
    member_counts = np.diff(prepared.team_start)[teams]
    rows = prepared.order[_ranges(prepared.team_start[teams], member_counts)]
    weight = prepared.weight[rows]
    return build_team_layout(
        steps[matches],
        _offsets(team_counts),
        _offsets(member_counts),
        prepared.team_rank[teams],
        local[prepared.state[rows]],
        weight if np.any(weight != 1.0) else np.empty(0),
        n,
    )


def fit_columns(columns: dict[str, pa.Array], given: dict, table: str = "team_results") -> pa.Table:
    """``ttt_team_fit`` over Arrow columns: one row per (league, player, time step the player played at),
    sorted by league, player and step."""
    params = TTT_TEAM_FIT.resolve(given)
    prepared = prepare_team_results(columns, table)
    by_period = resolve_period(params["period"], columns["played_at"].type, OWNER)
    steps = time_steps(prepared.match_time_key, prepared.time_unit, by_period)
    _check_draws(columns, prepared, params["p_draw"], table)
    margin = draw_margin(params["p_draw"], params["beta"])
    local, members = name_ordered_codes(prepared, (prepared.state,))
    by_key = _key_order(columns, prepared)
    shared = LeagueFit(params, margin, prepared, by_period, columns["played_at"].type)
    parts: list[pa.Table] = []
    for league in range(prepared.n_leagues):
        matches = np.flatnonzero(prepared.match_league == league)  # played_at, then match_id
        if matches.size == 0:
            continue
        matches = matches[np.argsort(steps[matches], kind="stable")]
        slots = members[league]
        # the layout is fitted_league's alone (no name holds it here): it lets it go before building the rows
        parts.append(
            fitted_league(_league_layout(prepared, by_key, matches, steps, local, slots.size), league, slots, shared)
        )
    return history_rows(parts, prepared, by_period, columns)


def ttt_team_fit(
    team_results: pl.DataFrame,
    mu: float = 0.0,
    sigma: float = 6.0,
    beta: float = 1.0,
    gamma: float = 0.03,
    p_draw: float = 0.0,
    epsilon: float = 1e-6,
    iterations: int = 30,
    period: str | None = None,
    accelerate: bool = True,
) -> pl.DataFrame:
    """TrueSkill Through Time over team results: every player's skill at every time step they played, from the
    whole history of games of any number of teams of any size.

    Parameters
    ----------
    team_results : the canonical ``team_results`` columns (one row per player per match: ``match_id``,
        ``played_at``, ``team``, ``player``, and ``rank`` (1 = best) or ``score`` (higher is better), equal
        for tied teams; optional ``weight`` in (0, 1], the player's share of the match (partial play: the
        player's performance counts times the weight), and ``league``, fitted independently).
    mu, sigma, beta, gamma, p_draw, epsilon, iterations, period, accelerate : as for
        :func:`duckrate.ttt_fit`; ``p_draw`` is the probability of a draw between two equal teams (their
        draw margin grows with the square root of their number of players), needed > 0 when teams tie.

    Returns
    -------
    DataFrame, one row per (league, player, time step at which the player played), sorted by league,
    player and step, with the columns of :func:`duckrate.ttt_fit` (``games``: the player's matches in the
    step).

    Raises
    ------
    DuckrateInputError
        On bad input (the message names the column, the row's match, team and player and the value) or
        parameters, and on tied teams with ``p_draw`` 0.
    """
    given = {
        "mu": mu,
        "sigma": sigma,
        "beta": beta,
        "gamma": gamma,
        "p_draw": p_draw,
        "epsilon": epsilon,
        "iterations": iterations,
        "period": period,
        "accelerate": accelerate,
    }
    return cast(pl.DataFrame, pl.from_arrow(fit_columns(columns_from_polars(team_results), given)))
