"""Batch fits over a whole matches table (Bradley-Terry, Whole-History Rating, TrueSkill Through Time) and the model tests: numba kernels
+ a Polars wrapper.

The registry lines: each fit's entry added to :data:`duckrate.core.registry.FITS`, each test's to
:data:`duckrate.core.registry.TESTS`, and the replays of the whole-history fits (honest forecasts: each match
from the fit over the matches before it) to :data:`duckrate.core.registry.SYSTEMS`, after the systems of
:mod:`duckrate.systems` (whose layer they build on).
"""

from duckrate.core.registry import FITS, SYSTEMS, TESTS
from duckrate.fits.bradley_terry import BT_FIT, bt_fit
from duckrate.fits.bradley_terry.solve import bt_theta
from duckrate.fits.bt_lr_test import BT_LR_TEST, bt_lr_test
from duckrate.fits.through_time import TTT_FIT, TTT_TEAM_FIT, ttt_fit, ttt_team_fit
from duckrate.fits.through_time.replay import TTT, ttt
from duckrate.fits.whole_history import WHR_FIT, whr_fit
from duckrate.fits.whole_history.replay import WHR, whr

FITS.add(BT_FIT)
FITS.add(WHR_FIT)
FITS.add(TTT_FIT)
FITS.add(TTT_TEAM_FIT)
TESTS.add(BT_LR_TEST)
SYSTEMS.add(WHR)
SYSTEMS.add(TTT)

__all__ = [
    "BT_FIT",
    "BT_LR_TEST",
    "TTT",
    "TTT_FIT",
    "TTT_TEAM_FIT",
    "WHR",
    "WHR_FIT",
    "bt_fit",
    "bt_lr_test",
    "bt_theta",
    "ttt",
    "ttt_fit",
    "ttt_team_fit",
    "whr",
    "whr_fit",
]
