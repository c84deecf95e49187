"""Benchmark: the whole-history fits, whr_fit and ttt_fit, against the whr 2.2.0 and trueskillthroughtime 1.1.0
packages, side by side in one run.

Targets (issue "whole-history ratings"), on this 2-core machine:

* a tennis-sized history, 200k games among 20k players over ~50 years of days, fitted to convergence in at
  most 2 s by ``whr_fit`` and 5 s by ``ttt_fit``, and at least 100x faster than the faster package on the
  same games;
* 10M games among 100k players (``--large``, duckrate only) in at most 60 s and 6 GB peak RSS each.

Nothing is asserted about timings: the script prints tables to paste into BENCHMARKS.md, and exits non-zero
only if a case fails, a fit does not converge or a package disagrees with duckrate.

Data (:func:`tennis_history`, cached as ``bench/.data/whole_history_<...>.duckdb``, table ``matches``):
``duckrate.synthetic.generate_matches`` keeps every player active over the whole span (a 50-year history
would have each player's few games decades apart), so the history is generated here, shaped like a tennis
tour: careers of limited length (log-normal, median 4 years) starting uniformly over the span; a
heavy-tailed number of games per player (better players play more); skills that start normal
(sd 200 Elo) and drift as a random walk (3 Elo per day); each week's appearances paired by skill plus
noise (like a tournament's draw), so opponents are active at the same time; Bradley-Terry results, no draws unless
``--draw-rate`` (then a draw between equals has that probability, as in ``generate_matches``).
``played_at`` is a DATE, so the time step is the day, for duckrate and for both packages.

Each case runs in a fresh child process (its peak RSS, ``VmHWM``, is its own); the games are read from the
cached file into Polars first (untimed, as is building the packages' Python lists):

* ``whr``: ``duckrate.whr_fit(frame)`` with the defaults (w2 300, virtual_games 2, Newton's method,
  tolerance 1e-6 rating points), after a warm-up on 2,000 games, ``--repeats`` times (median);
* ``ttt``: ``duckrate.ttt_fit(frame, epsilon=1e-6, iterations=10_000)`` (mu 0, sigma 6, beta 1,
  gamma 0.03, p_draw 0 or ``--draw-rate``), likewise;
* ``whr-sql`` and ``ttt-sql``: ``CREATE TABLE r AS SELECT * FROM whr_fit('src.main.matches', ...)`` (and
  ``ttt_fit``) with the same parameters, after ``duckrate.register(con)``; skipped with a note while the
  SQL macro does not exist;
* ``whr-package``: ``whr.Base(config={"w2": 300, "virtual_games": 2})``, ``create_games`` (player_a
  plays black) and ``iterate_until_converge`` (its own rule: ten sweeps in a row in which no rating moves
  on a 0.01 Elo grid; by then it agrees with ``whr_fit`` to about 1e-6 Elo at small sizes);
* ``ttt-package``: ``trueskillthroughtime.History(...)`` with the same parameters and the games in
  ``ttt_fit``'s order (day, then match_id), which runs the filtering pass, then ``History.iteration()``
  until its step is at most 1e-6, what ``History.convergence`` does.

Extrapolation, for a package that would run past ``--package-budget`` seconds (default 600):

* trueskillthroughtime runs one iteration at a time on the full history until it converges or the budget
  is spent. Every iteration does the same work (each game's messages once), so its time to convergence
  is extrapolated as: building the History + the iterations ``ttt_fit(accelerate=False)`` needs on the
  same games x the mean seconds per iteration measured. With ``accelerate`` false ``ttt_fit`` runs the
  package's schedule and stops after the same iteration (the validation at small sizes shows the counts
  equal), so the count is not a guess (``ttt_fit``'s own default, the coarse correction, needs far fewer);
* whr runs ``iterate_until_converge`` with the budget as a timeout; if it is killed, a second child
  times ``create_games`` and single sweeps on the full history (at least 3, or 60 s), and
  ``iterate_until_converge`` on the first quarter of the games (a shorter history of the same density),
  and extrapolates: build + that sweep count x the mean seconds per sweep. The sweep count grows
  slowly with the history, so this underestimates, in the package's favour: on these histories of 20k,
  50k and 100k games the whole took 103, 136 and 177 sweeps, its first quarter 87, 119 and 156.
  (Seconds per sweep grow faster than the games, which is why they are measured on the full history.)

Extrapolated figures are labelled as such. The sanity columns (``--no-check`` skips them) are the largest
absolute differences from duckrate's ratings and sds: for whr at its convergence (against ``whr_fit``'s);
for trueskillthroughtime after the iterations it ran (against ``ttt_fit`` with the package's schedule run for
as many, epsilon 0).

Usage (from the repository root)::

    .venv/bin/python bench/whole_history.py                      # 200k games / 20k players, both packages
    # (about 15 minutes, 10 of them trueskillthroughtime's budget)
    .venv/bin/python bench/whole_history.py --large              # 10M games / 100k players, duckrate only, 1 run
    .venv/bin/python bench/whole_history.py --games 5000 --players 1000 --repeats 1     # a quick check
    .venv/bin/python bench/whole_history.py --cases whr ttt whr-sql ttt-sql
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

PACKAGES = {"whr-package": "whr 2.2.0", "ttt-package": "trueskillthroughtime 1.1.0"}
CASES = ("whr", "whr-sql", "whr-package", "ttt", "ttt-sql", "ttt-package")
DUCKRATE_CASES = ("whr", "whr-sql", "ttt", "ttt-sql")
#: Bump when the generator changes; cached files with another format are regenerated.
FORMAT = 1
SEED = 19_750_101
START_DAY = 1_826  # 1975-01-01, in days since 1970-01-01
WARMUP_GAMES = 2_000
TARGET_SECONDS = {"whr": 2.0, "ttt": 5.0}
LARGE_TARGET_SECONDS, LARGE_TARGET_GB = 60.0, 6.0
TARGET_RATIO = 100.0
WHR_PARAMS = {"w2": 300.0, "virtual_games": 2}
TTT_PARAMS = {"mu": 0.0, "sigma": 6.0, "beta": 1.0, "gamma": 0.03}
EPSILON = 1e-6
TTT_MAX_ITERATIONS = 10_000
SUBSET_SHARE = 4  # the whr probe counts sweeps to convergence on the first quarter of the games
PROBE_SECONDS = 60.0


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def tennis_history(
    n_games: int,
    n_players: int,
    years: float = 50.0,
    seed: int = SEED,
    draw_rate: float = 0.0,
    skill_sd: float = 200.0,
    drift_sd: float = 3.0,
    career_median_years: float = 4.0,
    pairing_noise: float = 150.0,
):
    """A tennis-like history as a Polars frame (``match_id, played_at`` DATE, ``player_a, player_b, score_a``).

    Player ``i`` has a career of log-normal length (median ``career_median_years``, clipped to 30 days ..
    25 years) starting uniformly over ``[-length, span]`` and clipped to the span, an initial skill
    ``N(0, skill_sd)`` (Elo) and an activity ``exp(0.6 z + 0.7 N(0, 1))`` (``z`` the skill's z-score:
    better players play more). Games: ``2.2 n_games`` appearances (two per player, the rest drawn by
    activity x career length), each on a uniform day of its player's career; skills at those days follow
    a random walk of ``drift_sd`` Elo per day; each week's appearances are ordered by skill plus
    ``N(0, pairing_noise)`` and paired in that order, the game on the first one's day (pairings with
    oneself are dropped, then ``n_games`` of the pairings kept at random); ``player_a`` is either of the
    two (a fair coin) and wins with probability ``1 / (1 + 10^(-d/400))``, ``d`` the skill gap, after a draw with
    probability ``draw_rate exp(-(d/400)^2)``. ``match_id`` follows the days."""
    import numpy as np
    import polars as pl

    rng = np.random.Generator(np.random.PCG64(seed))
    span = round(years * 365.25)
    length = np.clip(career_median_years * 365.25 * rng.lognormal(0.0, 0.9, n_players), 30.0, 25 * 365.25)
    start = rng.uniform(-length, span)
    end = np.minimum(start + length, span - 1.0)
    start = np.maximum(start, 0.0)
    end = np.maximum(end, np.minimum(start + 7.0, span - 1.0))
    z = rng.standard_normal(n_players)
    activity = np.exp(0.6 * z + 0.7 * rng.standard_normal(n_players))
    weight = activity * (end - start + 1.0)
    spare = max(int(2 * n_games * 1.1) - 2 * n_players, 0)
    player = np.concatenate(
        [np.repeat(np.arange(n_players), 2), rng.choice(n_players, size=spare, p=weight / weight.sum())]
    )
    day = (start[player] + rng.uniform(0.0, 1.0, player.size) * (end[player] - start[player])).astype(np.int64)
    order = np.lexsort((day, player))  # by player, then day: the random walk
    player, day = player[order], day[order]
    first = np.r_[True, player[1:] != player[:-1]]
    gap = np.where(first, 0, np.diff(day, prepend=0))
    walk = np.cumsum(drift_sd * np.sqrt(gap) * rng.standard_normal(player.size))
    firsts = np.flatnonzero(first)
    walk -= np.repeat(walk[firsts], np.diff(np.r_[firsts, player.size]))
    skill = skill_sd * z[player] + walk
    order = np.lexsort((skill + pairing_noise * rng.standard_normal(player.size), day // 7))
    pairs = order[: order.size // 2 * 2].reshape(-1, 2)
    pairs = pairs[player[pairs[:, 0]] != player[pairs[:, 1]]]
    if pairs.shape[0] < n_games:
        raise ValueError(f"only {pairs.shape[0]} games could be paired; ask for more games per player")
    pairs = pairs[np.sort(rng.permutation(pairs.shape[0])[:n_games])]
    swap = rng.uniform(size=n_games) < 0.5
    a = np.where(swap, pairs[:, 1], pairs[:, 0])
    b = np.where(swap, pairs[:, 0], pairs[:, 1])
    game_day = day[pairs[:, 0]]
    gap_elo = skill[a] - skill[b]
    draw = rng.uniform(size=n_games) < draw_rate * np.exp(-((gap_elo / 400.0) ** 2))
    win = rng.uniform(size=n_games) < 1.0 / (1.0 + 10.0 ** (-gap_elo / 400.0))
    score = np.where(draw, 0.5, win.astype(np.float64))
    order = np.lexsort((rng.uniform(size=n_games), game_day))
    width = len(str(n_players - 1))
    frame = pl.DataFrame(
        {
            "match_id": np.arange(1, n_games + 1, dtype=np.int64),
            "played_at": (game_day[order] + START_DAY).astype(np.int32),
            "player_a": player[a[order]],
            "player_b": player[b[order]],
            "score_a": score[order],
        }
    )
    name = lambda column: pl.format("p{}", pl.col(column).cast(pl.String).str.zfill(width))  # noqa: E731
    return frame.with_columns(pl.col("played_at").cast(pl.Date), name("player_a"), name("player_b"))


def _meta(games: int, players: int, years: float, draw_rate: float) -> dict:
    return {"format": FORMAT, "games": games, "players": players, "years": years, "draw_rate": draw_rate, "seed": SEED}


def data_file(games: int, players: int, years: float, draw_rate: float) -> Path:
    """``bench/.data/whole_history_<games>_<players>_<years>y[_d<draw rate>].duckdb`` (table ``matches``),
    generated in a child process when missing or made by another version of the generator."""
    suffix = f"_d{draw_rate:g}" if draw_rate > 0 else ""
    path = common.DATA_DIR / f"whole_history_{games}_{players}_{years:g}y{suffix}.duckdb"
    wanted = _meta(games, players, years, draw_rate)
    if path.exists():
        code = (
            "import duckdb, sys\n"
            "print(duckdb.connect(sys.argv[1], read_only=True).execute('SELECT meta FROM meta').fetchall()[0][0])\n"
        )
        found = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
        if found.returncode == 0 and json.loads(found.stdout.strip().splitlines()[-1]) == wanted:
            return path
    _log(f"generating {games:,} games among {players:,} players over {years:g} years -> {path.name}")
    started = time.perf_counter()
    common.run_child([__file__, "--generate", json.dumps(wanted), "--data", str(path)])
    _log(f"  done in {time.perf_counter() - started:.1f} s")
    return path


def generate(meta: dict, path: Path) -> None:
    import duckdb

    frame = tennis_history(meta["games"], meta["players"], meta["years"], meta["seed"], meta["draw_rate"])
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(str(partial))
    try:
        con.register("frame", frame.to_arrow())
        con.execute("CREATE TABLE matches AS SELECT * FROM frame")
        con.unregister("frame")
        con.execute("CREATE TABLE meta AS SELECT ?::VARCHAR AS meta", [json.dumps(meta)])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    Path(str(partial) + ".wal").unlink(missing_ok=True)
    os.replace(partial, path)
    common.emit_result({"rows": frame.height})


def _frame(data: Path):
    import duckdb

    con = duckdb.connect(str(data), read_only=True)
    frame = con.sql("SELECT match_id, played_at, player_a, player_b, score_a FROM matches ORDER BY match_id").pl()
    con.close()
    return frame


def _describe(frame) -> dict:
    """Players, days, player-days (the rows of either fit) and draws of a history."""
    import polars as pl

    sides = pl.concat(
        [
            frame.select(player="player_a", day="played_at"),
            frame.select(player="player_b", day="played_at"),
        ]
    )
    return {
        "games": frame.height,
        "players": sides["player"].n_unique(),
        "first": str(frame["played_at"].min()),
        "last": str(frame["played_at"].max()),
        "days": frame["played_at"].n_unique(),
        "player_days": sides.unique().height,
        "draws": int((frame["score_a"] == 0.5).sum()),
    }


# --------------------------------------------------------------------------------------------
# Children: duckrate
# --------------------------------------------------------------------------------------------


def _fit_call(system: str, args) -> tuple:
    """The Python function and keyword arguments of a duckrate fit."""
    import duckrate

    if system == "whr":
        return duckrate.whr_fit, dict(WHR_PARAMS, tolerance=EPSILON)
    params = dict(TTT_PARAMS, p_draw=args.draw_rate, epsilon=EPSILON, iterations=TTT_MAX_ITERATIONS)
    return duckrate.ttt_fit, params


def _hwm_gb() -> float:
    """Peak RSS of this child so far (``VmHWM``: its own, not inherited from the parent)."""
    return (common.hwm_bytes() or common.maxrss_bytes()) / common.GB


def child_python(args) -> None:
    """``whr_fit`` or ``ttt_fit`` over the frame, after a warm-up on its first games."""
    frame = _frame(args.data)
    function, params = _fit_call(args.case, args)
    function(frame.head(WARMUP_GAMES), **params)
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        fit = function(frame, **params)
        seconds.append(time.perf_counter() - started)
    common.emit_result(
        {
            "seconds": seconds,
            "rows": fit.height,
            "iterations": int(fit["iterations"].max()),
            "converged": bool(fit["converged"].all()),
            "hwm_gb": _hwm_gb(),
            "history": _describe(frame),
        }
    )


def _sql_params(system: str, args) -> str:
    _, params = _fit_call(system, args)
    return ", ".join(f"{name} := {value!r}" for name, value in params.items())


def child_sql(args) -> None:
    """``CREATE TABLE r AS SELECT * FROM <fit>('src.main.matches', ...)`` through DuckDB, when the macro exists."""
    system = args.case.removesuffix("-sql")
    con = common.benchmark_connection(args.data)
    name = f"{system}_fit"
    if not con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [name]).fetchall()[0][0]:
        common.emit_result({"skipped": f"no SQL macro {name} yet (duckrate.register defines none)"})
        return
    params = _sql_params(system, args)
    con.execute(f"CREATE TABLE warm AS SELECT * FROM src.main.matches ORDER BY match_id LIMIT {WARMUP_GAMES}")
    con.execute(f"CREATE TABLE w AS SELECT * FROM {name}('warm', {params})")
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        con.execute(f"CREATE OR REPLACE TABLE r AS SELECT * FROM {name}('src.main.matches', {params})")
        seconds.append(time.perf_counter() - started)
    rows, iterations, converged = con.execute(
        "SELECT count(*), max(iterations), bool_and(converged) FROM r"
    ).fetchall()[0]
    hwm = _hwm_gb()
    difference = None
    if args.check:
        function, python_params = _fit_call(system, args)
        python = function(_frame(args.data), **python_params)
        sql = con.sql("SELECT player, step, rating, sd FROM r").pl()
        both = python.join(sql, on=["player", "step"], suffix="_sql")
        difference = (
            math.inf  # not the same (player, step) rows
            if both.height != python.height or both.height != sql.height
            else float(
                max((both["rating"] - both["rating_sql"]).abs().max(), (both["sd"] - both["sd_sql"]).abs().max())
            )
        )
    common.emit_result(
        {
            "seconds": seconds,
            "rows": rows,
            "iterations": iterations,
            "converged": bool(converged),
            "hwm_gb": hwm,
            "python_difference": difference,
        }
    )


# --------------------------------------------------------------------------------------------
# Children: the packages
# --------------------------------------------------------------------------------------------


def _whr_games(frame) -> list:
    """The games as ``whr.Base.create_games`` takes them: ``[black, white, winner, day]``, player_a black."""
    import polars as pl

    winner = {1.0: "B", 0.0: "W", 0.5: "D"}
    days = frame["played_at"].cast(pl.Int32).to_list()
    return [
        [a, b, winner[s], d] for (a, b, s), d in zip(frame.select("player_a", "player_b", "score_a").iter_rows(), days)
    ]


def _whr_difference(base, frame) -> list[float]:
    """Largest |rating - 1500 - package Elo| and |sd - package sd| over every (player, day)."""
    import duckrate

    fit = duckrate.whr_fit(frame, **WHR_PARAMS, tolerance=EPSILON)
    theirs = {(p, t): (elo, sd) for p, days in base.get_ordered_ratings() for t, elo, sd in days}
    rating_gap = sd_gap = 0.0
    for player, step, rating, sd in fit.select("player", "step", "rating", "sd").iter_rows():
        elo, their_sd = theirs.pop((player, step))
        rating_gap, sd_gap = max(rating_gap, abs(rating - 1500.0 - elo)), max(sd_gap, abs(sd - their_sd))
    if theirs:
        raise SystemExit(f"whr has {len(theirs)} (player, day) ratings that whr_fit does not")
    return [rating_gap, sd_gap]


def child_whr_package(args) -> None:
    """whr 2.2.0 to its own convergence (the parent kills this child after the budget)."""
    import whr

    frame = _frame(args.data)
    games = _whr_games(frame)
    started = time.perf_counter()
    base = whr.Base(config=dict(WHR_PARAMS))
    base.create_games(games)
    built = time.perf_counter()
    iterations = base.iterate_until_converge(False)
    done = time.perf_counter()
    hwm = _hwm_gb()
    common.emit_result(
        {
            "build_s": built - started,
            "fit_s": done - built,
            "seconds": done - started,
            "iterations": iterations,
            "hwm_gb": hwm,
            "difference": _whr_difference(base, frame) if args.check else None,
        }
    )


def child_whr_probe(args) -> None:
    """The pieces of whr's extrapolated time: building and single sweeps on the full history, sweeps to its
    convergence on the first quarter of the games."""
    import whr

    frame = _frame(args.data)
    games = _whr_games(frame)
    started = time.perf_counter()
    base = whr.Base(config=dict(WHR_PARAMS))
    base.create_games(games)
    build_s = time.perf_counter() - started
    sweeps = []
    while len(sweeps) < 3 or (sum(sweeps) < PROBE_SECONDS and len(sweeps) < 50):
        started = time.perf_counter()
        base.iterate(1)
        sweeps.append(time.perf_counter() - started)
    hwm = _hwm_gb()
    del base
    subset = games[: len(games) // SUBSET_SHARE]
    small = whr.Base(config=dict(WHR_PARAMS))
    small.create_games(subset)
    started = time.perf_counter()
    subset_iterations = small.iterate_until_converge(False)
    common.emit_result(
        {
            "build_s": build_s,
            "sweeps_s": sweeps,
            "subset_games": len(subset),
            "subset_iterations": subset_iterations,
            "subset_s": time.perf_counter() - started,
            "hwm_gb": hwm,
        }
    )


def child_ttt_package(args) -> None:
    """trueskillthroughtime 1.1.0, one iteration at a time until converged or past the budget."""
    import polars as pl
    import trueskillthroughtime as ttt

    frame = _frame(args.data).sort(["played_at", "match_id"])  # ttt_fit's order: step, played_at, match_id
    composition = [[[a], [b]] for a, b in zip(frame["player_a"].to_list(), frame["player_b"].to_list())]
    results = [[s, 1.0 - s] for s in frame["score_a"].to_list()]
    times = frame["played_at"].cast(pl.Int32).to_list()
    started = time.perf_counter()
    history = ttt.History(composition, results, times, **TTT_PARAMS, p_draw=args.draw_rate)
    build_s = time.perf_counter() - started
    iteration_s = []
    step = (math.inf, math.inf)
    budget_end = started + args.package_budget
    while max(step) > EPSILON and len(iteration_s) < TTT_MAX_ITERATIONS:  # History.convergence's loop
        began = time.perf_counter()
        step = history.iteration()
        iteration_s.append(time.perf_counter() - began)
        if time.perf_counter() > budget_end:
            break
    hwm = _hwm_gb()
    import duckrate

    converged = max(step) <= EPSILON
    params = dict(TTT_PARAMS, p_draw=args.draw_rate)
    # the package's schedule (accelerate false) stops after the same iteration as the package
    fit = duckrate.ttt_fit(frame, **params, epsilon=EPSILON, iterations=TTT_MAX_ITERATIONS, accelerate=False)
    needed = int(fit["iterations"].max())
    difference = None
    if args.check:
        same = duckrate.ttt_fit(frame, **params, epsilon=0.0, iterations=len(iteration_s), accelerate=False)
        curves = history.learning_curves()
        theirs = {(p, t): (g.mu, g.sigma) for p, curve in curves.items() for t, g in curve}
        mu = [theirs[key][0] for key in zip(same["player"].to_list(), same["step"].to_list())]
        sigma = [theirs[key][1] for key in zip(same["player"].to_list(), same["step"].to_list())]
        if len(theirs) != same.height:
            raise SystemExit(f"trueskillthroughtime has {len(theirs)} skills, ttt_fit {same.height}")
        difference = [
            float((same["rating"] - pl.Series(mu)).abs().max()),
            float((same["sd"] - pl.Series(sigma)).abs().max()),
        ]
    common.emit_result(
        {
            "build_s": build_s,
            "iteration_s": iteration_s,
            "converged": converged,
            "last_step": list(step),
            "duckrate_iterations": needed,
            "duckrate_converged": bool(fit["converged"].all()),
            "hwm_gb": hwm,
            "difference": difference,
        }
    )


# --------------------------------------------------------------------------------------------
# The parent
# --------------------------------------------------------------------------------------------


def _child(case: str, data: Path, args, timeout: float | None = None, child: str | None = None) -> dict:
    argv = [__file__, "--child", child or case, "--case", case, "--data", str(data)]
    argv += ["--repeats", str(args.repeats), "--draw-rate", repr(args.draw_rate)]
    argv += ["--package-budget", repr(args.package_budget)] + ([] if args.check else ["--no-check"])
    return common.run_child(argv, timeout=timeout)


def _seconds(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:,.0f}"


def _runs(seconds: list[float]) -> str:
    median = _seconds(common.median(seconds))
    return median if len(seconds) == 1 else f"{median} ({', '.join(_seconds(s) for s in seconds)})"


def _ratio(value: float) -> str:
    return f"{value:,.0f}x" if value >= 10 else f"{value:.2g}x"


def _gap(difference: list[float] | None) -> tuple[str, str]:
    if difference is None:
        return "-", "-"
    return f"{difference[0]:.1e}", f"{difference[1]:.1e}"


def run_whr_package(data: Path, args) -> dict:
    """whr's measured or extrapolated seconds, with its row of the table."""
    try:
        r = _child("whr-package", data, args, timeout=args.package_budget)
    except subprocess.TimeoutExpired:
        _log(f"  whr passed the {args.package_budget:g} s budget: extrapolating")
        p = _child("whr-package", data, args, child="whr-probe", timeout=args.package_budget + 600)
        per_sweep = sum(p["sweeps_s"]) / len(p["sweeps_s"])
        seconds = p["build_s"] + p["subset_iterations"] * per_sweep
        how = (
            f"extrapolated: build {p['build_s']:.1f} s + {p['subset_iterations']} sweeps (to its convergence on the "
            f"first {p['subset_games']:,} games) x {per_sweep:.2f} s/sweep (mean of {len(p['sweeps_s'])} on all games)"
        )
        return {
            "seconds": seconds,
            "row": [
                "whr 2.2.0",
                _seconds(seconds),
                how,
                f"{p['subset_iterations']} sweeps (subset)",
                "-",
                f"{p['hwm_gb']:.2f}",
                "-",
                "-",
            ],
            "failed": False,
            "extrapolated": True,
        }
    how = f"measured: create_games {r['build_s']:.2f} s + iterate_until_converge {r['fit_s']:.2f} s"
    return {
        "seconds": r["seconds"],
        "row": [
            "whr 2.2.0",
            _seconds(r["seconds"]),
            how,
            f"{r['iterations']} sweeps",
            "its rule",
            f"{r['hwm_gb']:.2f}",
            *_gap(r["difference"]),
        ],
        "failed": r["difference"] is not None and max(r["difference"]) > 0.1,
        "extrapolated": False,
    }


def run_ttt_package(data: Path, args) -> dict:
    r = _child("ttt-package", data, args, timeout=args.package_budget * 3 + 600)
    done = len(r["iteration_s"])
    per_iteration = sum(r["iteration_s"]) / max(done, 1)
    needed = r["duckrate_iterations"]
    if r["converged"]:
        seconds = r["build_s"] + sum(r["iteration_s"])
        how = f"measured: History {r['build_s']:.1f} s + {done} iterations {sum(r['iteration_s']):.1f} s"
        iterations = f"{done} (ttt_fit {needed})"
    else:
        seconds = r["build_s"] + needed * per_iteration
        how = (
            f"extrapolated: History {r['build_s']:.1f} s + {needed} iterations (ttt_fit's count) x "
            f"{per_iteration:.2f} s/iteration (mean of {done} run, {min(r['iteration_s']):.2f}-"
            f"{max(r['iteration_s']):.2f}); last step {max(r['last_step']):.1e}"
        )
        iterations = f"{needed} (ttt_fit's; {done} run)"
    agree = r["converged"] and done == needed
    return {
        "seconds": seconds,
        "extrapolated": not r["converged"],
        "row": [
            "trueskillthroughtime 1.1.0",
            _seconds(seconds),
            how,
            iterations,
            "yes" if r["converged"] else "-",
            f"{r['hwm_gb']:.2f}",
            *_gap(r["difference"]),
        ],
        "failed": (r["converged"] and not agree)
        or not r["duckrate_converged"]
        or (r["difference"] is not None and max(r["difference"]) > 1e-6),
    }


def run_duckrate(case: str, data: Path, args, large: bool) -> dict:
    r = _child(case, data, args)
    system = case.removesuffix("-sql")
    label = f"duckrate {system}_fit" + (" (SQL)" if case.endswith("-sql") else "")
    if "skipped" in r:
        return {
            "seconds": None,
            "label": label,
            "row": [label, "-", f"skipped: {r['skipped']}", "-", "-", "-", "-", "-"],
        }
    seconds = common.median(r["seconds"])
    target = LARGE_TARGET_SECONDS if large else TARGET_SECONDS[system]
    met = seconds <= target and (not large or r["hwm_gb"] <= LARGE_TARGET_GB)
    how = f"measured, {r['rows']:,} rows; target ≤ {target:g} s" + (f", ≤ {LARGE_TARGET_GB:g} GB" if large else "")
    if case.endswith("-sql") and r.get("python_difference") is not None:
        how += f"; SQL vs Python max |Δ| {r['python_difference']:.1e}"
    return {
        "seconds": seconds,
        "label": label,
        "history": r.get("history"),
        "row": [
            label,
            _runs(r["seconds"]),
            how + (" (met)" if met else " (NOT met)"),
            str(r["iterations"]),
            "yes" if r["converged"] else "NO",
            f"{r['hwm_gb']:.2f}",
            "-",
            "-",
        ],
        "failed": not r["converged"] or (r.get("python_difference") or 0.0) > 1e-9,
    }


HEADERS = [
    "case",
    "seconds (median; runs)",
    "how",
    "iterations",
    "converged",
    "peak GB",
    "max |Δ| rating",
    "max |Δ| sd",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--years", type=float, default=50.0)
    parser.add_argument("--draw-rate", type=float, default=0.0, help="draw probability between equals (0: tennis)")
    parser.add_argument("--repeats", type=int, help="timed runs of each duckrate case (median; 3, or 1 with --large)")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--package-budget", type=float, default=600.0, help="seconds before a package is extrapolated")
    parser.add_argument("--no-check", dest="check", action="store_false", help="skip the agreement columns")
    parser.add_argument("--large", action="store_true", help="10M games / 100k players, duckrate cases only")
    parser.add_argument("--large-games", type=int, default=10_000_000)
    parser.add_argument("--large-players", type=int, default=100_000)
    parser.add_argument("--child", choices=(*CASES, "whr-probe"), help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--generate", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate(json.loads(args.generate), args.data)
        return 0
    if args.child:
        children = {
            "whr": child_python,
            "ttt": child_python,
            "whr-sql": child_sql,
            "ttt-sql": child_sql,
            "whr-package": child_whr_package,
            "whr-probe": child_whr_probe,
            "ttt-package": child_ttt_package,
        }
        children[args.child](args)
        return 0
    if args.repeats is None:
        args.repeats = 1 if args.large else 3
    if args.repeats < 1 or args.package_budget <= 0 or not 0 <= args.draw_rate < 1:
        parser.error("--repeats and --package-budget must be positive, --draw-rate in [0, 1)")

    print(
        "\n".join(
            common.machine_lines(("duckrate", "duckdb", "polars", "numba", "numpy", "whr", "trueskillthroughtime"))
        )
    )
    try:
        with open("/proc/loadavg") as handle:
            print(f"load:     {' '.join(handle.read().split()[:3])} (1, 5, 15 min) at start; the machine is shared")
    except OSError:
        pass
    games, players = (args.large_games, args.large_players) if args.large else (args.games, args.players)
    cases = [case for case in args.cases if case in DUCKRATE_CASES] if args.large else args.cases
    data = data_file(games, players, args.years, args.draw_rate)
    results: dict[str, dict] = {}
    for case in cases:
        _log(f"{case} ...")
        try:
            if case == "whr-package":
                results[case] = run_whr_package(data, args)
            elif case == "ttt-package":
                results[case] = run_ttt_package(data, args)
            else:
                results[case] = run_duckrate(case, data, args, args.large)
        except (common.ChildFailed, subprocess.TimeoutExpired) as error:
            label = PACKAGES.get(case, case)
            _log(f"  {case} failed: {error}")
            results[case] = {
                "seconds": None,
                "failed": True,
                "label": label,
                "row": [label, "-", "FAILED (see stderr)"],
            }
            results[case]["row"] += ["-"] * (len(HEADERS) - 3)
    history = next((r["history"] for r in results.values() if r.get("history")), None)
    print()
    if history:
        print(
            f"History: {history['games']:,} games among {history['players']:,} players, {history['first']} .. "
            f"{history['last']} ({history['days']:,} days with games), {history['player_days']:,} player-days "
            f"(the rows of either fit), {history['draws']:,} draws; seed {SEED}."
        )
    else:
        print(f"History: {games:,} games among {players:,} players over {args.years:g} years; seed {SEED}.")
    print(
        f"Parameters: WHR w2 {WHR_PARAMS['w2']:g}, virtual_games {WHR_PARAMS['virtual_games']}, tolerance {EPSILON:g} "
        f"(whr: its own rule); TTT mu 0, sigma 6, beta 1, gamma 0.03, p_draw {args.draw_rate:g}, epsilon {EPSILON:g}."
    )
    failed = False
    for system in ("whr", "ttt"):
        rows = [results[case] for case in cases if case.startswith(system)]
        if not rows:
            continue
        print()
        print(common.format_table(HEADERS, [r["row"] for r in rows]))
        failed |= any(r.get("failed") for r in rows)
    packages = {case: results[case] for case in PACKAGES if case in results and results[case]["seconds"] is not None}
    if packages:
        faster = min(packages, key=lambda case: packages[case]["seconds"])
        kind = lambda case: "extrapolated" if packages[case]["extrapolated"] else "measured"  # noqa: E731
        print()
        print(
            "Speed-up, a package's seconds over duckrate's median (packages: "
            + ", ".join(f"{PACKAGES[case]} {_seconds(r['seconds'])} s, {kind(case)}" for case, r in packages.items())
            + f"); target ≥ {TARGET_RATIO:g}x the faster package, {PACKAGES[faster]}:"
        )
        for case in cases:
            if case not in DUCKRATE_CASES or results[case]["seconds"] is None:
                continue
            ours = results[case]["seconds"]
            ratios = {package: r["seconds"] / ours for package, r in packages.items()}
            own = f"{case.removesuffix('-sql')}-package"
            parts = [f"{_ratio(ratios[own])} {PACKAGES[own]} (same model)"] if own in ratios else []
            met = "met" if ratios[faster] >= TARGET_RATIO else "NOT met"
            parts.append(f"{_ratio(ratios[faster])} the faster package ({met})")
            print(f"- {results[case]['label']}: {'; '.join(parts)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
