"""The selector's scikit-learn plumbing: metadata routing and tags.

:class:`SklearnPlumbingMixin` gives :class:`~skl_treeinner.TreeInnerSelector`
what scikit-learn asks of a meta-estimator beside ``fit``: where ``fit``'s
metadata go (the booster's ``fit``, the ``cv`` splitter) and which input the
selector takes (the booster's own tags).
"""

from __future__ import annotations

from numbers import Integral

from sklearn.model_selection import check_cv
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
)

from .._engines._plan import int_splitter
from .._readers import default_estimator

__all__ = ["SklearnPlumbingMixin"]


class SklearnPlumbingMixin:
    """Metadata routing and tags of the selector, from its booster."""

    def __setstate__(self, state):
        """Restore a pickled selector, with defaults for parameters added since."""
        state.setdefault("feature_groups", None)
        state.setdefault("group_test", "sum+simes")
        super().__setstate__(state)

    def get_metadata_routing(self):
        """Routing of fit metadata to the booster and the splitter.

        ``sample_weight`` is consumed by the selector itself (it weights the
        inner product) and routed to the booster's fit when the booster
        requests it; the default estimator requests it. ``groups`` go to the
        ``cv`` splitter; an int ``cv`` takes them (as ``GroupKFold`` or
        ``StratifiedGroupKFold``).

        Returns
        -------
        routing : MetadataRouter
            The routing information.

        References
        ----------
        Paper 000, Eq. 21: the weights of the inner product.

        Examples
        --------
        >>> import sklearn, xgboost as xgb
        >>> from skl_treeinner import TreeInnerSelector
        >>> with sklearn.config_context(enable_metadata_routing=True):
        ...     est = xgb.XGBRegressor().set_fit_request(sample_weight=True)
        ...     sel = TreeInnerSelector(est).set_fit_request(sample_weight=True)
        ...     routing = sel.get_metadata_routing()
        >>> sorted(routing.consumes("fit", ["sample_weight", "groups"]))
        ['groups', 'sample_weight']
        """
        if self.estimator is None:
            estimator = default_estimator(False).set_fit_request(sample_weight=True)
        else:
            estimator = self.estimator
        router = MetadataRouter(owner=self).add_self_request(self)
        router.add(
            estimator=estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )
        if self.cv is not None:
            # An int cv takes groups when given (GroupKFold and its stratified
            # version), so it is routed as a splitter that consumes them.
            splitter = (
                int_splitter(self.cv, False, grouped=True)
                if isinstance(self.cv, Integral)
                else check_cv(self.cv)
            )
            router.add(
                splitter=splitter,
                method_mapping=MethodMapping().add(caller="fit", callee="split"),
            )
        return router

    def __sklearn_tags__(self):
        """Tags: NaN and sparse input as the booster allows, y required."""
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        # Every supported booster takes NaN and sparse input; the default one
        # also pandas/polars categories.
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.input_tags.categorical = self.estimator is None
        if self.estimator is not None:
            try:
                inner = get_tags(self.estimator).input_tags
            except AttributeError:  # no scikit-learn >= 1.6 tags (XGBoost < 2.1.4)
                return tags
            tags.input_tags.allow_nan = inner.allow_nan
            tags.input_tags.sparse = inner.sparse
            tags.input_tags.categorical = inner.categorical
        return tags
