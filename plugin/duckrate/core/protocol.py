"""The one protocol every rating system implements, whatever it rates.

A system is a registry entry (:data:`duckrate.core.registry.SYSTEMS`) that carries everything the rest of
duckrate needs to know about it, so that nothing else looks a system up by its name:

- its :class:`~duckrate.core.parameters.Signature`: name, one-line summary, typed parameters with defaults
  and checks;
- the :class:`InputShape` it rates (two-player ``matches``, ranked ``contest_results``, ...), which picks
  the SQL macros, the dbt model, the Spark tables and the marts that read its rows;
- the run: :meth:`System.replay` over Arrow columns (continuing a saved state), :meth:`System.resume_problem`
  and :meth:`System.with_state` / :meth:`System.frame` over Polars frames, in chunks;
- its :class:`~duckrate.core.forecast.Forecast` between two players, from their ratings or from the saved
  state (``win_probability``, ``win_matrix``), and its :class:`~duckrate.core.scales.RatingScale`;
- its default tuning ``grid`` (``tune`` without a grid) and its :class:`Preset` parameter sets, which the
  shared tests (determinism, saved state, chunks, dbt builds, Spark) run for every registered system.

The families (:class:`duckrate.systems.two_player.ReplaySystem` over matches,
:class:`duckrate.systems.contest.ContestSystem` over contest results) implement the run once for all their
systems; a system module declares one entry of its family.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import polars as pl
import pyarrow as pa

from duckrate.core.forecast import Forecast
from duckrate.core.parameters import Signature
from duckrate.core.scales import ELO_DISPLAY, RatingScale


@dataclass(frozen=True)
class InputShape:
    """A kind of input table: its name (the default table name in messages, and the dbt staging model's
    subject), its row key, and its required and optional columns."""

    name: str
    key: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    what: str  # in words, for messages and docs: "two-player matches"

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.required, *self.optional)


@dataclass(frozen=True)
class Preset:
    """A parameter set the shared tests run a system with (saved state and continuation, chunks, SQL
    against Python, Spark): ``params`` (the system's own), ``priors`` (a newcomers' ``player_priors`` table
    as columns, or None) and whether the input carries a ``period`` column (the periodic systems)."""

    params: Mapping[str, Any] = field(default_factory=dict)
    priors: Mapping[str, Sequence[Any]] | None = None
    period_column: bool = False
    # False: a saved state may refuse to continue by design (e.g. a schedule over the league's player count
    # when players join), so the continuation tests leave the preset out
    resumable: bool = True

    def kwargs(self) -> dict[str, Any]:
        """The preset as keyword arguments of the system's Python function (priors as a Polars frame)."""
        priors = {"priors": pl.DataFrame(dict(self.priors))} if self.priors is not None else {}
        return {**self.params, **priors}


@dataclass(frozen=True, kw_only=True)
class System(Signature, ABC):
    """A rating system: its signature, its input, its run, its forecast, its grid and its presets (see the
    module docstring). Subclasses (the families) set :attr:`input` and implement the run."""

    input: ClassVar[InputShape]
    has_sd: bool = True  # False: the sd columns are NULL
    # True: each forecast comes from a fit over the league's whole history before it (WHR, TrueSkill Through
    # Time), so a run needs every match of a league at once: it never continues a saved state (the
    # continuation raises RebuildRequired) nor replays in chunks (dbt models and Spark leagues replay
    # whole; an explicit chunk_size below the number of input rows is an error)
    whole_history: bool = False
    scale: RatingScale = ELO_DISPLAY
    forecast: Forecast | None = None
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    presets: tuple[Preset, ...] = (Preset(),)

    @abstractmethod
    def replay(
        self,
        columns: dict[str, pa.Array],
        priors: Any,
        params: dict[str, Any],
        table: str | None = None,
        state: Any = None,
        want_state: bool = False,
    ) -> tuple[Any, dict[str, Any], pl.DataFrame | None]:
        """Validate ``columns`` (an input table as Arrow arrays), rate them, continuing a saved ``state``:
        ``(prepared, computed columns by input row, state after them or None)``. Raises
        :class:`~duckrate.core.errors.DuckrateInputError` on bad input and ``RebuildRequired`` when the
        state cannot be continued."""

    @abstractmethod
    def resume_problem(
        self, columns: dict[str, pa.Array], params: dict[str, Any], state: Any, table: str | None = None
    ) -> str | None:
        """Why ``state`` cannot be continued with these rows, or None when it can; nothing is rated."""

    @abstractmethod
    def with_state(
        self,
        frame: pl.DataFrame,
        state: pl.DataFrame | None = None,
        priors: pl.DataFrame | None = None,
        chunk_size: int | None = None,
        want_state: bool = True,
        **params: Any,
    ) -> tuple[pl.DataFrame, pl.DataFrame | None]:
        """The Python API: the replay rows of a Polars ``frame`` and (with ``want_state``) the state after
        them, in chunks of at most ``chunk_size`` input rows."""

    def frame(
        self,
        frame: pl.DataFrame,
        priors: pl.DataFrame | None = None,
        state: pl.DataFrame | None = None,
        chunk_size: int | None = None,
        **params: Any,
    ) -> pl.DataFrame:
        """The replay rows alone (``duckrate.<name>(...)``)."""
        return self.with_state(frame, state=state, priors=priors, chunk_size=chunk_size, want_state=False, **params)[0]


@dataclass(frozen=True, kw_only=True)
class Fit(Signature):
    """A batch fit over a whole input table (``bt_fit``): its signature, and the forecast its result table
    gives ``win_probability`` under the name ``forecast_name`` (a fit's rows carry no system column)."""

    input: InputShape
    forecast: Forecast | None = None
    forecast_name: str = ""
    # The fit over Arrow columns, ``(columns, priors, given parameters, table name) -> result rows`` (the
    # Python function and the SQL macro both call it), and the result's columns as the SQL macro returns them.
    run: Callable[[dict[str, pa.Array], Any, dict[str, Any], str], pa.Table | pl.DataFrame] | None = None
    output: pa.Schema | None = None
    priors: bool = False  # the macro takes ``priors := '<player_priors table>'``
    # A SQL list expression over the macro's parameters naming more input columns to pass as they are (e.g.
    # ``bt_fit``'s covariates), or None.
    row_columns: str | None = None
