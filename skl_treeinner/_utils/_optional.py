"""The one way to import an optional dependency.

The core needs numpy, scipy, scikit-learn and xgboost only; everything else is
an extra, imported where it is used. A missing one raises an ``ImportError``
that says what needed it and which extra installs it (MAPIE's lazy imports),
chained to the original error.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["import_optional", "optional_module"]


def import_optional(module: str, *, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise an ImportError naming the extra to install.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"matplotlib.pyplot"``.
    extra : str
        The extra of skl-treeinner that installs it, e.g. ``"plot"``.
    purpose : str
        What needs it, the start of the message, e.g. ``"drawing --plot"``.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    ImportError
        ``"{purpose} needs {package}, which is not installed: pip install
        {package} (or the "{extra}" extra: python -m pip install ".[{extra}]"
        in a clone of skl-treeinner)"``: true whether skl-treeinner came from
        a clone or an index.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        package = module.partition(".")[0]
        raise ImportError(
            f"{purpose} needs {package}, which is not installed: "
            f'pip install {package} (or the "{extra}" extra: python -m pip '
            f'install ".[{extra}]" in a clone of skl-treeinner)',
            name=package,
        ) from e


def optional_module(module: str) -> ModuleType | None:
    """Import ``module`` if it is installed, else return ``None``.

    For extras that only improve something that works without them (a tqdm
    progress bar instead of plain lines).
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
