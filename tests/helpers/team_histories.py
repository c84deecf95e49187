"""Random team histories for the agreement tests (the peers replay them one match at a time), and the
sequential replays of the peers over a duckrate team replay's own row order."""

from __future__ import annotations

import numpy as np
import polars as pl


def random_team_history(
    n_matches: int,
    seed: int,
    *,
    n_players: int = 60,
    teams: tuple[int, int] = (2, 8),
    size: tuple[int, int] = (1, 8),
    tie_rate: float = 0.15,
    partial_rate: float = 0.1,
    scores: bool = False,
) -> pl.DataFrame:
    """``team_results`` rows: ``n_matches`` matches of 2-8 teams of 1-8 players from a pool of ``n_players``,
    ranks with ties (or scores, equal for tied teams), some weights below 1. Team keys are integers; match ids
    and played_at increase together."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {"match_id": [], "played_at": [], "team": [], "player": [], "rank": [], "weight": []}
    if scores:
        rows["score"] = []
    for m in range(n_matches):
        n_teams = int(rng.integers(teams[0], teams[1] + 1))
        sizes = rng.integers(size[0], size[1] + 1, n_teams)
        if sizes.sum() > n_players:
            sizes = np.maximum(1, sizes * n_players // (2 * sizes.sum()))
        chosen = rng.permutation(n_players)[: sizes.sum()]
        place = np.ones(n_teams, dtype=np.int64)
        for t in range(1, n_teams):
            place[t] = place[t - 1] + (0 if rng.random() < tie_rate else 1)
        place = place[rng.permutation(n_teams)]
        gaps = rng.integers(1, 6, n_teams + 1)  # the score falls by 1-5 from one place to the next
        score = float(gaps.sum()) - np.cumsum(gaps)[place - 1]
        start = 0
        for t in range(n_teams):
            for p in chosen[start : start + sizes[t]]:
                rows["match_id"].append(m + 1)
                rows["played_at"].append(m + 1)
                rows["team"].append(t)
                rows["player"].append(f"p{p:03d}")
                rows["rank"].append(int(place[t]))
                rows["weight"].append(float(rng.uniform(0.2, 1.0)) if rng.random() < partial_rate else None)
                if scores:
                    rows["score"].append(float(score[t]))
            start += sizes[t]
    frame = pl.DataFrame(rows, schema_overrides={"weight": pl.Float64})
    return frame.drop("rank") if scores else frame


def matches_in_replay_order(replay: pl.DataFrame) -> list[dict[str, list[list]]]:
    """A team replay's rows, one match at a time in replay order: each match a dict from column to one list per
    team, teams best first (the order the replay rates them in), players as the replay orders them. Plain
    Python lists, so a peer's loop over 10,000 matches spends its time in the peer."""
    ordered = replay.sort(["league", "seq", "rank", "team", "player"], nulls_last=True)
    columns = ordered.to_dict(as_series=False)
    names = list(columns)
    matches: list[dict[str, list[list]]] = []
    previous_match = previous_team = None
    for i in range(ordered.height):
        match_key = (columns["league"][i], columns["seq"][i])
        if match_key != previous_match:
            matches.append({name: [] for name in names})
            previous_match, previous_team = match_key, None
        match = matches[-1]
        if columns["team"][i] != previous_team:
            for name in names:
                match[name].append([])
            previous_team = columns["team"][i]
        for name in names:
            match[name][-1].append(columns[name][i])
    return matches


def team_lists(match: dict[str, list[list]], column: str) -> list[list]:
    """``column`` of a match's rows as one list per team, teams in the match's order."""
    return match[column]
