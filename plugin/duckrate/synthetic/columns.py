"""The columns every generator writes alike: player and league names, and ``played_at`` in epoch microseconds."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

MICROSECONDS_PER_SECOND = 1_000_000
_EPOCH = datetime(1970, 1, 1)


def to_epoch_microseconds(moment: datetime) -> int:
    """Microseconds since 1970-01-01 of a naive (or UTC-converted aware) datetime."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * MICROSECONDS_PER_SECOND + delta.microseconds


def player_names(n_players: int) -> pl.Series:
    """Names ``p000001``, ``p000002``, ... (at least six digits) for player indices 0..n-1."""
    width = max(6, len(str(n_players)))
    return pl.Series([f"p{i:0{width}d}" for i in range(1, n_players + 1)], dtype=pl.Utf8)


def league_names(n_leagues: int) -> pl.Series:
    """``['main']`` for one league, else ``['league_1', ..., 'league_L']``."""
    if n_leagues == 1:
        return pl.Series(["main"], dtype=pl.Utf8)
    return pl.Series([f"league_{i}" for i in range(1, n_leagues + 1)], dtype=pl.Utf8)
