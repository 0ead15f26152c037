"""The in-memory engine: rows this process holds, indexed, fitted and scored here.

X may be anything a booster takes in memory (numpy, pandas, polars, scipy
sparse, ``xgboost.DMatrix``). PreDecomp and TreeInner run the shared primitives
over row chunks. The selector's splits are index pairs (:mod:`._splits`),
fitted and scored by :func:`._crossfit.run_splits` in threads or joblib
workers, as many at once and with as many threads each as the thread policy
says (:mod:`._threads`); :mod:`._run` pools the per-row terms of all splits
into the test's units (:mod:`skl_treeinner._stats._inference`).
"""

from __future__ import annotations

import numpy as np
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import _safe_indexing
from sklearn.utils._set_output import _get_output_config, _wrap_data_with_container
from sklearn.utils.validation import validate_data

from ..._readers import default_estimator, reader_class
from ..._scoring._sums import (
    predecomp_rows,
    predecomp_scores,
    row_terms,
    shaped,
    treeshap_terms,
)
from ..._stats._cutoff import warn_if_empty
from ..._utils._target_warnings import warn_about_target
from ..._utils._validation import (
    check_fit_input,
    check_target_scale,
    check_target_suits_estimator,
    is_pandas_df,
    is_polars_df,
)
from .._base import CheckedInput, Engine, SplitRun
from .._plan import check_supported, resolve_estimator
from ._run import CrossFitRun, PrefitRun, Rows
from ._splits import check_groups

__all__ = ["IN_MEMORY", "InMemory"]


class InMemory(Engine):
    """Rows held by this process: the engine every other input falls back to."""

    name = "in-memory"

    def accepts(self, obj) -> bool:
        """Take anything: the dispatch asks the other engines first."""
        return True

    def default_estimator(self, classifier: bool, random_state, n_rows=None):
        """Build XGBoost with the paper's settings (the registry's default)."""
        return default_estimator(classifier, random_state, n_rows)

    def predecomp(self, reader, X, *, return_bias):
        """:func:`~skl_treeinner.predecomp` of rows in memory."""
        X, n, _, _ = reader.rows(X)
        values = predecomp_rows(reader, X, n)
        return shaped(values, reader.ensemble, return_bias=return_bias)

    def tree_inner(
        self,
        reader,
        X,
        y,
        *,
        attribution,
        sample_weight,
        per_iteration=False,
        per_sample=False,
        verbose=0,
    ):
        """:func:`~skl_treeinner.tree_inner` of rows in memory."""
        X, n, y, w = reader.rows(X, y, sample_weight)
        if per_sample:
            return row_terms(
                reader, X, n, y, w, attribution=attribution, verbose=verbose
            )
        if attribution == "treeshap":
            return treeshap_terms(
                reader, X, y, w, per_iteration=per_iteration, verbose=verbose
            )
        return predecomp_scores(
            reader, X, y, w, per_iteration=per_iteration, verbose=verbose
        )

    def check_input(self, plan) -> CheckedInput:
        """Check X, y, the weights and the row groups as scikit-learn does."""
        base, classifier = resolve_estimator(plan, self.default_estimator)
        final = check_supported(base)
        X, y, weight, n_features_in, names = check_fit_input(
            plan.name,
            plan.X,
            plan.y,
            plan.sample_weight,
            reader=reader_class(final) if final is base else None,
        )
        if plan.estimator is None:
            warn_about_target(y, classifier)
        y_fit = check_target_suits_estimator(y, classifier, final)
        if not classifier and not plan.prefit:
            reader = reader_class(final)
            check_target_scale(
                y_fit,
                weight,
                reader.max_target_spread,
                type(final).__name__,
                reader.target_offset_limit(final),
            )
        check_groups(plan.groups, y.shape[0])
        rows = Rows(X, y, y_fit, weight)
        return CheckedInput(base, classifier, n_features_in, names, rows)

    def prepare_splits(self, plan, checked, feature_groups) -> SplitRun:
        """Draw the splits as index pairs and check their rows (:mod:`._splits`)."""
        if plan.prefit:
            return PrefitRun(plan, checked, feature_groups)
        return CrossFitRun(plan, checked, feature_groups)

    def transform(self, selector, X):
        """Select columns, keeping a data frame's dtypes.

        The result goes into the container ``set_output`` asks for, as
        scikit-learn's own wrapper of ``transform`` would put it. Without one
        (``"default"``), a pandas or polars frame gives a frame of its own
        kind: scikit-learn's default, a numpy array, would turn a frame with
        categorical, boolean or nullable columns into objects that the next
        step of a pipeline (a booster with categorical support) cannot take.
        """
        dense = _get_output_config("transform", estimator=selector)["dense"]
        if dense == "default":
            dense = "pandas" if is_pandas_df(X) else "polars"
        if not (is_pandas_df(X) or is_polars_df(X)):
            out = SelectorMixin.transform(selector, X)
        else:
            validate_data(selector, X, skip_check_array=True, reset=False)
            mask = selector.get_support()
            warn_if_empty(mask, stacklevel=3)
            out = _safe_indexing(X, np.flatnonzero(mask), axis=1)
            if dense == "pandas" and is_polars_df(out):
                out = out.to_pandas()
            elif dense == "polars" and is_pandas_df(out):
                import polars as pl

                out = pl.from_pandas(out)
        return _wrap_data_with_container("transform", out, X, selector)


#: The one instance the dispatch uses.
IN_MEMORY = InMemory()
