"""The Dask engine: rows in a Dask array or DataFrame, scored on the cluster.

Nothing is collected into this process: every task scores one row partition
with the shared primitives and only sums come back (``_collections``); the
selector's splits are drawn per partition and fitted by the library's own Dask
booster (``_fit``, ``_codes``; the fit retried when a worker is lost:
``_fits``), and the refit curve's refits predict in their partitions
(``_curve``). Which Dask boosters exist and what they
can do is read from the reader registry (``Library.engines["dask"]``). Dask is
an optional extra (``python -m pip install ".[dask]"``), imported only when a
Dask collection is given.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from ..._readers import default_estimator, engine_twin
from ..._stats._cutoff import warn_if_empty
from .._base import Engine
from ._collections import is_array, is_dask_collection, predecomp_dask, tree_inner_dask
from ._fit import ENGINE, DaskRun, check_input, meta

__all__ = ["DASK", "DaskEngine"]


class DaskEngine(Engine):
    """Dask arrays and DataFrames (X, y and the weights partitioned alike)."""

    name = ENGINE

    def accepts(self, obj) -> bool:
        """Whether ``obj`` is a Dask collection (Dask is not imported to tell)."""
        return is_dask_collection(obj)

    def refusal(self, what: str) -> str:
        """Say that ``what`` would compute a Dask collection into this process."""
        return (
            f"{what} does not take Dask collections yet: it would compute them "
            "into this process. tree_inner and predecomp score Dask arrays and "
            "DataFrames on the cluster (docs/scaling-out.md); elsewhere pass "
            "in-memory data (.compute() a sample that fits)."
        )

    def default_estimator(self, classifier: bool, random_state, n_rows=None):
        """Build the in-memory default's Dask twin, with XGBoost's 256 bins.

        ``n_rows`` is not used: a Dask DataFrame's rows are not known without
        computing, and a Dask array's and a DataFrame's defaults must agree.
        The bins matter on a few thousand rows, where in-memory data fit.
        """
        del n_rows
        return engine_twin(ENGINE, default_estimator(classifier, random_state))

    def predecomp(self, reader, X, *, return_bias):
        """Return a lazy Dask array of PreDecomp values, partitioned like X."""
        return predecomp_dask(reader, X, return_bias=return_bias)

    def tree_inner(self, reader, X, y, *, verbose=0, **options):
        """Scores from per-partition sums; ``per_sample`` stays a lazy array.

        ``options`` are :meth:`Engine.tree_inner`'s (``attribution``,
        ``sample_weight``, ``per_iteration``, ``per_sample``). ``verbose`` is
        not used: the cluster's dashboard shows the tasks.
        """
        return tree_inner_dask(reader, X, y, **options)

    def check_input(self, plan):
        """Check the collections, the booster and the settings (see ``_fit``)."""
        return check_input(plan, self.default_estimator)

    def prepare_splits(self, plan, checked, feature_groups):
        """Draw the splits per partition and check their rows on the cluster."""
        return DaskRun(plan, checked, feature_groups)

    def transform(self, selector, X):
        """Keep the selected columns, lazily: the same kind of collection."""
        validate_data(selector, meta(X), skip_check_array=True, reset=False)
        mask = selector.get_support()
        warn_if_empty(mask, stacklevel=3)
        columns = np.flatnonzero(mask)
        if is_array(X):
            return X[:, columns]
        return X[[X.columns[i] for i in columns]]


#: The one instance the dispatch uses.
DASK = DaskEngine()
