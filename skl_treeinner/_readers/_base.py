"""The interface every reader implements, and input helpers they share."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._ensemble import TreeEnsemble
from .._validation import (
    check_no_infinity,
    check_sample_weight,
    check_target_values,
)

__all__ = [
    "BoosterSettings",
    "ModelReader",
    "Rows",
    "feature_names_of",
    "n_rows",
    "slice_rows",
]

# Rows per chunk are chosen so that one (rows x trees) float64 array stays
# near this many elements (8 MiB): memory stays O(rows x features) overall.
_CHUNK_ELEMENTS = 1 << 20

#: Passed as ``y`` to :meth:`ModelReader.rows` by callers that need no target.
NO_TARGET = object()


@dataclass(frozen=True)
class BoosterSettings:
    """What :func:`~skl_treeinner._readers.make_estimator` asks a reader to build."""

    #: A classifier rather than a regressor.
    classifier: bool
    #: Boosting rounds, learning rate and tree depth.
    n_estimators: int
    learning_rate: float
    max_depth: int
    #: Fraction of the features each tree (HistGradientBoosting: each split)
    #: may use.
    colsample: float = 1.0
    #: The booster's seed.
    random_state: int | None = None
    #: Turn on the booster's own categorical support where it needs turning on.
    categorical: bool = False
    #: Threads, where the booster has a setting for them.
    n_jobs: int | None = None


class Rows(NamedTuple):
    """Rows checked against a model, ready for routing (:meth:`ModelReader.rows`)."""

    #: X as the booster takes it (CSR for sparse input).
    X: object
    #: Number of rows.
    n: int
    #: Target encoded for the objective (float64), or ``None`` if not asked for.
    y: np.ndarray | None
    #: Per-row weights, or ``None`` for all ones.
    sample_weight: np.ndarray | None


def feature_names_of(X) -> list[str] | None:
    """Column names of a pandas or polars data frame, else ``None``."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "shape"):
        return None
    # XGBoost joins the levels of a pandas MultiIndex with a space.
    return [" ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in columns]


def n_rows(X) -> int:
    """Return the number of rows of any supported X."""
    num_row = getattr(X, "num_row", None)  # xgboost.DMatrix
    if callable(num_row):
        return int(num_row())
    return int(X.shape[0])


def slice_rows(X, start: int, stop: int):
    """Rows ``start:stop`` of X, keeping its type (numpy, pandas, polars, sparse)."""
    if callable(getattr(X, "slice", None)) and callable(getattr(X, "num_row", None)):
        return X.slice(np.arange(start, stop))  # xgboost.DMatrix
    if hasattr(X, "iloc"):
        return X.iloc[start:stop]
    return X[start:stop]  # numpy, polars, CSR (prepare_X converts other sparse)


class ModelReader:
    """Base class of readers: a fitted model seen through a :class:`TreeEnsemble`.

    A reader exposes the library-neutral ensemble plus the one thing that
    must stay with the library: routing rows to leaves, which always uses the
    booster's own routine so that missing values, default directions and
    categorical splits are handled exactly as the booster handles them.
    """

    #: The model as a :class:`TreeEnsemble`.
    ensemble: TreeEnsemble
    #: Class labels of a classifier, in output order, or ``None``.
    classes_: np.ndarray | None = None
    #: Whether the booster routes ±inf itself; if not, ``rows`` refuses them.
    accepts_infinity: bool = True
    #: Training settings that break Prop. 3 (each a short phrase); warned about.
    lost_identities: tuple[str, ...] | list[str] = ()

    # -- the library's estimators (class methods: no fitted model needed) -------------
    @classmethod
    def make_estimator(cls, settings: BoosterSettings):
        """Build an unfitted booster of this library from ``settings``."""
        raise NotImplementedError(f"{cls.__name__} cannot build an estimator.")

    @classmethod
    def early_stopping_rows_needed(cls, estimator, fit_params: dict) -> bool:
        """Whether ``estimator.fit`` will stop early on rows the caller sets aside.

        False unless the library is told to stop early and the user passed no
        rows for it (an ``eval_set``) in ``fit_params``. Libraries that set
        their own validation rows aside (scikit-learn's) never need them.
        """
        return False

    @classmethod
    def early_stopping_fit_params(
        cls, estimator, X_es, y_es, *, sample_weight, fit_params: dict
    ) -> dict:
        """Fit parameters that hand the early-stopping rows to the library."""
        raise NotImplementedError(f"{cls.__name__} needs no early-stopping rows.")

    # -- rows ----------------------------------------------------------------------
    def rows(self, X, y=NO_TARGET, sample_weight=None) -> Rows:
        """Check X (and y, weights) against the model: the opening of every scorer.

        Parameters
        ----------
        X : array-like, sparse matrix, DataFrame or DMatrix
            Rows to route; checked by :meth:`prepare_X`.
        y : array-like of shape (n_samples,), optional
            Target of the rows, checked by :meth:`check_target`. Leave it out
            where no target is used (``predecomp``); ``None`` is refused.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights; ``None`` means all ones.

        Returns
        -------
        Rows
            ``(X, n, y, sample_weight)``, ``y`` is ``None`` when not passed.
        """
        X = self.prepare_X(X)
        n = n_rows(X)
        if not self.accepts_infinity:
            check_no_infinity(X)
        if n == 0 and y is not NO_TARGET:
            raise ValueError(
                "X has no rows; TreeInner sums over the rows it scores, so it "
                "needs at least one."
            )
        target = None if y is NO_TARGET else self.check_target(y, n)
        return Rows(X, n, target, check_sample_weight(sample_weight, n))

    def check_target(self, y, n_samples: int) -> np.ndarray:
        """Validate ``y`` against the rows and the model; return it for the objective.

        Class labels of a classifier with ``classes_`` become output indices;
        the objective then checks the values (e.g. counts for Poisson).
        """
        y = check_target_values(y, n_samples)
        if self.classes_ is not None:
            y = self.encode_target(y)
        elif y.dtype.kind not in "biuf":
            raise ValueError(
                f"y must be numeric for this model, got dtype {y.dtype}. Encode "
                "class labels as 0..n_classes-1, as the model was trained."
            )
        return self.ensemble.objective.validate_target(y.astype(np.float64))

    # -- routing -------------------------------------------------------------------
    def iter_leaves(
        self, X, *, scale: int = 1
    ) -> Iterator[tuple[int, int, object, np.ndarray]]:
        """Route X (already through :meth:`prepare_X`) in row chunks.

        Yields ``(start, stop, X_chunk, leaves)``: the rows ``start:stop`` of X
        (same type as X) and ``leaves`` of shape (stop - start, n_trees), the
        global node index of the leaf each row reaches in each tree, from
        :meth:`apply`. Chunks hold about ``scale * 2**20`` (row, tree) pairs,
        so that memory stays bounded whatever the number of rows.
        """
        n = n_rows(X)
        step = self._chunk_rows(scale)
        if step >= n:
            yield 0, n, X, self.apply(X)
            return
        for start in range(0, n, step):
            stop = min(start + step, n)
            chunk = slice_rows(X, start, stop)
            yield start, stop, chunk, self.apply(chunk)

    def n_chunks(self, n_samples: int, *, scale: int = 1) -> int:
        """Count the chunks :meth:`iter_leaves` yields for ``n_samples`` rows."""
        step = self._chunk_rows(scale)
        return 1 if step >= n_samples else -(-n_samples // step)

    def _chunk_rows(self, scale: int) -> int:
        # Read _CHUNK_ELEMENTS at call time, so that tests can shrink the chunks.
        return max(256, scale * _CHUNK_ELEMENTS // max(self.ensemble.n_trees, 1))

    def apply(self, X) -> np.ndarray:
        """Leaf reached by every row in every tree.

        Returns
        -------
        ndarray of shape (n_samples, n_trees), int64
            Global node index (into the ensemble's arrays) of the leaf.
        """
        raise NotImplementedError

    def iteration_shap(self, X) -> Iterator[tuple[int, np.ndarray]]:
        """Path-dependent TreeSHAP of the trees of each boosting iteration.

        Yields ``(r, values)`` for every iteration r, with ``values`` of shape
        (n_samples, n_outputs, n_features): for output k, the TreeSHAP values
        of the model made of iteration r's trees for output k alone (paper
        004, Algorithm 2). TreeSHAP is additive over trees, so summing over
        iterations gives the whole ensemble's SHAP values.
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no per-iteration TreeSHAP yet."
        )

    def total_gain(self) -> np.ndarray:
        """Return the booster's own in-sample gain importance, summed over trees.

        Returns
        -------
        ndarray of shape (n_features,), float64
            Total split gain of each feature as the library reports it
            (unnormalised), the right-hand side of Prop. 3.
        """
        raise NotImplementedError(f"{type(self).__name__} has no total gain yet.")

    def prepare_X(self, X):
        """Check X's columns against the model and return X ready for ``apply``.

        Raises ``ValueError`` on a wrong number of columns or, where both X
        and the model carry names, on names that differ.
        """
        if isinstance(X, list | tuple):
            X = np.asarray(X)
        if hasattr(X, "tocsr") and getattr(X, "format", "csr") != "csr":
            X = X.tocsr()  # once, so that chunks slice rows cheaply
        if not hasattr(X, "shape") and not callable(getattr(X, "num_col", None)):
            raise TypeError(
                "X must be a 2-D array, a scipy sparse matrix, a pandas or polars "
                f"DataFrame, got {type(X).__qualname__}."
            )
        num_col = getattr(X, "num_col", None)
        shape = (n_rows(X), int(num_col())) if callable(num_col) else X.shape
        if len(shape) != 2:
            raise ValueError(
                f"X must be 2-D of shape (n_samples, n_features), got shape {shape}."
            )
        ens = self.ensemble
        if shape[1] != ens.n_features:
            raise ValueError(
                f"X has {shape[1]} features, but the model was trained on "
                f"{ens.n_features}. Pass the columns the model was trained on, "
                "in the same order."
            )
        names = self._column_names(X)
        if names is not None and ens.feature_names is not None:
            if list(ens.feature_names) != names:
                missing = [n for n in ens.feature_names if n not in names]
                extra = [n for n in names if n not in ens.feature_names]
                detail = (
                    f"missing {missing}, unexpected {extra}"
                    if missing or extra
                    else "same names in a different order"
                )
                raise ValueError(
                    "The feature names of X differ from those the model was "
                    f"trained on ({detail}). Select and order the columns as "
                    f"in training: X[{list(ens.feature_names)!r}]."
                )
        return X

    def _column_names(self, X) -> list[str] | None:
        """Column names of X as the library would store them (``None`` if none)."""
        return feature_names_of(X)

    def encode_target(self, y: np.ndarray) -> np.ndarray:
        """Map class labels to output indices (classifiers with ``classes_``)."""
        if self.classes_ is None:
            return y
        classes = np.asarray(self.classes_)
        idx = np.searchsorted(classes, y)
        idx = np.clip(idx, 0, classes.size - 1)
        bad = classes[idx] != y
        if np.any(bad):
            unknown = np.unique(np.asarray(y)[bad])[:5].tolist()
            raise ValueError(
                f"y holds labels {unknown} that the classifier was not trained "
                f"on; its classes are {classes.tolist()}."
            )
        return idx.astype(np.float64)
