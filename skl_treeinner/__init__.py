"""skl-treeinner: out-of-sample feature attributions for gradient boosted trees.

The numerical core of paper 000 (Sun, AISTATS 2023):

- :func:`predecomp`: per-row PreDecomp attributions (Def. 1, Eq. 10).
- :func:`tree_inner`: per-feature TreeInner scores on any rows (Def. 4, Eq. 21);
  on the training rows it equals the booster's total gain (Prop. 3), on
  held-out rows noisy features score negative in expectation.
- :func:`global_importance`: every global importance the papers compare
  (TreeInner, ForestInner, Abs, total gain, permutation, unbiased gain).
- :func:`read_ensemble`: the library-neutral :class:`TreeEnsemble` behind both.
- :class:`TreeInnerSelector`: a scikit-learn feature selector that keeps the
  features whose TreeInner score on held-out rows is significantly above the
  same model's score with the feature's values resampled (Sec. 4, with a
  one-sided test on the rows' terms).
- :mod:`skl_treeinner.datasets`: the paper's simulated data (Sec. 4.1).
"""

from ._attribution import predecomp
from ._global_importance import global_importance
from ._model._ensemble import TreeEnsemble
from ._readers import SUPPORTED_MODELS, read_model
from ._selection._selector import TreeInnerSelector
from ._tree_inner import tree_inner


def read_ensemble(model) -> TreeEnsemble:
    """Read a fitted model into the library-neutral :class:`TreeEnsemble`.

    Parameters
    ----------
    model : fitted booster
        A fitted model of a supported library: ``SUPPORTED_MODELS`` lists
        them (XGBoost, LightGBM, scikit-learn's gradient boosting).

    Returns
    -------
    TreeEnsemble
        Flat arrays of children, split features, node values p̂ (Eq. 7), hessian
        covers, plus learning rate, λ, intercept and objective.
    """
    return read_model(model).ensemble


__version__ = "0.1.0.dev0"

__all__ = [
    "SUPPORTED_MODELS",
    "TreeEnsemble",
    "TreeInnerSelector",
    "global_importance",
    "predecomp",
    "read_ensemble",
    "tree_inner",
    "__version__",
]
