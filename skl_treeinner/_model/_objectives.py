"""Library-neutral training objectives: target checks and loss gradients.

TreeInner (paper 000, Def. 4, Eq. 20) needs, for every tree m and row i, the
gradient g_{i,m} of the training loss at the margin f_[m-1](x_i) of the
ensemble *before* tree m. Readers translate a library's objective into one of
the classes here; everything downstream uses only ``gradient``.

Every gradient must be exactly the one the booster used while growing its
trees (including factors such as ``scale_pos_weight``): in-sample TreeInner
equals the booster's total gain (Prop. 3) only then, and the tests check that
equality against each library's own numbers.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax

__all__ = [
    "Objective",
    "SquaredError",
    "PseudoHuber",
    "SquaredLogError",
    "Logistic",
    "Poisson",
    "Gamma",
    "Tweedie",
    "Softmax",
    "Huber",
    "Fair",
    "OneVsRestLogistic",
    "Exponential",
]


class Objective:
    """Base class of a training objective.

    Subclasses set ``name`` and ``n_outputs`` and implement
    :meth:`gradient`. ``validate_target`` validates a target that has already
    been checked to be finite and one-dimensional.
    """

    name: str = ""
    n_outputs: int = 1
    is_classifier: bool = False
    #: Inverse link from the margin to the prediction: ``"identity"``,
    #: ``"log"`` (prediction exp(margin)), ``"logit"`` (sigmoid),
    #: ``"softmax"``, or ``None`` where no single prediction scale applies.
    link: str | None = None
    #: Whether the loss gradient is affine in y given the margin (squared
    #: error, Poisson, gamma, Tweedie, log-loss without ``scale_pos_weight``):
    #: then a row's TreeInner term is affine in y too, and the target's own
    #: noise in it is the slope times y's spread, Var(y | x) = φ V(E[y | x])
    #: (:meth:`variance`; ``_scoring._noise.row_noise``). Other classifiers' noise is
    #: computed from their finitely many labels instead.
    affine_in_target: bool = False
    #: Whether the gradient is (mean - y) up to the weight, so that Σ g² falls
    #: with the loss (the divergence check of ``_engines/memory/_crossfit``).
    gradient_is_residual: bool = False

    def class_probabilities(self, margin: np.ndarray) -> np.ndarray:
        """Return a classifier's probabilities of classes 0..C-1 at the margins.

        ``margin`` has shape (n_samples, n_outputs); the result
        (n_samples, n_classes). Only for classifiers.
        """
        raise NotImplementedError(f"{self.name} is not a classifier objective")

    def mean(self, margin: np.ndarray) -> np.ndarray:
        """Return the prediction E[y | x] at raw margins (n, 1) of one output."""
        if self.link == "log":
            return np.exp(margin[:, 0])
        if self.link == "logit":
            return expit(margin[:, 0])
        return margin[:, 0]

    def variance(self, mean: np.ndarray) -> np.ndarray:
        """Return the variance function V(μ): Var(y | x) = φ V(μ), φ unknown.

        The loss's own (that of the exponential family whose deviance it is):
        1 for squared error, μ for Poisson, μ² for gamma, μ^ρ for Tweedie,
        μ(1 - μ) for log-loss. Only where ``affine_in_target``.
        """
        raise NotImplementedError(f"{self.name} has no variance function here")

    def gradient(self, margin: np.ndarray, y: np.ndarray) -> np.ndarray:
        """First derivative of the loss with respect to the margin.

        Parameters
        ----------
        margin : ndarray of shape (n_samples, ..., n_outputs)
            Raw margins (before the inverse link), last axis over outputs.
        y : ndarray of shape (n_samples,)
            Target, already passed through :meth:`validate_target`.

        Returns
        -------
        ndarray of the same shape as ``margin``
        """
        raise NotImplementedError

    def hessian(self, margin: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Second derivative of the loss with respect to the margin (diagonal).

        Same shapes as :meth:`gradient`. Used by unbiased gain (paper 002,
        Eq. 5), which estimates leaf weights G'/H' on held-out rows.
        """
        raise NotImplementedError(
            f"The {self.name!r} objective has no hessian implemented."
        )

    def validate_target(self, y: np.ndarray) -> np.ndarray:
        """Validate ``y`` for this objective and return it as float64."""
        return np.asarray(y, dtype=np.float64)

    def _y(self, y: np.ndarray, margin: np.ndarray) -> np.ndarray:
        # Broadcast y of shape (n,) against margins of shape (n, ..., 1).
        return y.reshape((-1,) + (1,) * (margin.ndim - 1))

    def __repr__(self) -> str:
        params = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(vars(self).items()))))


def _require_target(cond: bool, objective: Objective, what: str) -> None:
    if not cond:
        raise ValueError(
            f"y is not valid for the {objective.name!r} objective: {what}. "
            "Pass the target the model was trained on."
        )


def _labels_in_unit_interval(objective: Objective, y: np.ndarray) -> np.ndarray:
    """``validate_target`` of the objectives on 0/1 labels (or probabilities)."""
    y = Objective.validate_target(objective, y)
    _require_target(
        bool(np.all((y >= 0) & (y <= 1))), objective, "labels must lie in [0, 1]"
    )
    return y


def _binary(p):
    return np.column_stack([1.0 - p, p])


class SquaredError(Objective):
    """Squared error, L = (y - f)^2 / 2, gradient f - y."""

    gradient_is_residual = True

    name = "squared_error"
    link = "identity"
    affine_in_target = True

    def variance(self, mean):  # noqa: D102
        return np.ones_like(mean)

    def gradient(self, margin, y):  # noqa: D102
        return margin - self._y(y, margin)

    def hessian(self, margin, y):  # noqa: D102
        return np.ones(np.broadcast_shapes(margin.shape, self._y(y, margin).shape))


class PseudoHuber(Objective):
    """Pseudo-Huber loss with slope delta: gradient z / sqrt(1 + (z/delta)^2)."""

    name = "pseudo_huber"
    link = "identity"

    def __init__(self, slope: float = 1.0):
        self.slope = float(slope)

    def gradient(self, margin, y):  # noqa: D102
        z = margin - self._y(y, margin)
        return z / np.sqrt(1.0 + (z / self.slope) ** 2)

    def hessian(self, margin, y):  # noqa: D102
        z = margin - self._y(y, margin)
        return (1.0 + (z / self.slope) ** 2) ** -1.5


class SquaredLogError(Objective):
    """Squared log error, L = (log1p(f) - log1p(y))^2 / 2 on the identity link."""

    name = "squared_log_error"
    link = "identity"

    def validate_target(self, y):  # noqa: D102
        y = super().validate_target(y)
        _require_target(
            bool(np.all(y > -1)), self, "every value must be greater than -1"
        )
        return y

    def gradient(self, margin, y):  # noqa: D102
        # XGBoost clips the prediction to > -1 + 1e-6 before taking the log.
        p = np.maximum(margin, -1.0 + 1e-6)
        return (np.log1p(p) - np.log1p(self._y(y, margin))) / (p + 1.0)

    def hessian(self, margin, y):  # noqa: D102
        # XGBoost's form, floored at 1e-6 as XGBoost floors it.
        p = np.maximum(margin, -1.0 + 1e-6)
        h = (np.log1p(self._y(y, margin)) - np.log1p(p) + 1.0) / (p + 1.0) ** 2
        return np.maximum(h, 1e-6)


class Logistic(Objective):
    """Binary log-loss on the logit link: gradient (sigmoid(f) - y) * w_pos.

    ``scale_pos_weight`` multiplies the gradient of rows whose label is
    exactly 1, as XGBoost does.
    """

    gradient_is_residual = True

    name = "logistic"
    link = "logit"
    is_classifier = True

    def __init__(self, scale_pos_weight: float = 1.0):
        self.scale_pos_weight = float(scale_pos_weight)

    @property
    def affine_in_target(self) -> bool:  # noqa: D102
        # p - y, unless label-1 rows' gradients are scaled. Affine, the noise
        # holds for targets anywhere in [0, 1] (reg:logistic, cross-entropy).
        return self.scale_pos_weight == 1.0

    def variance(self, mean):  # noqa: D102
        return mean * (1.0 - mean)

    validate_target = _labels_in_unit_interval

    def gradient(self, margin, y):  # noqa: D102
        yy = self._y(y, margin)
        g = expit(margin) - yy
        if self.scale_pos_weight != 1.0:
            g = g * np.where(yy == 1.0, self.scale_pos_weight, 1.0)
        return g

    def class_probabilities(self, margin):  # noqa: D102
        return _binary(expit(margin[:, 0]))

    def hessian(self, margin, y):  # noqa: D102
        yy = self._y(y, margin)
        p = expit(margin)
        h = p * (1.0 - p)
        if self.scale_pos_weight != 1.0:
            h = h * np.where(yy == 1.0, self.scale_pos_weight, 1.0)
        return h


class Poisson(Objective):
    """Poisson deviance on the log link: gradient exp(f) - y."""

    gradient_is_residual = True

    name = "poisson"
    link = "log"
    affine_in_target = True

    def variance(self, mean):  # noqa: D102
        return mean

    def validate_target(self, y):  # noqa: D102
        y = super().validate_target(y)
        _require_target(bool(np.all(y >= 0)), self, "counts must be non-negative")
        return y

    def gradient(self, margin, y):  # noqa: D102
        return np.exp(margin) - self._y(y, margin)

    def hessian(self, margin, y):  # noqa: D102
        # XGBoost grows trees with exp(f + max_delta_step) (0.7 by default)
        # as a safeguard; this is the loss's own second derivative.
        return np.exp(margin)


class Gamma(Objective):
    """Gamma deviance on the log link: gradient 1 - y exp(-f)."""

    name = "gamma"
    link = "log"
    affine_in_target = True

    def variance(self, mean):  # noqa: D102
        return mean**2

    def validate_target(self, y):  # noqa: D102
        y = super().validate_target(y)
        _require_target(bool(np.all(y > 0)), self, "values must be positive")
        return y

    def gradient(self, margin, y):  # noqa: D102
        return 1.0 - self._y(y, margin) * np.exp(-margin)

    def hessian(self, margin, y):  # noqa: D102
        return self._y(y, margin) * np.exp(-margin)


class Tweedie(Objective):
    """Tweedie deviance with power rho on the log link.

    Gradient -y exp((1 - rho) f) + exp((2 - rho) f).
    """

    name = "tweedie"
    link = "log"
    affine_in_target = True

    def variance(self, mean):  # noqa: D102
        return mean**self.power

    def __init__(self, power: float = 1.5):
        self.power = float(power)

    def validate_target(self, y):  # noqa: D102
        y = super().validate_target(y)
        _require_target(bool(np.all(y >= 0)), self, "values must be non-negative")
        return y

    def gradient(self, margin, y):  # noqa: D102
        rho = self.power
        return -self._y(y, margin) * np.exp((1.0 - rho) * margin) + np.exp(
            (2.0 - rho) * margin
        )

    def hessian(self, margin, y):  # noqa: D102
        rho = self.power
        yy = self._y(y, margin)
        return -yy * (1.0 - rho) * np.exp((1.0 - rho) * margin) + (2.0 - rho) * np.exp(
            (2.0 - rho) * margin
        )


class _MultiClass(Objective):
    """Base of objectives with one margin per class and targets 0..K-1."""

    is_classifier = True

    def __init__(self, n_classes: int):
        self.n_classes = int(n_classes)

    @property
    def n_outputs(self) -> int:  # noqa: D102
        return self.n_classes

    def validate_target(self, y):  # noqa: D102
        y = super().validate_target(y)
        _require_target(
            bool(np.all((y == np.round(y)) & (y >= 0) & (y < self.n_classes))),
            self,
            f"labels must be integers in [0, {self.n_classes})",
        )
        return y.astype(np.intp)


class Softmax(_MultiClass):
    """Multinomial log-loss over ``n_classes`` margins: gradient p_k - 1[y = k]."""

    gradient_is_residual = True

    name = "softmax"
    link = "softmax"

    def class_probabilities(self, margin):  # noqa: D102
        return softmax(margin, axis=-1)

    def gradient(self, margin, y):  # noqa: D102
        g = softmax(margin, axis=-1)
        yy = self._y(y, margin)
        g -= np.arange(self.n_classes) == yy
        return g

    def hessian(self, margin, y):  # noqa: D102
        # The diagonal p_k (1 - p_k). When growing trees XGBoost doubles it
        # and LightGBM multiplies it by K / (K - 1); a constant factor.
        p = softmax(margin, axis=-1)
        return p * (1.0 - p)


class Huber(Objective):
    """Huber loss with threshold delta (LightGBM ``huber``): gradient clip(f - y).

    The gradient is f - y clipped to [-delta, delta]; the hessian is 1.
    """

    name = "huber"
    link = "identity"

    def __init__(self, delta: float = 0.9):
        self.delta = float(delta)

    def gradient(self, margin, y):  # noqa: D102
        return np.clip(margin - self._y(y, margin), -self.delta, self.delta)

    def hessian(self, margin, y):  # noqa: D102
        return np.ones(np.broadcast_shapes(margin.shape, self._y(y, margin).shape))


class Fair(Objective):
    """Fair loss with constant c (LightGBM ``fair``): gradient c z / (|z| + c).

    With z = f - y; the hessian is c² / (|z| + c)².
    """

    name = "fair"
    link = "identity"

    def __init__(self, c: float = 1.0):
        self.c = float(c)

    def gradient(self, margin, y):  # noqa: D102
        z = margin - self._y(y, margin)
        return self.c * z / (np.abs(z) + self.c)

    def hessian(self, margin, y):  # noqa: D102
        z = margin - self._y(y, margin)
        return self.c**2 / (np.abs(z) + self.c) ** 2


class OneVsRestLogistic(_MultiClass):
    """K independent binary log-losses, one per class (LightGBM ``multiclassova``).

    Output k is the logit of class k against the rest, scaled by ``sigmoid``
    s: gradient s (sigmoid(s f_k) - 1[y = k]), hessian
    s² sigmoid(s f_k)(1 - sigmoid(s f_k)).
    """

    gradient_is_residual = True

    name = "one_vs_rest_logistic"

    def __init__(self, n_classes: int, sigmoid: float = 1.0):
        super().__init__(n_classes)
        self.sigmoid = float(sigmoid)

    def class_probabilities(self, margin):  # noqa: D102
        # Each output is one class against the rest; LightGBM's multiclassova
        # does not normalize them (its rows need not sum to 1): normalized
        # here, so that they are a distribution over the labels.
        p = expit(self.sigmoid * margin)
        return p / p.sum(axis=-1, keepdims=True)

    def gradient(self, margin, y):  # noqa: D102
        s = self.sigmoid
        return s * (
            expit(s * margin) - (np.arange(self.n_classes) == self._y(y, margin))
        )

    def hessian(self, margin, y):  # noqa: D102
        s = self.sigmoid
        p = expit(s * margin)
        return s * s * p * (1.0 - p)


class Exponential(Objective):
    """Exponential (AdaBoost) loss, L = y exp(-f) + (1 - y) exp(f), y in {0, 1}.

    scikit-learn's ``ExponentialLoss`` (``GradientBoostingClassifier(
    loss="exponential")``), on the half-logit link: gradient
    -y exp(-f) + (1 - y) exp(f), hessian y exp(-f) + (1 - y) exp(f).
    """

    name = "exponential"
    is_classifier = True

    validate_target = _labels_in_unit_interval

    def class_probabilities(self, margin):  # noqa: D102
        # The half-logit link: P(y = 1) = sigmoid(2 f), as scikit-learn.
        return _binary(expit(2.0 * margin[:, 0]))

    def gradient(self, margin, y):  # noqa: D102
        yy = self._y(y, margin)
        return -yy * np.exp(-margin) + (1.0 - yy) * np.exp(margin)

    def hessian(self, margin, y):  # noqa: D102
        yy = self._y(y, margin)
        return yy * np.exp(-margin) + (1.0 - yy) * np.exp(margin)
