"""Checks of the scalar parameters shared by the data set generators.

Every public generator validates all its scalar parameters before any work,
in two layers:

- scikit-learn's :func:`~sklearn.utils._param_validation.validate_params`
  decorator for the parameters scikit-learn has a standard constraint for
  (``random_state``, booleans, real numbers, array-likes), raising its
  ``InvalidParameterError`` (a subclass of both ``ValueError`` and
  ``TypeError``);
- the checks below, called first thing in the function body, for the integer
  counts and the string options, whose messages say what to pass instead and
  which ``validate_params`` cannot express (an int that is not a bool, a
  minimum with its reason).
"""

from __future__ import annotations

import numbers

__all__ = [
    "RANDOM_STATE",
    "TASKS",
    "check_int",
    "check_n_relevant",
    "check_n_samples",
    "check_option",
    "check_task",
]

#: The targets the simulations can draw.
TASKS = ("regression", "classification")

#: ``validate_params`` constraint of every generator's ``random_state``.
RANDOM_STATE = ["random_state"]


def check_option(name, value, options, *, hint=""):
    """Return ``value`` if it is one of the strings ``options``, else raise.

    Raises
    ------
    ValueError
        ``"{name}={value!r} is not supported; choose one of [...]{hint}."``
    """
    if not (isinstance(value, str) and value in options):
        raise ValueError(
            f"{name}={value!r} is not supported; choose one of {list(options)}{hint}."
        )
    return value


def check_task(task):
    """Return ``task`` if it is ``"regression"`` or ``"classification"``."""
    return check_option("task", task, TASKS)


def check_int(name, value, *, minimum=None, reason="", hint=""):
    """Return ``value`` as an int if it is an integer (not a bool) >= ``minimum``.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : object
        What was passed.
    minimum : int or None, default=None
        The smallest value accepted; None checks the type only.
    reason : str, default=""
        Appended to the message of a value below ``minimum``.
    hint : str, default=""
        Appended to the message of a value that is not an int.

    Returns
    -------
    int
        ``value`` as a Python int (numpy integers are accepted).

    Raises
    ------
    TypeError
        If ``value`` is a bool or not an integer (a float such as ``20.0``
        included: it is never rounded).
    ValueError
        If ``value < minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an int, got {value!r} ({type(value).__name__}){hint}."
        )
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value} must be at least {minimum}{reason}.")
    return int(value)


def check_n_samples(n_samples, *, minimum=1, reason=""):
    """Return ``n_samples`` as an int if it is an integer >= ``minimum``."""
    return check_int("n_samples", n_samples, minimum=minimum, reason=reason)


def check_n_relevant(n_relevant):
    """Return ``n_relevant`` as an int; its range depends on X, checked later."""
    return check_int(
        "n_relevant",
        n_relevant,
        hint="; pass the number of relevant features, e.g. n_relevant=5",
    )
