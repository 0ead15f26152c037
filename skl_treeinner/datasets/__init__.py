"""Data sets with a known ground truth, to check feature selection against.

The generators return the features, the target and a boolean mask of the
features the target truly depends on, so that any score of the features can be
judged by how well it ranks the relevant ones first (ROC AUC of the scores
against the mask, as in paper 000, Sec. 4).

- :func:`make_paper_simulation`: the simulated data of paper 000, Sec. 4.1.
- :func:`make_semi_synthetic`, :func:`load_semi_synthetic`: paper 000's
  semi-synthetic protocol (Sec. 4.1, "Genomic ChIP Dataset") applied to any
  real feature matrix, or to scikit-learn's bundled data sets.
- :func:`make_cardinality_simulation`: the null and power cases of paper 003,
  Sec. 5 (categorical noise with 10 to 100 levels).
- :func:`make_unbiased_gain_example`: Example 1 of paper 002, Sec. 4.2.
- :func:`make_time_series`, :func:`make_panel`: rows that depend on each
  other (persistent series with a lagged effect; entities with several rows),
  where shuffled folds leak (the user guide's "Time series and panels").
- :func:`make_feature_families`: columns in families (one-hot blocks, lags,
  engineered twins) whose members are weak alone (the user guide's "Feature
  groups").
- :func:`make_rare_levels`: a one-hot encoded categorical with rare levels
  that drives y, beside a noise one (docs/how-it-works.md, "What the test asks").

The generators live in ``_simulation``, ``_semi_synthetic``, ``_dependent``,
``_families`` and ``_onehot``; ``_checks`` validates their arguments. Every
generator is seeded by ``random_state`` and returns ``X, y, relevant``
(:func:`make_panel`: ``X, y, groups``; :func:`make_feature_families` also
the families, ``X, y, relevant, feature_groups``; :func:`make_rare_levels`
the noise dummies, ``X, y, relevant, noise_dummies``).
"""

# In the order of the list above, which the API reference page follows (its
# members are ordered as these imports are).
# isort: off
from ._simulation import make_paper_simulation
from ._semi_synthetic import make_semi_synthetic
from ._semi_synthetic import load_semi_synthetic
from ._simulation import make_cardinality_simulation
from ._simulation import make_unbiased_gain_example
from ._dependent import make_time_series
from ._dependent import make_panel
from ._families import make_feature_families
from ._onehot import make_rare_levels

# isort: on

__all__ = [
    "load_semi_synthetic",
    "make_cardinality_simulation",
    "make_feature_families",
    "make_panel",
    "make_paper_simulation",
    "make_rare_levels",
    "make_semi_synthetic",
    "make_time_series",
    "make_unbiased_gain_example",
]
