"""A split's held-out rows, scored.

TreeInner's sums per leaf and terms per row (``_sums``), the noise floor
(``_noise``), the test of a column's resampled terms (``_permutation``), unbiased gain
(``_unbiased_gain``) and the columns a pipeline's steps make
(``_pipeline_columns``).
"""
