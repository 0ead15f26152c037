"""Warnings raised by skl-treeinner.

Errors use the standard exception types (``TypeError`` for a model we cannot
read, ``ValueError`` for a configuration or input we cannot score correctly).
Warnings are reserved for cases where the numbers are still well defined but a
guarantee of the paper no longer holds.
"""

__all__ = ["IdentityWarning"]


class IdentityWarning(UserWarning):
    """A result is still computed, but one of the paper's identities is lost.

    Raised, for example, when a model was trained with L1 regularisation
    (``reg_alpha > 0``): PreDecomp still satisfies local accuracy (Prop. 1),
    but the node values are no longer the ℓ2-regularised values of Eq. 7, so
    in-sample TreeInner no longer equals the booster's total gain (Prop. 3).
    The message says which identity is lost and what to do instead.
    """
