"""Peer Bradley-Terry implementations for agreement tests and benchmarks: arena-rank (LMArena) and evalica.

arena-rank 0.1.1 pins ``numpy==2.3.3`` and ``jax==0.8.1``, which cannot share duckrate's venv, so it runs
in a venv of its own, built on first use (``python -m venv`` + ``pip install``; about a minute):

* location: ``$DUCKRATE_ARENA_VENV``, else ``<repo>/.venv-arena`` (git-ignored);
* base interpreter: ``$DUCKRATE_ARENA_BASE_PYTHON``, else the one this venv was made from;
* idempotent: a marker file (``duckrate-peers.json``) records the requirements; the venv is rebuilt
  only when it is missing or the requirements changed; a file lock (``<venv>.lock``) keeps two
  pytest-xdist workers (or a test run and a benchmark) from building it at once;
* evalica (Rust core, ``numpy>=1.16``) is installed there too; it also works with duckrate's numpy 2.4,
  and :func:`evalica_bt` uses the current interpreter when it can import evalica.

Each fit runs in a subprocess (``bt_peers_run.py`` beside this file) on the frame written to Parquet
in a temporary directory; it returns NumPy arrays and the seconds measured inside the subprocess. This
module imports only the standard library at the top (the benchmarks' parent process uses it too).

arena-rank's conventions, which the knobs of :func:`arena_rank` expose:

* ratings ``init_rating + 400/ln10 * theta`` with ``init_rating = 1000`` and theta mean zero (L-BFGS from
  zero keeps the mean), not duckrate's 1500;
* ``BradleyTerry``: identical rows are grouped; the sandwich adds ``hessian_reg * N * I`` to the Hessian
  when unweighted (N battles), ``hessian_reg * I`` when reweighted;
* ``ContextualBradleyTerry``: an L2 penalty ``reg/2 * |beta|^2`` on the mean loss (default 1.0: strong
  shrinkage), features standardised by default (which also centres them: a side-A intercept in effect),
  reweighted by default (``1/max(n_pair, min_pair_count)`` normalised to mean one); its sandwich is on the
  mean loss, with ``hessian_reg * I`` added to the (mean) Hessian;
* reweighting: ``1/max(n_pair, min_pair_count)`` over unordered pairs;
* bootstrap: ``multiprocessing.Pool(n_jobs)`` (started by spawn here: fork hangs after JAX), multinomial counts over grouped rows (plain model) or
  row resampling (contextual); percentile intervals, variances of the resampled ratings.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN_SCRIPT = Path(__file__).resolve().with_name("bt_peers_run.py")
RESULT_PREFIX = "@@bt-peers "

ARENA_RANK_VERSION = "0.1.1"
EVALICA_VERSION = "0.4.2"
#: What the peers' venv holds (pyarrow reads the Parquet hand-over).
PEER_REQUIREMENTS = (f"arena-rank=={ARENA_RANK_VERSION}", f"evalica=={EVALICA_VERSION}", "pyarrow")
MARKER_NAME = "duckrate-peers.json"
#: Dense float64 n x n matrices alive at once in arena-rank's sandwich (Hessian, gradient covariance,
#: their scatter copies, the inverse with LU workspace, two products), and in evalica's fit (win, tie,
#: win + tie/2).
ARENA_SANDWICH_MATRICES = 6
EVALICA_MATRICES = 3


class PeerVenvError(RuntimeError):
    """The peers' venv could not be built (the message has pip's output)."""


class PeerRunError(RuntimeError):
    """A peer's subprocess failed (the message has its stderr)."""


class PeerTooLarge(MemoryError):
    """The peer would need more memory than this machine has (estimated before running it)."""


# --------------------------------------------------------------------------------------------
# The venv
# --------------------------------------------------------------------------------------------


def arena_venv() -> Path:
    """Where the peers' venv lives: ``$DUCKRATE_ARENA_VENV`` or ``<repo>/.venv-arena``."""
    override = os.environ.get("DUCKRATE_ARENA_VENV")
    return Path(override).expanduser().resolve() if override else REPO_ROOT / ".venv-arena"


def _base_python() -> str:
    override = os.environ.get("DUCKRATE_ARENA_BASE_PYTHON")
    if override:
        return override
    base = getattr(sys, "_base_executable", None)
    if base and Path(base).exists():
        return base
    found = shutil.which("python3")
    if not found:
        raise PeerVenvError("no python3 to build the arena-rank venv from; set DUCKRATE_ARENA_BASE_PYTHON")
    return found


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _marker_ok(venv: Path) -> bool:
    try:
        marker = json.loads((venv / MARKER_NAME).read_text())
    except (OSError, ValueError):
        return False
    return marker.get("requirements") == list(PEER_REQUIREMENTS) and _venv_python(venv).exists()


@contextlib.contextmanager
def _locked(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def arena_python(*, build: bool = True, log=None) -> Path:
    """The interpreter of the peers' venv, building the venv first if needed (see the module docstring).

    ``build=False`` raises :class:`PeerVenvError` instead of building. ``log`` (a callable) hears about a build.
    """
    venv = arena_venv()
    if _marker_ok(venv):
        return _venv_python(venv)
    if not build:
        raise PeerVenvError(f"the arena-rank venv {venv} is not built (call arena_python())")
    with _locked(venv.with_name(venv.name + ".lock")):
        if _marker_ok(venv):  # another process built it while we waited
            return _venv_python(venv)
        if venv.exists():
            shutil.rmtree(venv)
        started = time.perf_counter()
        if log:
            log(f"building {venv} ({' '.join(PEER_REQUIREMENTS)}) ...")
        base = _base_python()
        made = subprocess.run([base, "-m", "venv", str(venv)], capture_output=True, text=True)
        if made.returncode != 0:
            raise PeerVenvError(f"{base} -m venv {venv} failed (exit {made.returncode}):\n{made.stderr[-4000:]}")
        command = [
            str(_venv_python(venv)),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            *PEER_REQUIREMENTS,
        ]
        installed = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        if installed.returncode != 0:
            output = (installed.stdout + installed.stderr).strip().splitlines()
            raise PeerVenvError(
                f"pip could not install the arena-rank venv's requirements (exit {installed.returncode}): "
                f"{' '.join(command)}\n" + "\n".join(output[-40:])
            )
        freeze = subprocess.run(
            [str(_venv_python(venv)), "-m", "pip", "freeze", "--disable-pip-version-check"],
            capture_output=True,
            text=True,
        ).stdout.split()
        marker = {
            "requirements": list(PEER_REQUIREMENTS),
            "base_python": base,
            "built_seconds": round(time.perf_counter() - started, 1),
            "built_at": time.strftime("%Y-%m-%d %H:%M:%S"),
            "freeze": freeze,
        }
        (venv / MARKER_NAME).write_text(json.dumps(marker, indent=1))
        if log:
            log(f"  built in {marker['built_seconds']} s")
    return _venv_python(venv)


def arena_versions() -> dict:
    """Package versions in the peers' venv (from its marker; empty when not built)."""
    try:
        marker = json.loads((arena_venv() / MARKER_NAME).read_text())
    except (OSError, ValueError):
        return {}
    return dict(line.split("==", 1) for line in marker.get("freeze", []) if "==" in line)


# --------------------------------------------------------------------------------------------
# Memory estimates (to skip, not crash, where a dense n x n method cannot fit)
# --------------------------------------------------------------------------------------------


def available_bytes() -> int:
    """``MemAvailable`` of this machine (0 when unknown)."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def arena_sandwich_bytes(n_players: int, n_covariates: int = 0) -> int:
    """Estimated peak bytes of arena-rank's dense sandwich for ``n_players`` (plus covariates)."""
    n = n_players + n_covariates
    return ARENA_SANDWICH_MATRICES * 8 * n * n


def evalica_bytes(n_players: int, n_rows: int = 0, resamples: int = 0) -> int:
    """Estimated peak bytes of evalica's dense fit (plus scipy's bootstrap arrays: 33 bytes per row and resample)."""
    return EVALICA_MATRICES * 8 * n_players * n_players + 33 * n_rows * resamples


def _check_memory(needed: int, what: str, share: float = 0.8) -> None:
    available = available_bytes()
    if available and needed > share * available:
        raise PeerTooLarge(f"{what} needs about {needed / 1e9:.1f} GB; {available / 1e9:.1f} GB available")


# --------------------------------------------------------------------------------------------
# Running a peer
# --------------------------------------------------------------------------------------------


def _n_players(frame) -> int:
    import polars as pl

    return pl.concat([frame["player_a"], frame["player_b"]]).n_unique()


def _check_frame(frame, covariates: list[str]) -> None:
    missing = [c for c in ("player_a", "player_b", "score_a", *covariates) if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame lacks {missing}")
    if "weight" in frame.columns and not (frame["weight"] == 1.0).all():
        raise ValueError("the peers take no per-game weights (arena-rank's only weights are its reweighting)")
    if "league" in frame.columns and frame["league"].n_unique() > 1:
        raise ValueError("the peers fit one league: filter the frame first")


def run_peer(spec: dict, frame, columns: list[str], python: Path | str, timeout: float | None = None) -> dict:
    """Write ``frame[columns]`` to Parquet, run ``bt_peers_run.py`` with ``spec`` under ``python``, return its
    scalars and arrays in one dict (arrays as NumPy)."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="duckrate-peers-") as folder:
        data, out, spec_path = Path(folder, "frame.parquet"), Path(folder, "out.npz"), Path(folder, "spec.json")
        frame.select(columns).write_parquet(data)
        spec = {**spec, "data": str(data), "out": str(out)}
        spec_path.write_text(json.dumps(spec))
        environment = {**os.environ, "JAX_PLATFORMS": "cpu"}
        environment.pop("PYTHONPATH", None)  # duckrate's path has no business in the peer's interpreter
        completed = subprocess.run(
            [str(python), str(RUN_SCRIPT), str(spec_path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
        )
        scalars = None
        for line in completed.stdout.splitlines():
            if line.startswith(RESULT_PREFIX):
                scalars = json.loads(line[len(RESULT_PREFIX) :])
        if completed.returncode != 0 or scalars is None:
            raise PeerRunError(
                f"{spec['library']} run failed (exit {completed.returncode}) under {python}:\n{completed.stderr[-6000:]}"
            )
        with np.load(out) as arrays:
            scalars.update({key: arrays[key] for key in arrays.files})
    return scalars


def arena_rank(
    frame,
    *,
    covariates: list[str] | None = None,
    reweighted: bool = False,
    min_pair_count: int = 50,
    ci_method: str | None = "sandwich",
    hessian_reg: float = 1e-5,
    reg: float = 1.0,
    normalize_features: bool = True,
    num_bootstrap: int = 100,
    seed: int = 42,
    n_jobs: int = 2,
    mp_start_method: str = "spawn",
    significance_level: float = 0.05,
    max_iter: int = 1000,
    gtol: float = 1e-9,
    ftol: float = 1e-9,
    warmup: bool = True,
    exact_sandwich: bool = False,
    timeout: float | None = None,
) -> dict:
    """Fit arena-rank's ``BradleyTerry`` (or ``ContextualBradleyTerry`` with ``covariates``) to a matches frame.

    ``frame``: a Polars frame with ``player_a``, ``player_b``, ``score_a`` (1, 0.5, 0: arena-rank's outcome
    ``model_a``, ``tie``, ``model_b``) and the covariate columns. ``ci_method``: ``'sandwich'``,
    ``'bootstrap'`` (``num_bootstrap`` resamples on ``n_jobs`` processes) or None (fit only). The other
    knobs are arena-rank's (defaults as there, except ``reweighted=False``, which arena-rank's contextual
    dataset defaults to True, and ``n_jobs=2``, this machine's cores); for agreement with a plain MLE set
    ``hessian_reg`` tiny, ``reg=0`` and ``normalize_features=False``. ``mp_start_method``: how the
    bootstrap's workers start; arena-rank's own default on Linux (before Python 3.14), ``'fork'``, hangs
    once JAX has started its threads, so the helper spawns them (each imports JAX afresh, about a second).

    Returns a dict: ``competitors`` (str array, sorted: arena-rank's order), ``ratings`` (arena-rank's scale,
    ``1000 + 400/ln10 * theta``), ``rating_lower``, ``rating_upper`` (its 1 - significance_level interval),
    ``variances`` (rating points squared) -- these three absent without ``ci_method`` --, and with
    covariates ``coeffs`` (natural units per unit of the feature as arena-rank saw it, i.e. standardised
    when ``normalize_features``), ``coeffs_points`` (rating points per raw unit), ``feature_mean``,
    ``feature_std`` and, for the sandwich, ``coeff_variances`` (natural, arena-rank's feature scale,
    computed untimed by arena-rank's own Hessian code) and ``coeff_sd_points``. All float64 arrays.
    ``exact_sandwich`` (with the sandwich) adds, untimed, ``exact_variances`` (points²) and, with covariates,
    ``exact_coeff_variances``: the sandwich from arena-rank's own H and J without its regulariser, through a
    pseudo-inverse (the limit of its intervals as ``hessian_reg`` goes to zero, which its ``inv(H + εI)``
    cannot reach in floating point).
    Scalars: ``seconds_dataset`` (its dataset construction), ``seconds_fit`` (``model.fit``),
    ``seconds_ci``, ``seconds_fit_ci`` (fit + intervals), ``n_rows``, ``n_competitors``,
    ``n_dataset_rows``, ``init_rating``, ``scale``, ``hwm_bytes`` (peak RSS of the subprocess),
    ``children_maxrss_bytes`` (largest bootstrap worker), ``versions``.

    Raises :class:`PeerTooLarge` when the dense sandwich would not fit in memory, :class:`PeerVenvError`
    when the venv cannot be built, :class:`PeerRunError` when arena-rank fails.
    """
    covariates = list(covariates or [])
    _check_frame(frame, covariates)
    if ci_method not in (None, "sandwich", "bootstrap"):
        raise ValueError("ci_method must be 'sandwich', 'bootstrap' or None")
    if ci_method == "sandwich":
        _check_memory(arena_sandwich_bytes(_n_players(frame), len(covariates)), "arena-rank's dense sandwich")
    spec = {
        "library": "arena",
        "covariates": covariates,
        "reweighted": reweighted,
        "min_pair_count": min_pair_count,
        "ci_method": ci_method,
        "hessian_reg": hessian_reg,
        "reg": reg,
        "normalize_features": normalize_features,
        "num_bootstrap": num_bootstrap,
        "seed": seed,
        "n_jobs": n_jobs,
        "mp_start_method": mp_start_method,
        "significance_level": significance_level,
        "max_iter": max_iter,
        "gtol": gtol,
        "ftol": ftol,
        "warmup": warmup,
        "exact_sandwich": exact_sandwich,
    }
    columns = ["player_a", "player_b", "score_a", *covariates]
    return run_peer(spec, frame, columns, arena_python(), timeout)


def evalica_python() -> Path | str:
    """The current interpreter when it can import evalica, else the peers' venv (built if needed)."""
    import importlib.util

    if importlib.util.find_spec("evalica") is not None:
        return sys.executable
    return arena_python()


def evalica_bt(
    frame,
    *,
    tolerance: float = 1e-6,
    limit: int = 100,
    resamples: int = 0,
    bootstrap_method: str = "percentile",
    seed: int = 42,
    warmup: bool = True,
    python: Path | str | None = None,
    timeout: float | None = None,
) -> dict:
    """Fit ``evalica.bradley_terry`` (Rust, MM on dense n x n win/tie matrices, ties as half wins).

    ``tolerance`` and ``limit`` are evalica's (defaults as there: the MM stops when the L2 change of the
    scores is below ``tolerance`` or after ``limit`` iterations; see ``converged``). ``resamples > 0`` also
    runs ``evalica.bootstrap`` (scipy.stats.bootstrap over rows; ``bootstrap_method`` 'percentile',
    'basic' or 'BCa' -- BCa's jackknife refits once per row, hopeless beyond toy sizes).

    Returns a dict: ``competitors`` (str array, evalica's order: by score, descending), ``scores`` (evalica's
    scores, geometric mean one), ``log_scores`` (natural-unit strengths, mean zero: duckrate's
    ``(rating - 1500) * ln10/400``), and with resamples ``bootstrap_competitors``, ``low``, ``high``,
    ``stderr`` (score scale, evalica's) and ``log_sd`` (sd of the resampled log scores). Scalars:
    ``iterations``, ``converged``, ``seconds_fit``, ``seconds_ci`` / ``seconds_fit_ci`` (with resamples),
    ``hwm_bytes``, ``versions``, ``python`` (which interpreter ran it).
    """
    _check_frame(frame, [])
    _check_memory(evalica_bytes(_n_players(frame), frame.height, resamples), "evalica's dense matrices")
    spec = {
        "library": "evalica",
        "tolerance": tolerance,
        "limit": limit,
        "resamples": resamples,
        "bootstrap_method": bootstrap_method,
        "seed": seed,
        "warmup": warmup,
    }
    return run_peer(spec, frame, ["player_a", "player_b", "score_a"], python or evalica_python(), timeout)
