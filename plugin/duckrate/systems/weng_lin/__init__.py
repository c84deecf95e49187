"""The Weng-Lin online ranking models (Weng & Lin, "A Bayesian Approximation Method for Online Ranking",
JMLR 12 (2011)) as numba kernels that reproduce ``openskill`` 6.2.0: Plackett-Luce (Algorithm 4),
Bradley-Terry with full and partial pairing (Algorithms 1 and 2) and Thurstone-Mosteller with full and
partial pairing (Algorithm 3).

One match at a time: :func:`rate_match` (ratings after) and :func:`predict_match` (forecasts before), over
local arrays of the match's players, teams contiguous; the settings vector comes from
:func:`settings_array`. What openskill does that one might not expect is listed in
:mod:`duckrate.systems.weng_lin.common`.
"""

from duckrate.systems.weng_lin.common import (
    BRADLEY_TERRY_FULL,
    BRADLEY_TERRY_PART,
    MODEL_CODES,
    N_SETTINGS,
    PHI_VIA_ERFC,
    PLACKETT_LUCE,
    S_BALANCE,
    S_BETA,
    S_EPSILON,
    S_KAPPA,
    S_LIMIT_SIGMA,
    S_MARGIN,
    S_TAU,
    S_WEIGHT_HI,
    S_WEIGHT_LO,
    S_WINDOW_SIZE,
    THURSTONE_MOSTELLER_FULL,
    THURSTONE_MOSTELLER_PART,
    settings_array,
)
from duckrate.systems.weng_lin.predict import predict_draw, predict_match, predict_rank, predict_win
from duckrate.systems.weng_lin.rate import rate_match

__all__ = [
    "BRADLEY_TERRY_FULL",
    "BRADLEY_TERRY_PART",
    "MODEL_CODES",
    "N_SETTINGS",
    "PHI_VIA_ERFC",
    "PLACKETT_LUCE",
    "S_BALANCE",
    "S_BETA",
    "S_EPSILON",
    "S_KAPPA",
    "S_LIMIT_SIGMA",
    "S_MARGIN",
    "S_TAU",
    "S_WEIGHT_HI",
    "S_WEIGHT_LO",
    "S_WINDOW_SIZE",
    "THURSTONE_MOSTELLER_FULL",
    "THURSTONE_MOSTELLER_PART",
    "predict_draw",
    "predict_match",
    "predict_rank",
    "predict_win",
    "rate_match",
    "settings_array",
]
