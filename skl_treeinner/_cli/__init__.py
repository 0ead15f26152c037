"""The command line, ``python -m skl_treeinner`` (``_main``), and its demo.

``_options`` holds its options, ``_data`` reads the input file and writes the
output files, ``_output`` prints and draws the result; ``_demo`` is the demo's
data and comparison.
"""
