"""The luck-aware grid system's independent references for the tests and the golden file: a plain-numpy
replay written from Cowan's formulas (eq. 1, 5, 6, 8) with dense matrices, eq. (4) by quadrature, and the
small frames and random histories the tests replay."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from scipy.special import ndtr

DEFAULTS = {
    "beta": 0.8,
    "prior_sd": 0.7,
    "drift_sd": 0.03,
    "grid_points": 1001,
    "grid_max": 7.0,
    "sigmoid": "logistic",
    "kernel": "gaussian",
    "algorithm": "fast",
}
SCALE = 400.0 / math.log(10.0)

#: NumPy 2's name for the trapezoid rule; ``trapz`` before it (NumPy 1.26, the oldest supported).
_trapezoid = getattr(np, "trapezoid", None) or np.trapz


def frame_of(a, b, scores, leagues=None, played_at=None):
    n = len(a)
    data = {
        "match_id": list(range(1, n + 1)),
        "played_at": list(played_at if played_at is not None else range(n)),
        "player_a": [f"p{i}" for i in a],
        "player_b": [f"p{i}" for i in b],
        "score_a": [float(s) for s in scores],
    }
    schema = {
        "match_id": pl.Int64,
        "played_at": pl.Int64,
        "player_a": pl.Utf8,
        "player_b": pl.Utf8,
        "score_a": pl.Float64,
    }
    if leagues is not None:
        data["league"], schema["league"] = list(leagues), pl.Utf8
    return pl.DataFrame(data, schema=schema)


def random_history(seed, n=200, n_players=12, scores=(0.0, 0.5, 1.0), leagues=("chess", "go", None)):
    """Matches in shuffled row order, with ties in played_at broken by match_id (string ids)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    frame = pl.DataFrame(
        {
            "match_id": [f"m{i:05d}" for i in rng.permutation(n)],
            "played_at": rng.integers(0, max(n // 3, 1), n).tolist(),
            "player_a": [f"p{i}" for i in a],
            "player_b": [f"p{i}" for i in b],
            "score_a": rng.choice(scores, n).astype(float).tolist(),
            "league": [leagues[i] for i in rng.integers(0, len(leagues), n)],
        },
        schema={
            "match_id": pl.Utf8,
            "played_at": pl.Int64,
            "player_a": pl.Utf8,
            "player_b": pl.Utf8,
            "score_a": pl.Float64,
            "league": pl.Utf8,
        },
    )
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


RANDOM_PRIORS = pl.DataFrame(
    {
        "player": ["p0", "p1", "p1", "p2", "p3", "nobody"],
        "rating": [1800.0, 1300.0, 1650.0, 2300.0, 700.0, 1900.0],
        "sd": [40.0, None, 90.0, 15.0, 250.0, 10.0],
        "league": [None, None, "chess", "go", None, None],
    },
    schema={"player": pl.Utf8, "rating": pl.Float64, "sd": pl.Float64, "league": pl.Utf8},
)


def reference_model(**params):
    """Grid, luck and kernel matrices of a parameter set, as the paper writes them."""
    p = {**DEFAULTS, **params}
    n, big_m, beta = p["grid_points"], p["grid_max"], p["beta"]
    x = -big_m + 2 * big_m * np.arange(n) / (n - 1)
    d = np.subtract.outer(x, x)  # d[i, k] = x_i - x_k

    def sigmoid(values):
        if p["sigmoid"] == "logistic":
            return 1.0 / (1.0 + np.exp(-values))
        if p["sigmoid"] == "normal":
            return ndtr(values / (4.0 / math.sqrt(2.0 * math.pi)))
        return np.where(values >= 0, 1.0 - 0.5 * np.exp(-np.abs(values) / 2.0), 0.5 * np.exp(-np.abs(values) / 2.0))

    lam = (1 - beta) / 2 + beta * sigmoid(d)  # Λ(x_i, x_k)
    lam_t = (1 - beta) / 2 + beta * sigmoid(-d)  # Λ(x_k, x_i) = 1 - Λ(x_i, x_k)
    s = p["drift_sd"]
    if s == 0:
        kernel = np.eye(n)
    elif p["kernel"] == "gaussian":
        kernel = np.exp(-(d**2) / (2 * s * s))
    else:
        kernel = np.exp(-np.abs(d) / (s / math.sqrt(2.0)))
    return p, x, lam, lam_t, kernel


def reference_prior(x, mean, sd):
    log_w = -((x - mean) ** 2) / (2 * sd * sd)
    w = np.exp(log_w - log_w.max())
    return w / w.sum()


def reference_chance(frame, priors=None, **params):
    """match_id -> every computed column, and (league, player) -> final ρ."""
    p, x, lam, lam_t, kernel = reference_model(**params)
    general, specific = {}, {}
    for row in priors.to_dicts() if priors is not None else []:
        target = general if row.get("league") is None else specific
        target[(row.get("league"), row["player"])] = (row["rating"], row.get("sd"))
    states, played, result, factors_of = {}, {}, {}, {}

    def state(league, player):
        if (league, player) not in states:
            rating, sd = specific.get((league, player), general.get((None, player), (1500.0, None)))
            sd = p["prior_sd"] if sd is None else sd / SCALE
            states[(league, player)] = reference_prior(x, (rating - 1500.0) / SCALE, sd)
        return states[(league, player)]

    def display(rho):
        mean = rho @ x
        return 1500.0 + SCALE * mean, SCALE * math.sqrt(rho @ (x - mean) ** 2)

    for r in sorted(frame.to_dicts(), key=lambda r: (r["played_at"], r["match_id"])):
        league, theta = r.get("league"), r["score_a"]
        rho_a, rho_b = state(league, r["player_a"]), state(league, r["player_b"])
        if theta not in factors_of:
            factors_of[theta] = lam**theta * lam_t ** (1 - theta)  # [i, k]: Λ(x_i, x_k)^θ Λ(x_k, x_i)^(1-θ)
        factor = factors_of[theta]
        new = []
        for rho, like in ((rho_a, factor @ rho_b), (rho_b, rho_a @ factor)):
            posterior_ = rho * like / (rho @ like)
            drifted = kernel @ posterior_
            new.append(drifted / drifted.sum())
        before = display(rho_a) + display(rho_b)
        states[(league, r["player_a"])], states[(league, r["player_b"])] = new
        after = display(new[0]) + display(new[1])
        played[league] = played.get(league, 0) + 1
        result[r["match_id"]] = {
            "league": league,
            "seq": played[league],
            "expected_a": float(rho_a @ lam @ rho_b),
            "rating_a_before": before[0],
            "rating_b_before": before[2],
            "sd_a_before": before[1],
            "sd_b_before": before[3],
            "rating_a_after": after[0],
            "rating_b_after": after[2],
            "sd_a_after": after[1],
            "sd_b_after": after[3],
        }
    return result, states


def eq_4(m, sigma, beta, y=2000.0):
    """m' - m of Figure 3.1 (eq. 4, display scale): A ~ N(m, σ²) beats B = δ_y.

    Written as E[(x - m) Λ] / E[Λ], the same ratio as eq. (4) without subtracting m from a number near m,
    over z = (x - m)/σ by the trapezoid rule (h = 0.002 on [-40, 40]): the integrands are analytic and decay
    like e^(-z²/2), so the rule's error is far below double precision.
    """
    z = np.linspace(-40.0, 40.0, 40001)
    weight = np.exp(-0.5 * z * z) / (1.0 + 10.0 ** ((y - (m + sigma * z)) / 400.0))
    first, mass = _trapezoid(weight * z, z), _trapezoid(weight, z)
    return float(beta * sigma * first / ((1.0 - beta) / 2.0 * math.sqrt(2.0 * math.pi) + beta * mass))
