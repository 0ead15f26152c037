"""The per-(row, tree) arithmetic after the booster has routed the rows.

``_backend`` chooses where it runs (numpy, or the compiled kernels when numba
is installed) and splits rows over threads (``_row_blocks``). ``cpu/`` holds
the kernels numba compiles for the CPU, ``cuda/`` those numba-cuda compiles
for an NVIDIA GPU; ``_device`` runs a GPU model's sums there, checked against
the CPU, and ``_device_layout`` lays out its leaves on the host.
"""
