"""Batch fits over a whole matches table (Bradley-Terry, Whole-History Rating, TrueSkill Through Time) and the model tests: numba kernels
+ a Polars wrapper.

The registry lines: each fit's entry added to :data:`duckrate.core.registry.FITS`, each test's to
:data:`duckrate.core.registry.TESTS`.
"""

from duckrate.core.registry import FITS, TESTS
from duckrate.fits.bradley_terry import BT_FIT, bt_fit
from duckrate.fits.bradley_terry.solve import bt_theta
from duckrate.fits.bt_lr_test import BT_LR_TEST, bt_lr_test
from duckrate.fits.through_time import TTT_FIT, ttt_fit
from duckrate.fits.whole_history import WHR_FIT, whr_fit

FITS.add(BT_FIT)
FITS.add(WHR_FIT)
FITS.add(TTT_FIT)
TESTS.add(BT_LR_TEST)

__all__ = ["BT_FIT", "BT_LR_TEST", "TTT_FIT", "WHR_FIT", "bt_fit", "bt_lr_test", "bt_theta", "ttt_fit", "whr_fit"]
