"""The per-(row, tree) arithmetic after the booster has routed the rows.

``_backend`` is the one place that chooses where it runs: the numpy reference
(``_numpy``), the compiled CPU kernels (``_compiled``, over threads split by
``_row_blocks``) or a GPU model's GPU (``_device``, checked against the CPU,
with its leaves laid out on the host by ``_device_layout``). ``cpu/`` holds
the kernels numba compiles for the CPU, ``cuda/`` those numba-cuda compiles
for an NVIDIA GPU; both take the structures of ``_structures`` (a model's
arrays, built once per model, and the column test's units and rows).
"""
