"""duckrate: rating systems (Elo, Glicko, TrueSkill, Elo-MMR, Bradley-Terry) inside DuckDB and dbt.

Python: ``duckrate.elo(matches_df, k=32)`` etc. return Polars DataFrames.
SQL: ``duckrate.register(con)`` then ``SELECT * FROM elo_replay('matches', k := 32)``.
"""

from .errors import DuckrateInputError
from .sql.registry import register
from .systems import elo

__all__ = ["DuckrateInputError", "elo", "register"]
__version__ = "0.1.0"
