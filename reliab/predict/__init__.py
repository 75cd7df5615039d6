"""Which node fails next: failure-risk prediction from precursor signals, evaluated honestly.

:func:`predict_failures` builds trailing-window features per node and day from the
canonical tables (:mod:`._features`), fits a piecewise-exponential Poisson hazard and a
calibrated boosted classifier (:mod:`._models`), scores them out of sample on rolling-origin
folds beside three baselines (:mod:`._evaluate`, :mod:`._metrics`) and replays draining the
top-k nodes each week (:mod:`._drain`).
"""

from reliab.predict._api import predict_failures
from reliab.predict._features import FAMILIES as PRECURSOR_FAMILIES
from reliab.predict._plots import plot_drain
from reliab.predict._result import FailureRiskResult

__all__ = ["PRECURSOR_FAMILIES", "predict_failures", "FailureRiskResult", "plot_drain"]
