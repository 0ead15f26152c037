"""The selector's ``memory``: a fitted selection kept on disk across clones.

``GridSearchCV`` clones the selector for every candidate and fits each clone
on every fold, so a grid over ``alpha``, ``control``, ``threshold`` or an int
``max_features`` (what ``set_params`` changes on a fitted selector for free)
would cost one selection per candidate and fold. With ``memory`` the fit's
statistics are cached (joblib's ``Memory``, as ``Pipeline(memory=...)``
caches its transformers), keyed by everything the fit reads (the data, the
booster, the seeds and the fitting parameters) and by nothing the cut-off
alone reads: the candidates of one fold then share one selection.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import warnings
from importlib.metadata import PackageNotFoundError, version

from sklearn.utils.validation import check_memory

from .._engines import IN_MEMORY, engine_for_any, fit_selection
from .._utils._validation import user_stacklevel

__all__ = ["fit_selection_cached"]


def fit_selection_cached(memory, plan, random_state) -> dict:
    """Return :func:`fit_selection`'s statistics, from ``memory``'s cache if there.

    ``memory`` is the selector's parameter (None, a folder or its path, or a joblib
    ``Memory``). Without a cache, with Dask collections, with
    ``random_state=None`` (every fit draws its own seeds, so no two fits are
    the same) or with data that cannot be hashed, the selection is fitted as
    usual; the last three say so.
    """
    if isinstance(memory, os.PathLike):
        memory = os.fspath(memory)
    memory = check_memory(memory)
    if memory.location is None:
        return fit_selection(plan)
    reason = None
    if engine_for_any(plan.X, plan.y, plan.sample_weight) is not IN_MEMORY:
        reason = "Dask collections are not cached"
    elif random_state is None:
        reason = (
            "with random_state=None every fit draws its own seeds, so no fit "
            "can reuse another's; pass an int random_state"
        )
    if reason is None:
        try:
            statistics, said = memory.cache(_fit, ignore=["plan"])(_key(plan), plan)
        except pickle.PicklingError as e:  # hashing pickles the key
            reason = f"its inputs could not be hashed ({e})"
        except (TypeError, AttributeError, ValueError) as e:
            if "pickle" not in str(e).lower():
                raise
            reason = f"its inputs could not be hashed ({e})"
        else:  # what the fit warned, said again on every fit that reuses it
            for category, message in said:
                warnings.warn(message, category, stacklevel=user_stacklevel())
            return statistics
    warnings.warn(
        f"memory is not used: {reason}. The selection is fitted as usual.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    return fit_selection(plan)


def _key(plan):
    """Return the plan less what the fit does not read, with the package's version.

    The number of threads and the progress bars do not change the numbers; an
    int ``max_features`` only cuts (a refit curve's rule is part of the fit).
    """
    try:
        release = version("skl-treeinner")
    except PackageNotFoundError:  # run from a source tree
        release = None
    curve_rule = plan.max_features if isinstance(plan.max_features, str) else None
    return (
        release,
        dataclasses.replace(plan, n_jobs=None, verbose=0, max_features=curve_rule),
    )


def _fit(key, plan):
    """Fit the plan; return its statistics and its warnings (category, text).

    ``key`` is what the cache hashes (``plan`` is ignored). The warnings are
    kept with the statistics, so that a fit that reuses them says what the
    first one said (the user's filters apply when they are said).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        statistics = fit_selection(plan)
    return statistics, [(w.category, str(w.message)) for w in caught]
