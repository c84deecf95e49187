"""duckrate.win_probability and duckrate.win_matrix over Polars frames: each system's forecast against a naive
transcription of its formula written here (Glickman's papers, the trueskill package, Cowan's Model 2.1, Tang,
Wang & Jin's Elo2k and Pairwise), against the replay's own expected_a for one more match, symmetry, and the
errors."""

from __future__ import annotations

import inspect
import math

import numpy as np
import polars as pl
import pytest
import trueskill as ts
from helpers.systems import two_player_systems

import duckrate
from duckrate.evaluation.forecasts import forecasts
from duckrate.evaluation.win_probability import win_matrix_signature, win_probability_signature
from duckrate.synthetic import generate_matches

# Small chance grids keep the test quick; the forecast reads the grid size from the state.
CHANCE_PARAMS = {"grid_points": 201, "grid_max": 6.0}


@pytest.fixture(scope="module")
def matches() -> pl.DataFrame:
    games = generate_matches(1500, 24, n_leagues=2, seed=11)
    return games.with_columns(pl.col("score_a").round(1))  # wins, draws and losses (TrueSkill needs them)


@pytest.fixture(scope="module")
def pair(matches) -> tuple[str, str, str]:
    """(league, a, b): two players of one league who both played."""
    league = matches.filter(pl.col("league") == "league_1")
    names = sorted(set(league["player_a"].to_list()) | set(league["player_b"].to_list()))
    return "league_1", names[0], names[1]


def latest(replay: pl.DataFrame, league: str, player: str) -> tuple[float, float | None]:
    """A player's rating and sd after their last match, read off the replay rows directly."""
    rows = replay.filter(
        (pl.col("league") == league) & ((pl.col("player_a") == player) | (pl.col("player_b") == player))
    )
    row = rows.sort("seq").row(-1, named=True)
    side = "a" if row["player_a"] == player else "b"
    return row[f"rating_{side}_after"], row[f"sd_{side}_after"]


def one_value(frame: pl.DataFrame, column: str = "p_win_a") -> float:
    assert frame.height == 1, frame
    return frame[column][0]


# ---- independent transcriptions ---------------------------------------------------------------------------


def naive_logistic(r_a: float, r_b: float, scale: float = 400.0, advantage: float = 0.0) -> float:
    return 1.0 / (1.0 + 10.0 ** (-(r_a + advantage - r_b) / scale))


def naive_glicko(r_a, rd_a, r_b, rd_b, c=34.6, rd_max=350.0) -> float:
    """Glickman, "The Glicko system": step 1 (one period of growth), then E with g of the combined RD."""
    q = math.log(10) / 400
    rd_a, rd_b = min(math.sqrt(rd_a**2 + c**2), rd_max), min(math.sqrt(rd_b**2 + c**2), rd_max)
    g = 1 / math.sqrt(1 + 3 * q**2 * (rd_a**2 + rd_b**2) / math.pi**2)
    return 1 / (1 + 10 ** (-g * (r_a - r_b) / 400))


def naive_glicko2(r_a, rd_a, r_b, rd_b) -> float:
    """Glickman, "Example of the Glicko-2 system", steps 2-3 with φ = sqrt(φ_a² + φ_b²)."""
    mu_a, mu_b = (r_a - 1500) / 173.7178, (r_b - 1500) / 173.7178
    phi = math.hypot(rd_a / 173.7178, rd_b / 173.7178)
    g = 1 / math.sqrt(1 + 3 * phi**2 / math.pi**2)
    return 1 / (1 + math.exp(-g * (mu_a - mu_b)))


def naive_trueskill(mu_a, sigma_a, mu_b, sigma_b, beta, tau, draw_probability) -> tuple[float, float]:
    """The trueskill package's draw margin and normal CDF (its scipy backend: the default approximates Φ to
    ~1e-7); τ² added to both variances before the game, as its rate() does."""
    env = ts.TrueSkill(beta=beta, tau=tau, draw_probability=draw_probability, backend="scipy")  # exact Φ, Φ⁻¹
    epsilon = ts.calc_draw_margin(draw_probability, 2, env)
    c = math.sqrt(2 * beta**2 + sigma_a**2 + sigma_b**2 + 2 * tau**2)
    delta = mu_a - mu_b
    p_win = env.cdf((delta - epsilon) / c)
    p_draw = env.cdf((epsilon - delta) / c) - env.cdf((-epsilon - delta) / c)
    return p_win + 0.5 * p_draw, p_draw


def state_values(state: pl.DataFrame, league: str, player: str) -> np.ndarray:
    row = state.filter((pl.col("kind") == "player") & (pl.col("league") == league) & (pl.col("player") == player))
    return np.array(row["value"][0])


def naive_chance(state: pl.DataFrame, league: str, a: str, b: str, beta=0.8, grid_points=201, grid_max=6.0) -> float:
    """Cowan, Model 2.1: L = Σ_j Σ_k ρA(x_j) ρB(x_k) Λ(x_j, x_k), Λ(x, y) = (1-β)/2 + β/(1 + e^-(x-y))."""
    x = np.linspace(-grid_max, grid_max, grid_points)
    rho_a, rho_b = state_values(state, league, a)[2:], state_values(state, league, b)[2:]
    luck = (1 - beta) / 2 + beta / (1 + np.exp(-(x[:, None] - x[None, :])))
    return float(rho_a @ luck @ rho_b)


def naive_elo2k(state: pl.DataFrame, league: str, a: str, b: str, dim: int = 4) -> float:
    """Tang, Wang & Jin, eq. (7): σ(U_a·V_b - U_b·V_a)."""
    va, vb = state_values(state, league, a), state_values(state, league, b)
    u_a, v_a, u_b, v_b = va[:dim], va[dim:], vb[:dim], vb[dim:]
    return 1 / (1 + math.exp(-(u_a @ v_b - u_b @ v_a)))


def naive_pairwise(matches: pl.DataFrame, a: str, b: str) -> float:
    """Tang, Wang & Jin, eq. (8), counted from the matches: (5 + wins of a over b) / (10 + their games)."""
    forward = matches.filter((pl.col("player_a") == a) & (pl.col("player_b") == b))["score_a"].sum()
    backward = matches.filter((pl.col("player_a") == b) & (pl.col("player_b") == a))["score_a"]
    games = matches.filter(
        ((pl.col("player_a") == a) & (pl.col("player_b") == b))
        | ((pl.col("player_a") == b) & (pl.col("player_b") == a))
    ).height
    return (5 + forward + (backward.len() - backward.sum())) / (10 + games)


# ---- the formulas -----------------------------------------------------------------------------------------


def test_bt_fit_is_the_logistic_of_the_rating_gap_with_the_home_advantage_on_request(matches, pair):
    league, a, b = pair
    fit = duckrate.bt_fit(matches, prior_sd=300.0, home_advantage=True)
    rows = fit.filter(pl.col("league") == league)
    r_a, r_b = (rows.filter(pl.col("player") == name)["rating"][0] for name in (a, b))
    assert one_value(duckrate.win_probability(fit, a, b, league=league)) == pytest.approx(
        naive_logistic(r_a, r_b), abs=1e-14
    )
    home = rows["home_advantage"][0]
    assert home != 0.0
    with_home = duckrate.win_probability(fit, a, b, league=league, side_a_advantage=True)
    assert one_value(with_home) == pytest.approx(naive_logistic(r_a, r_b, advantage=home), abs=1e-14)
    assert one_value(with_home, "system") == "bt"


@pytest.mark.parametrize("params", [{}, {"scale": 300.0, "advantage": 35.0}])
def test_elo_is_its_logistic_with_its_scale_and_advantage(matches, pair, params):
    league, a, b = pair
    replay = duckrate.elo(matches, k=24, **params)
    (r_a, _), (r_b, _) = latest(replay, league, a), latest(replay, league, b)
    got = one_value(duckrate.win_probability(replay, a, b, system="elo", **params))
    assert got == pytest.approx(
        naive_logistic(r_a, r_b, params.get("scale", 400.0), params.get("advantage", 0.0)), abs=1e-14
    )


@pytest.mark.parametrize("params", [{}, {"c": 0.0}, {"c": 80.0, "rd_max": 150.0}])
def test_glicko_is_glickmans_expected_score_after_one_period_of_growth(matches, pair, params):
    league, a, b = pair
    replay = duckrate.glicko(matches)
    (r_a, rd_a), (r_b, rd_b) = latest(replay, league, a), latest(replay, league, b)
    got = one_value(duckrate.win_probability(replay, a, b, system="glicko", **params))
    assert got == pytest.approx(naive_glicko(r_a, rd_a, r_b, rd_b, **params), abs=1e-14)


def test_glicko2_is_glickmans_expected_score_on_the_glicko2_scale(matches, pair):
    league, a, b = pair
    replay = duckrate.glicko2(matches)
    (r_a, rd_a), (r_b, rd_b) = latest(replay, league, a), latest(replay, league, b)
    got = one_value(duckrate.win_probability(replay, a, b, system="glicko2"))
    assert got == pytest.approx(naive_glicko2(r_a, rd_a, r_b, rd_b), abs=1e-14)


@pytest.mark.parametrize(
    "params",
    [{}, {"beta": 3.0, "tau": 0.0, "draw_probability": 0.3}, {"draw_probability": 0.0}],
)
def test_trueskill_is_win_plus_half_draw_from_the_trueskill_package(matches, pair, params):
    league, a, b = pair
    replay = duckrate.trueskill(matches)
    (mu_a, s_a), (mu_b, s_b) = latest(replay, league, a), latest(replay, league, b)
    full = {"beta": 25 / 6, "tau": 25 / 300, "draw_probability": 0.1, **params}
    expected, draw = naive_trueskill(mu_a, s_a, mu_b, s_b, full["beta"], full["tau"], full["draw_probability"])
    got = duckrate.win_probability(replay, a, b, system="trueskill", **params)
    assert one_value(got) == pytest.approx(expected, abs=1e-12)
    assert one_value(got, "p_draw") == pytest.approx(draw, abs=1e-12)


def test_chance_is_the_posterior_predictive_of_model_2_1_from_the_state(matches, pair):
    league, a, b = pair
    state = duckrate.replay_state("chance", matches, **CHANCE_PARAMS)
    got = one_value(duckrate.win_probability(state, a, b))
    assert got == pytest.approx(naive_chance(state, league, a, b), abs=1e-12)


def test_elo2k_is_the_sigmoid_of_the_vector_products_from_the_state(matches, pair):
    league, a, b = pair
    state = duckrate.replay_state("elo2k", matches)
    assert one_value(duckrate.win_probability(state, a, b)) == pytest.approx(
        naive_elo2k(state, league, a, b), abs=1e-14
    )


def test_pairwise_is_the_shrunk_win_rate_counted_from_the_matches(matches):
    state = duckrate.replay_state("pairwise", matches)
    games = matches.filter(pl.col("league") == "league_1")
    met = games.group_by("player_a", "player_b").len().sort("len", "player_a", "player_b", descending=True)
    a, b = met.row(0)[:2]  # the pair that met most often
    got = duckrate.win_probability(state, [a, b], [b, a], league="league_1")
    assert got["p_win_a"].to_list() == pytest.approx(
        [naive_pairwise(games, a, b), naive_pairwise(games, b, a)], abs=1e-15
    )
    early = games.head(40)  # in a short history some pairs never met: P = ½
    players = sorted(set(early["player_a"]) | set(early["player_b"]))
    pairs = {tuple(sorted(row)) for row in early.select("player_a", "player_b").iter_rows()}
    never = next((x, y) for x in players for y in players if x < y and (x, y) not in pairs)
    assert one_value(duckrate.win_probability(duckrate.replay_state("pairwise", early), *never)) == 0.5


# ---- the replay's own forecast for one more match -----------------------------------------------------------


NEXT_MATCH_CASES = [
    ("elo", {"k": 24.0, "scale": 300.0, "advantage": 35.0}, {"scale": 300.0, "advantage": 35.0}, "replay"),
    ("glicko", {"c": 50.0}, {"c": 50.0}, "replay"),
    ("glicko2", {}, {}, "replay"),
    ("trueskill", {"beta": 3.5, "draw_probability": 0.2}, {"beta": 3.5, "draw_probability": 0.2}, "replay"),
    ("chance", CHANCE_PARAMS, {}, "state"),
    ("elo2k", {}, {}, "state"),
    ("pairwise", {}, {}, "state"),
]


@pytest.mark.parametrize("system, replay_params, forecast_params, source", NEXT_MATCH_CASES, ids=lambda v: str(v)[:20])
def test_the_forecast_is_the_replays_expected_a_for_one_more_match(
    matches, pair, system, replay_params, forecast_params, source
):
    """Append a match between the two to the history: the replay's expected_a for it is win_probability over the
    history without it (the replay table, or the saved state for the systems that forecast from it)."""
    league, a, b = pair
    last = matches["played_at"].max()
    extra = pl.DataFrame(
        {
            "match_id": [10**9],
            "played_at": [last],
            "league": [league],
            "player_a": [a],
            "player_b": [b],
            "score_a": [1.0],
        },
        schema=matches.schema,
    )
    replay = getattr(duckrate, system)(pl.concat([matches, extra]), **replay_params)
    expected_a = replay.filter(pl.col("match_id") == 10**9)["expected_a"][0]
    if source == "replay":
        table = getattr(duckrate, system)(matches, **replay_params)
        got = duckrate.win_probability(table, a, b, system=system, **forecast_params)
    else:
        got = duckrate.win_probability(duckrate.replay_state(system, matches, **replay_params), a, b)
    assert one_value(got) == pytest.approx(expected_a, abs=1e-12 if system == "chance" else 1e-15)


def test_the_leaderboard_gives_what_the_replay_gives(matches):
    replays = pl.concat(
        [
            duckrate.elo(matches).with_columns(system=pl.lit("elo")),
            duckrate.glicko(matches).with_columns(system=pl.lit("glicko")),
        ],
        how="diagonal",
    )
    board = duckrate.leaderboard(replays)
    for system in ("elo", "glicko"):
        from_board = duckrate.win_matrix(board, top=6, system=system)
        from_replays = duckrate.win_matrix(replays, top=6, system=system)
        assert from_board.equals(from_replays)
        assert from_board["system"].unique().to_list() == [system]


# ---- the matrix ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("system", two_player_systems(), ids=lambda system: system.name)
def test_matrix_is_symmetric_ranked_and_without_diagonal(matches, system):
    params = system.presets[0].kwargs()
    if system.forecast.from_state:
        table, kwargs = duckrate.replay_state(system.name, matches, **params), {}
    else:
        # the forecast's own parameters as the replay had them (e.g. TTT's p_draw)
        uses = {name: params[name] for name in system.forecast.uses if name in params}
        table, kwargs = system.frame(matches, **params), {"system": system.name, **uses}
    matrix = duckrate.win_matrix(table, top=5, **kwargs)
    assert matrix.height == 2 * 5 * 4  # two leagues, 5 × 4 ordered pairs each
    assert (matrix["player_a"] != matrix["player_b"]).all()
    mirrored = matrix.join(
        matrix.select(
            "league",
            pl.col("player_a").alias("player_b"),
            pl.col("player_b").alias("player_a"),
            pl.col("p_win_a").alias("p_win_b"),
        ),
        on=["league", "player_a", "player_b"],
    )
    assert mirrored.height == matrix.height
    assert (mirrored["p_win_a"] + mirrored["p_win_b"] - 1.0).abs().max() < 1e-12
    ranks = matrix.select("league", "player_a", "rank_a", "rating_a").unique().sort("league", "rank_a")
    for league in ("league_1", "league_2"):
        part = ranks.filter(pl.col("league") == league)
        assert part["rank_a"].to_list() == [1, 2, 3, 4, 5]
        assert part["rating_a"].to_list() == sorted(part["rating_a"].to_list(), reverse=True)
    if system.name in ("trueskill", "ttt"):  # the two-player models with draws
        assert matrix["p_draw"].is_not_null().all() and (matrix["p_draw"] > 0).all()
    else:
        assert matrix["p_draw"].is_null().all()


def test_matrix_ties_are_broken_by_name_and_top_takes_the_best():
    ratings = pl.DataFrame(
        {
            "player": ["d", "c", "b", "a"],
            "rating": [1500.0, 1600.0, 1600.0, 1400.0],
            "sd": [50.0] * 4,
            "method": ["newton"] * 4,
        }
    )
    matrix = duckrate.win_matrix(ratings, top=3)
    ranked = matrix.select("player_a", "rank_a").unique().sort("rank_a")
    assert ranked["player_a"].to_list() == ["b", "c", "d"]
    assert matrix["league"].is_null().all() and matrix["system"].unique().to_list() == ["bt"]


# ---- errors ----------------------------------------------------------------------------------------------


def test_unknown_player_names_the_player_the_table_and_the_league(matches, pair):
    league, a, _ = pair
    replay = duckrate.elo(matches)
    with pytest.raises(
        duckrate.DuckrateInputError, match=rf"player 'nobody' is not in table 'ratings' \(league '{league}'\)"
    ):
        duckrate.win_probability(replay, a, "nobody", system="elo", league=league)
    with pytest.raises(
        duckrate.DuckrateInputError, match=r"no league of table 'ratings' holds both .*league 'league_1' lacks 'nobody'"
    ):
        duckrate.win_probability(replay, a, "nobody", system="elo")


def test_a_replay_table_needs_system(matches, pair):
    _, a, b = pair
    with pytest.raises(
        duckrate.DuckrateInputError,
        match=r"a replay table without a system column: say which system made it with system := ",
    ):
        duckrate.win_probability(duckrate.elo(matches), a, b)


def test_several_systems_need_a_choice_and_a_missing_one_is_named(matches, pair):
    _, a, b = pair
    board = duckrate.leaderboard(
        pl.concat(
            [
                duckrate.elo(matches).with_columns(system=pl.lit("elo")),
                duckrate.glicko(matches).with_columns(system=pl.lit("glicko")),
            ]
        )
    )
    with pytest.raises(duckrate.DuckrateInputError, match=r"holds several systems \('elo', 'glicko'\); choose one"):
        duckrate.win_probability(board, a, b)
    with pytest.raises(duckrate.DuckrateInputError, match=r"holds no rows of system 'glicko2'"):
        duckrate.win_probability(board, a, b, system="glicko2")


def test_unsupported_systems_and_wrong_tables_are_errors_that_say_what_to_use(matches, pair):
    _, a, b = pair
    replay = duckrate.elo(matches)
    with pytest.raises(
        duckrate.DuckrateInputError, match=r"system 'elo_mmr' has no two-player forecast here; supported: 'bt'"
    ):
        duckrate.win_probability(replay, a, b, system="elo_mmr")
    with pytest.raises(
        duckrate.DuckrateInputError,
        match=r"the chance forecast needs each player's posterior on the grid.*chance_state",
    ):
        duckrate.win_probability(duckrate.chance(matches, **CHANCE_PARAMS), a, b, system="chance")
    with pytest.raises(duckrate.DuckrateInputError, match=r"the pairwise forecast needs each pair's win counts"):
        duckrate.win_probability(
            duckrate.leaderboard(duckrate.pairwise(matches).with_columns(system=pl.lit("pairwise"))), a, b
        )
    with pytest.raises(
        duckrate.DuckrateInputError, match=r"is a saved elo state; .*pass the replay table or its leaderboard"
    ):
        duckrate.win_probability(duckrate.replay_state("elo", matches), a, b)


def test_parameters_that_do_not_apply_and_bad_values_are_errors(matches, pair):
    _, a, b = pair
    replay = duckrate.elo(matches)
    with pytest.raises(
        duckrate.DuckrateInputError,
        match=r"parameter\(s\) beta do not apply to the elo forecast; it takes scale, advantage",
    ):
        duckrate.win_probability(replay, a, b, system="elo", beta=2.0)
    with pytest.raises(duckrate.DuckrateInputError, match=r"parameter scale = -1.0; expected a finite scale > 0"):
        duckrate.win_probability(replay, a, b, system="elo", scale=-1.0)
    with pytest.raises(duckrate.DuckrateInputError, match=r"uses the parameters the state was saved with"):
        duckrate.win_probability(duckrate.replay_state("elo2k", matches), a, b, scale=200.0)
    with pytest.raises(duckrate.DuckrateInputError, match=r"side_a_advantage := true needs the home_advantage column"):
        duckrate.win_probability(duckrate.bt_fit(matches, prior_sd=300.0), a, b, side_a_advantage=True)
    with pytest.raises(duckrate.DuckrateInputError, match=r"player_a and player_b are both"):
        duckrate.win_probability(replay, a, a, system="elo")
    with pytest.raises(duckrate.DuckrateInputError, match=r"player_a has 2 names and player_b 3"):
        duckrate.win_probability(replay, [a, b], [a, b, a], system="elo")
    with pytest.raises(duckrate.DuckrateInputError, match=r"table 'ratings' has no league 'nowhere'"):
        duckrate.win_matrix(replay, system="elo", league="nowhere")
    with pytest.raises(duckrate.DuckrateInputError, match=r"missing column\(s\) 'rating_a_after'"):
        duckrate.win_probability(matches.with_columns(seq=pl.lit(1)), a, b, system="elo")


# ---- the registries ----------------------------------------------------------------------------------------


def test_every_replay_system_has_a_forecast():
    assert {system.name for system in two_player_systems()} <= set(forecasts())


@pytest.mark.parametrize(
    "function, signature",
    [(duckrate.win_probability, win_probability_signature), (duckrate.win_matrix, win_matrix_signature)],
)
def test_python_functions_take_the_signatures_parameters(function, signature):
    """The Python keyword arguments are the SQL macro's named parameters, with the same defaults: the
    function's own by name, every forecast's through ``**forecast_parameters`` (each checked by name)."""
    parameters = inspect.signature(function).parameters
    named = {
        name: p.default
        for name, p in parameters.items()
        if name not in ("ratings", "player_a", "player_b") and p.kind is not inspect.Parameter.VAR_KEYWORD
    }
    own = {p.name: p.default for p in signature().parameters if p.name in named}
    assert named == own
    assert [p.kind for p in parameters.values()][-1] is inspect.Parameter.VAR_KEYWORD
    forecast_names = {p.name for p in signature().parameters} - set(named)
    assert forecast_names >= {"side_a_advantage", "scale", "advantage", "c", "rd_max", "beta", "tau"}


def test_an_empty_table_gives_an_empty_matrix_and_no_player(matches):
    empty = duckrate.elo(matches).head(0)
    assert duckrate.win_matrix(empty, system="elo").height == 0
    with pytest.raises(duckrate.DuckrateInputError, match=r"player 'a' is not in table 'ratings': it has no rows"):
        duckrate.win_probability(empty, "a", "b", system="elo")
