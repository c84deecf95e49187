"""Bradley-Terry batch fits: maximum likelihood, ridge and MAP with per-player Gaussian priors, with intervals.

- :mod:`.fit`: ``bt_fit`` and :data:`BT_FIT` (parameters, validation, output);
- :mod:`.league`: one league's fit and its intervals;
- :mod:`.pairs`: games aggregated into per-pair sufficient statistics;
- :mod:`.contextual`: the row-level model with covariates (style control) and its Newton steps;
- :mod:`.reweight`: inverse-pair-frequency game weights (adaptive sampling);
- :mod:`.model`: the log-likelihood, gradient and Hessian products over pairs;
- :mod:`.solve`, :mod:`.newton`, :mod:`.mm`: the solvers (Newton-CG; the MAP paper's MM iteration);
- :mod:`.existence`: whether the MLE exists (Zermelo's condition), with the components named;
- :mod:`.uncertainty`, :mod:`.propagation`: the sd (dense or sparse observed information, bootstrap);
- :mod:`.sandwich`: the robust H⁻¹JH⁻¹ covariance, clustered or per game;
- :mod:`.solution`: a fit's result.
"""

from duckrate.fits.bradley_terry.fit import BT_FIT, OUTPUT_SCHEMA, bt_fit, fit_columns

__all__ = ["BT_FIT", "OUTPUT_SCHEMA", "bt_fit", "fit_columns"]
