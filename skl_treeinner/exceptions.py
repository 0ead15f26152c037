"""Warnings and errors raised by skl-treeinner.

Errors use the standard exception types (``TypeError`` for a model we cannot
read, ``ValueError`` for a configuration or input we cannot score correctly);
:class:`RoutingError` is a ``ValueError`` of its own, so that it can be caught.
Warnings are reserved for cases where the numbers are still well defined but a
guarantee of the paper no longer holds.
"""

__all__ = [
    "DependentRowsWarning",
    "IdentityWarning",
    "RoutingError",
    "TrainingRowsWarning",
]


class RoutingError(ValueError):
    """A booster's own leaf routine disagrees with its own predictions.

    Every score starts from the leaves the booster reports for each row
    (XGBoost's ``pred_leaf``, LightGBM's ``pred_leaf``, scikit-learn's
    ``apply``). Before they are used, the intercept plus the values of those
    leaves is checked against the booster's raw margin on the same rows; when
    they disagree beyond float rounding and no correct route is available
    (for XGBoost GPU boosters, the CPU predictor on a copy), this is raised
    rather than a wrong number returned. The message names the booster, the
    share of checked rows that disagreed and what to do.
    """


class IdentityWarning(UserWarning):
    """A result is still computed, but one of the paper's identities is lost.

    Raised, for example, when a model was trained with L1 regularisation
    (``reg_alpha > 0``): PreDecomp still satisfies local accuracy (Prop. 1),
    but the node values are no longer the ℓ2-regularised values of Eq. 7, so
    in-sample TreeInner no longer equals the booster's total gain (Prop. 3).
    The message says which identity is lost and what to do instead.
    """


class DependentRowsWarning(UserWarning):
    """The rows look ordered or grouped, and the splits ignore it.

    The test treats held-out rows as independent draws of new rows. Rows in
    time order, or several rows of one entity, break that, and shuffled folds
    then leak: a held-out row's neighbours in time, or its entity's other
    rows, were fitted on, so columns that only recognise "when" or "who" look
    useful. The message says what was seen and which ``cv`` or ``groups``
    to pass (the user guide's "Time series and panels").
    """


class TrainingRowsWarning(UserWarning):
    """A prefit model is scored on the rows it was trained on.

    On its training rows a booster's TreeInner is its total split gain
    (paper 000, Prop. 3): every split helped the rows it was fitted on, so
    every column it uses scores above zero and the test keeps it, noise
    included. ``TreeInnerSelector(prefit=True)`` recognises these rows when
    its held-out scores equal the booster's total gain, and says to pass
    rows the model never saw.
    """
