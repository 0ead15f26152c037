"""The command line's option types: text to exactly what the selector takes.

argparse calls them on an option's text and reports their
``argparse.ArgumentTypeError`` as a usage error: the plain counts and
fractions, and the cut-off's options (``--alpha``, ``--threshold``,
``--max-features``), which :func:`option_type` makes argparse types.
"""

from __future__ import annotations

import argparse
import functools

import numpy as np
from sklearn.utils._param_validation import (
    InvalidParameterError,
    validate_parameter_constraints,
)

from .._stats._cutoff import CURVE_RULES, MAX_FEATURES_CONSTRAINTS, threshold_value

__all__ = [
    "column_list",
    "fraction",
    "job_count",
    "option_type",
    "parse_alpha",
    "parse_max_features",
    "parse_threshold",
    "positive_float",
    "positive_int",
]


def column_list(text: str) -> list[str]:
    """Read ``--drop``: column names separated by commas.

    Parameters
    ----------
    text : str
        The option's value, such as ``"id,name"``.

    Returns
    -------
    names : list of str
        The names, stripped, empty ones left out.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` names no column.
    """
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names no column")
    return names


def _number(text: str, cast, what: str):
    """``cast(text)``, or a usage error saying that ``text`` is not ``what``."""
    try:
        return cast(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def positive_int(text: str) -> int:
    """Read an integer option that must be at least 1 (``--cv``, ``--threads``).

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    value : int
        The integer.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not an integer, or is below 1.
    """
    value = _number(text, int, "an integer")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def job_count(text: str) -> int:
    """Read ``--n-jobs``: folds fitted at once, any integer but 0 (-1: all cores).

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    value : int
        The integer, never 0.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not an integer, or is 0.
    """
    value = _number(text, int, "an integer")
    if value == 0:
        raise argparse.ArgumentTypeError(
            "0 runs nothing; pass 1 or more folds at once, or -1 for all cores"
        )
    return value


def positive_float(text: str) -> float:
    """Read a number option that must be above 0 (``--learning-rate``).

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    value : float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not a number, or is not above 0.
    """
    value = _number(text, float, "a number")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be above 0")
    return value


def fraction(text: str) -> float:
    """Read a fraction option in (0, 1] (``--colsample``).

    Parameters
    ----------
    text : str
        The option's value.

    Returns
    -------
    value : float
        The fraction.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not a number in (0, 1].
    """
    value = positive_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at most 1")
    return value


# -- data --------------------------------------------------------------------------


def parse_threshold(text: str):
    """Read a threshold written as text: a number, or as :func:`threshold_value`.

    Raises ``ValueError`` with :func:`threshold_value`'s message otherwise.
    """
    try:
        value = float(text)
    except ValueError:
        threshold_value(np.zeros(1), text)  # raises on what it cannot read
        return text
    if np.isnan(value):
        raise ValueError(f"threshold={text!r} is not a number to compare with.")
    return value


def parse_max_features(text: str):
    """Read ``max_features`` written as text: a count, a fraction, "best" or "1se".

    Accepts exactly the values the selector's ``max_features`` accepts
    (:data:`MAX_FEATURES_CONSTRAINTS`) but callables; raises ``ValueError``
    otherwise.
    """
    if text in CURVE_RULES:  # the refit curve's rules
        return text
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = None
    try:
        if value is None:
            raise InvalidParameterError(text)
        validate_parameter_constraints(
            {"max_features": MAX_FEATURES_CONSTRAINTS},
            {"max_features": value},
            caller_name="TreeInnerSelector",
        )
    except InvalidParameterError:
        raise ValueError(
            f"{text!r} is neither a number of features (an integer, 1 or more), "
            "a fraction of them in (0, 1], nor a rule of the refit curve "
            "('best' or '1se')"
        ) from None
    return value


def parse_alpha(text: str):
    """Read ``alpha`` written as text: a level in (0, 1), or ``"none"``.

    Parameters
    ----------
    text : str
        A number strictly between 0 and 1, or ``"none"`` (any case) to turn
        the test off.

    Returns
    -------
    alpha : float or None
        The significance level, or None for ``"none"``.

    Raises
    ------
    ValueError
        If ``text`` is neither.

    Examples
    --------
    >>> parse_alpha("0.01")
    0.01
    >>> parse_alpha(" None ") is None
    True
    """
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise ValueError(
            f"{text!r} is not a significance level: pass a number between 0 and "
            "1 (such as 0.05), or 'none' to select by --threshold alone"
        )
    return value


def option_type(parse):
    """Make a parser of this module an argparse ``type`` of the command line.

    Parameters
    ----------
    parse : callable
        :func:`parse_alpha`, :func:`parse_threshold` or
        :func:`parse_max_features`: text to value, ``ValueError`` otherwise.

    Returns
    -------
    read : callable
        ``parse``, its ``ValueError`` raised as ``argparse.ArgumentTypeError``
        so that argparse reports the message itself as a usage error.

    Examples
    --------
    >>> option_type(parse_threshold)("0.5*mean")
    '0.5*mean'
    """

    @functools.wraps(parse)
    def read(text: str):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from e

    return read
