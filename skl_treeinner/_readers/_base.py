"""The interface every reader implements, and input helpers they share."""

from __future__ import annotations

import hashlib
import math
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np

from .._model._ensemble import TreeEnsemble
from .._utils._validation import (
    check_no_infinity,
    check_sample_weight,
    check_target_values,
    check_unique_columns,
)
from ..exceptions import RoutingError
from ._hooks import BoosterSettings, EstimatorHooks

__all__ = [
    "BoosterSettings",
    "ModelReader",
    "Rows",
    "feature_names_of",
    "n_rows",
    "slice_rows",
    "take_rows",
]

# Rows per chunk are chosen so that one (rows x trees) float64 array stays
# near this many elements (8 MiB): memory stays O(rows x features) overall.
_CHUNK_ELEMENTS = 1 << 20

#: Rows whose routing is compared with the booster's margin on every call (all
#: of them below this). A seeded sample of this many rows catches a booster
#: that misroutes 0.1 % of the rows with probability 1 - 0.999**5000 > 99.3 %
#: (docs/performance.md has what the check costs).
ROUTING_CHECK_ROWS = 5000
#: Models whose parsed ensembles are kept (:meth:`ModelReader.cached_read`).
READ_CACHE_SIZE = 4
_READ_CACHE: OrderedDict = OrderedDict()
_READ_CACHE_LOCK = threading.Lock()

#: Relative tolerance of the check, against the margin's absolute scale
#: (intercept plus the leaf values' absolute sum): XGBoost predicts in float32,
#: whose rounding grows like the square root of the number of trees.
_ROUTING_RTOL = 1e-5

#: Passed as ``y`` to :meth:`ModelReader.rows` by callers that need no target.
NO_TARGET = object()


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


def polars_as_pandas(X):
    """Return a polars frame as pandas (categories kept); any other X unchanged.

    For the libraries that read a polars frame through Arrow and abort the
    process on its dictionary-encoded (Categorical, Enum) columns: LightGBM
    ("Unsupported Arrow type: dictionary") and CatBoost. Needs pandas and
    pyarrow, the ``polars`` extra's.
    """
    if not type(X).__module__.startswith("polars"):
        return X
    try:
        return X.to_pandas()
    except ModuleNotFoundError as e:
        raise ImportError(
            f"This booster is given polars frames as pandas, which needs {e.name}: "
            "pip install pandas pyarrow."
        ) from e


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


def take_rows(X, rows):
    """Rows ``rows`` (sorted positions) of X, keeping its type."""
    if callable(getattr(X, "slice", None)) and callable(getattr(X, "num_row", None)):
        return X.slice(rows)  # xgboost.DMatrix
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    return X[rows]  # numpy, polars, CSR


def routing_sample(n: int) -> np.ndarray:
    """Sorted positions of the rows whose routing is checked (all if few)."""
    if n <= ROUTING_CHECK_ROWS:
        return np.arange(n)
    rng = np.random.default_rng(0)
    return np.sort(rng.choice(n, size=ROUTING_CHECK_ROWS, replace=False))


class ModelReader(EstimatorHooks):
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
    #: Whether the booster takes text columns of a data frame as categories.
    accepts_text_columns: bool = False
    #: Largest spread of a numeric target, sum_i w_i |y_i - mean(y)|, the
    #: booster fits without overflowing (None: no limit known).
    max_target_spread: float | None = None

    #: Training settings that break Prop. 3 (each a short phrase); warned about.
    lost_identities: tuple[str, ...] | list[str] = ()
    #: The booster's own thread setting (``n_jobs``/``nthread``), None for its
    #: default; the scoring kernels use as many threads (:meth:`n_threads`).
    thread_setting: int | None = None

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
        check_unique_columns(X)
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

    # -- reading -------------------------------------------------------------------
    def cached_read(
        self,
        serialized: tuple[bytes | str, ...],
        read: Callable[[], tuple[TreeEnsemble, list[str]]],
    ) -> tuple[TreeEnsemble, list[str]]:
        """Return ``read()``, or what it returned before for the same bytes.

        ``read()`` returns the ensemble and its :attr:`lost_identities`.
        ``serialized`` must hold everything ``read`` depends on, as the
        library saves it (the model's bytes, its configuration): the key is
        their BLAKE2 digest, so a model changed in place (trained further,
        loaded over) is read again, never served stale. Parsing a 500-tree
        model costs about a fifth of routing 10,000 rows through it; hashing
        its bytes, about a hundredth. The :data:`READ_CACHE_SIZE` most recent
        ensembles are kept with their :attr:`lost_identities`.
        """
        digest = hashlib.blake2b(digest_size=20)
        for part in serialized:
            data = part.encode() if isinstance(part, str) else bytes(part)
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        key = (type(self).__qualname__, digest.digest())
        with _READ_CACHE_LOCK:
            hit = _READ_CACHE.get(key)
            if hit is not None:
                _READ_CACHE.move_to_end(key)
        if hit is not None:
            ensemble, lost = hit
            return ensemble, list(lost)
        ensemble, lost = read()
        with _READ_CACHE_LOCK:
            _READ_CACHE[key] = (ensemble, tuple(lost))
            while len(_READ_CACHE) > READ_CACHE_SIZE:
                _READ_CACHE.popitem(last=False)
        return ensemble, list(lost)

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
        checked = routing_sample(n)
        step = self._chunk_rows(scale)
        if step >= n:
            yield 0, n, X, self.checked_apply(X, checked)
            return
        step = -(-n // -(-n // step))  # as many chunks, of even sizes
        for start in range(0, n, step):
            stop = min(start + step, n)
            chunk = slice_rows(X, start, stop)
            lo, hi = np.searchsorted(checked, [start, stop])
            yield start, stop, chunk, self.checked_apply(chunk, checked[lo:hi] - start)

    def checked_apply(self, X, check_rows=None) -> np.ndarray:
        """:meth:`apply`, with the leaves checked against the booster's margin.

        For each row of ``check_rows`` (positions in X; all rows if None), the
        intercept plus the values of the leaves reported must equal the
        booster's own raw margin (:meth:`raw_margin`) to float rounding (Prop.
        1 applied to the routing). When they do not, the reader tries its
        fallback route (:meth:`use_fallback_routing`, e.g. XGBoost's CPU
        predictor for a GPU booster) and checks again; if that fails too, or
        there is none, :class:`~skl_treeinner.exceptions.RoutingError` is
        raised. :meth:`iter_leaves` checks every row of up to
        ``ROUTING_CHECK_ROWS`` and a seeded sample of that many beyond.
        """
        if check_rows is None:
            check_rows = np.arange(n_rows(X))
        leaves, own = self.apply_with_margin(X, check_rows)
        if check_rows.size == 0:
            return leaves
        if not np.isfinite(own).all():
            raise ValueError(
                f"{self.describe()} predicts non-finite raw margins for "
                f"{int((~np.isfinite(own)).any(axis=1).sum())} of {own.shape[0]} "
                "checked rows: it overflowed or diverged while fitting, and no "
                "score can be read from it. Rescale the target (or the features "
                "beyond float32's range) and refit."
            )
        bad = self._misrouted(leaves[check_rows], own)
        if bad == 0:
            return leaves
        first = bad
        if self.use_fallback_routing():
            leaves = self.apply(X)
            bad = self._misrouted(leaves[check_rows], own)
            if bad == 0:
                warnings.warn(
                    f"{self.describe()} reported leaves that disagree with its own "
                    f"predictions for {first} of {own.shape[0]} checked rows; they "
                    f"were routed again by {self.fallback_name}, which agrees. The "
                    "results use the corrected leaves; the model passed in is "
                    "unchanged.",
                    UserWarning,
                    stacklevel=2,
                )
                return leaves
        share = bad / own.shape[0]
        raise RoutingError(
            f"{self.describe()} reported leaves that do not add up to its own raw "
            f"margin for {bad} of {own.shape[0]} checked rows ({share:.2%}): its leaf "
            "routine and its prediction routine disagree, so every attribution "
            "built on those leaves would be wrong. " + self.routing_advice()
        )

    def apply_with_margin(self, X, rows) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`apply`, and the booster's own margin of rows ``rows``.

        The margin is float64 of shape (len(rows), n_outputs), predicted on
        those rows only (a prediction pass costs about what routing does).
        """
        everything = rows.size == n_rows(X)
        return self.apply(X), self._own_margin(X if everything else take_rows(X, rows))

    def _own_margin(self, X) -> np.ndarray:
        """:meth:`raw_margin` as float64 of shape (n, n_outputs); empty if no row."""
        k = self.ensemble.n_outputs
        if n_rows(X) == 0:
            return np.empty((0, k))
        return np.asarray(self.raw_margin(X), dtype=np.float64).reshape(-1, k)

    def _misrouted(self, leaves, own) -> int:
        """Count the rows whose leaves miss the booster's own raw margin ``own``."""
        return int(self._disagreeing(leaves, own).sum())

    def _disagreeing(self, leaves, own) -> np.ndarray:
        """Mask of the rows whose leaves' margin is off ``own`` beyond rounding."""
        from .._kernels._backend import Backend

        paths = Backend(self.ensemble, self.n_threads()).paths
        margin, scale = paths.margins(leaves)
        rtol = _ROUTING_RTOL * max(1.0, math.sqrt(self.ensemble.n_trees) / 30)
        return (np.abs(margin - own) > rtol * scale + 1e-12).any(axis=1)

    def raw_margin(self, X) -> np.ndarray:
        """Return the booster's own raw margin on X (before the link function).

        An array of shape (n,) or (n, n_outputs), as the library returns it.
        """
        raise NotImplementedError

    #: What the fallback route is, for messages.
    fallback_name = "another route"

    def use_fallback_routing(self) -> bool:
        """Switch :meth:`apply` to a route known to be correct, if there is one.

        Returns whether it switched. The default has none.
        """
        return False

    def on_gpu(self) -> bool:
        """Whether the booster routes rows on a GPU (then they are scored there).

        The default: no. See :mod:`skl_treeinner._kernels._device`.
        """
        return False

    def describe(self) -> str:
        """Name the model in messages."""
        return f"The {type(self).__name__.removesuffix('Reader')} model"

    def routing_advice(self) -> str:
        """Say what to do when routing fails (the end of the message)."""
        return (
            "Please report it with the library's version; as a workaround, save "
            "and reload the model, or predict once before scoring."
        )

    def n_threads(self) -> int:
        """Threads for the arithmetic after routing: those the booster would use.

        The booster's own setting (:attr:`thread_setting`), within the limits
        the caller set (``OMP_NUM_THREADS``, threadpoolctl, joblib's limits in
        its workers): see :func:`skl_treeinner._kernels._compiled.effective_threads`.
        """
        from .._kernels._compiled import effective_threads

        return effective_threads(self.thread_setting)

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

    def has_treeshap_rows(self, X) -> bool:
        """Whether :meth:`treeshap_rows` can give X (numeric numpy or pandas rows).

        Sparse matrices (absent entries: missing or zero?) and polars are not.
        """
        from scipy import sparse

        if self.ensemble.split_rule is None or sparse.issparse(X):
            return False
        if type(X).__module__.startswith("polars"):
            return False
        if hasattr(X, "dtypes"):  # pandas
            return all(getattr(dt, "kind", "O") in "biuf" for dt in X.dtypes)
        return np.asarray(X).dtype.kind in "biuf"

    def treeshap_rows(self, X) -> np.ndarray | None:
        """X as a dense array in the split rule's dtype, NaN missing; or None.

        None where :meth:`has_treeshap_rows` is False: :meth:`iteration_shap` runs.
        """
        if not self.has_treeshap_rows(X):
            return None
        if hasattr(X, "dtypes"):  # pandas
            X = X.to_numpy(dtype=np.float64, na_value=np.nan)
        return np.array(X, dtype=self.ensemble.split_rule.threshold.dtype, order="C")

    def iteration_shap(self, X, rounds=None) -> Iterator[tuple[int, np.ndarray]]:
        """Path-dependent TreeSHAP of the trees of each boosting iteration.

        Yields ``(r, values)`` for every iteration r (or those in ``rounds``),
        ``values`` (n_samples, n_outputs, n_features): for output k, TreeSHAP
        of the model of iteration r's trees for output k alone (paper 004,
        Algorithm 2); additive over trees, so they sum to the ensemble's.
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

    def training_row_counts(self) -> np.ndarray | None:
        """Return how many training rows reached each node, where the model says.

        Returns
        -------
        ndarray of shape (n_nodes,) or None
            The row count the library stored for every node (the ensemble's
            global indices), or None where it stores none (hessian sums only).
            On its own training rows (without bagging) the rows that reach
            each leaf are exactly these: the prefit check reads that where
            the gains cannot tell (Prop. 3 only approximate).
        """
        return None

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
