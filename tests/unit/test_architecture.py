"""The package's shape, held by tests: module and function sizes, parameters, names.

The import structure (layers, one dispatch place for the engines, engines
independent, Dask only in its engine) is held by the import-linter contracts
in pyproject.toml, which CI's lint step runs (``lint-imports``). These tests
hold what those contracts cannot see (issue 25).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(__file__).resolve().parents[2] / "skl_treeinner"
MODULES = sorted(PACKAGE.rglob("*.py"))

#: The most positional parameters of a function (``self``/``cls`` included).
MAX_POSITIONAL = 6
#: The longest function the package keeps, in lines (its docstring aside).
MAX_FUNCTION_LINES = 100
#: Compiled numba kernels take positional arguments only (numba has no
#: keyword-only parameters), and are long for speed (one pass, no calls the
#: compiler cannot inline); they take a model's arrays as structures
#: (``_kernels/_structures.py``), so within :data:`MAX_KERNEL_POSITIONAL`.
EXEMPT = {
    "_kernels/cpu/_residuals.py",
    "_kernels/cpu/_treeshap.py",
    "_kernels/cpu/_permute.py",
    "_kernels/cpu/_permute_shap.py",
    "_kernels/cpu/_shap_moments.py",
    "_kernels/cpu/_tree_paths.py",
    "_kernels/cuda/_residuals.py",
    "_kernels/cuda/_treeshap.py",
    "_kernels/_device_layout.py",
}
#: The most positional parameters of a compiled kernel, CUDA launches aside
#: (a launch takes arrays, and structures of them, as its arguments).
MAX_KERNEL_POSITIONAL = 10
#: argparse's declarative parser: one statement per option, nothing to split.
LONG_EXEMPT = {("_cli/_main.py", "build_parser")}


def _name(path):
    return str(path.relative_to(PACKAGE.parent))


def _inside(path):
    """The module's path inside the package, as EXEMPT names it."""
    return path.relative_to(PACKAGE).as_posix()


def role(source: str) -> str:
    """The first line of ``source``'s module docstring: the module's one role."""
    doc = ast.get_docstring(ast.parse(source)) or ""
    return doc.split("\n", 1)[0].strip()


def unnamed_modules(package: Path) -> list[str]:
    """The modules and folders of ``package`` its docstring does not name."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    parts = [p.stem for p in package.glob("*.py") if p.name != "__init__.py"]
    parts += [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(part for part in parts if part not in doc)


def too_many_positional(source: str) -> list[str]:
    """Functions of ``source`` (``__init__`` aside) over the positional limit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        count = len(node.args.posonlyargs) + len(node.args.args)
        if node.name != "__init__" and count > MAX_POSITIONAL:
            found.append(f"{node.name} (line {node.lineno}): {count}")
    return found


def _is_cuda_launch(node) -> bool:
    """Whether ``node`` is a ``@cuda.jit`` kernel (not a device function)."""
    for deco in node.decorator_list:
        call = deco.func if isinstance(deco, ast.Call) else deco
        if ast.unparse(call) == "cuda.jit":
            device = isinstance(deco, ast.Call) and any(
                k.arg == "device" for k in deco.keywords
            )
            return not device
    return False


def kernels_over_limit(source: str) -> list[str]:
    """Functions of ``source`` over MAX_KERNEL_POSITIONAL, CUDA launches aside."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef) or _is_cuda_launch(node):
            continue
        count = len(node.args.posonlyargs) + len(node.args.args)
        if count > MAX_KERNEL_POSITIONAL:
            found.append(f"{node.name} (line {node.lineno}): {count}")
    return found


def too_long_functions(source: str, module: str = "") -> list[str]:
    """Functions of ``source`` over :data:`MAX_FUNCTION_LINES`, docstrings aside."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if (module, node.name) in LONG_EXEMPT:
            continue
        lines = node.end_lineno - node.lineno + 1
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            if isinstance(first.value.value, str):
                lines -= first.end_lineno - first.lineno + 1
        if lines > MAX_FUNCTION_LINES:
            found.append(f"{node.name} (line {node.lineno}): {lines} lines")
    return found


def test_the_checks_catch_what_they_are_for(tmp_path):
    assert role('"""Read the model.\n\nMore."""\nx = 1\n') == "Read the model."
    assert role("x = 1\n") == ""
    (tmp_path / "__init__.py").write_text('"""Holds ``_a``."""\n')
    (tmp_path / "_a.py").write_text("")
    (tmp_path / "_b.py").write_text("")
    assert unnamed_modules(tmp_path) == ["_b"]
    source = "def f(a, b, c, d, e, f, g):\n    pass\n"
    assert too_many_positional(source) == ["f (line 1): 7"]
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert too_long_functions(f"def f():\n{body}") == [
        f"f (line 1): {MAX_FUNCTION_LINES + 1} lines"
    ]
    shorter = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))
    documented = 'def f():\n    """A\n\n    long docstring.\n    """\n' + shorter
    assert too_long_functions(documented) == []  # 100 lines, docstring aside
    keyword_only = "def f(a, b, c, d, e, f, *, g):\n    pass\n"
    assert too_many_positional(keyword_only) == []
    assert (
        too_many_positional(
            "class A:\n    def __init__(s, a, b, c, d, e, f):\n        pass\n"
        )
        == []
    )


def test_modules_are_found():
    assert len(MODULES) > 30
    assert PACKAGE / "_selection/_selector.py" in MODULES


# One role per module, whatever its size: every module says its role in its
# docstring's first line, and every folder's docstring names each of its
# modules, so that a new module is placed, with its role, where a reader looks.
@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_every_module_says_its_role(path):
    assert role(path.read_text(encoding="utf-8")), (
        f"{_name(path)} has no docstring saying what it is for; write its role "
        "in one line (and split it where it has two)."
    )


@pytest.mark.parametrize(
    "package",
    sorted(p.parent for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE),
    ids=_name,
)
def test_every_folder_names_its_modules(package):
    missing = unnamed_modules(package)
    assert not missing, (
        f"{_name(package)}/__init__.py does not name {missing}; say in its "
        "docstring what each is for (docs/core.md draws the folders)."
    )


def test_core_md_draws_every_folder_and_top_module():
    drawing = (ROOT / "docs" / "core.md").read_text(encoding="utf-8")
    parts = [p.name + "/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    parts += [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    missing = sorted(part for part in parts if part not in drawing)
    assert not missing, f"docs/core.md's drawing lacks {missing}"


@pytest.mark.parametrize(
    "path", [p for p in MODULES if _inside(p) not in EXEMPT], ids=_name
)
def test_no_function_takes_more_than_six_positional_parameters(path):
    offenders = too_many_positional(path.read_text(encoding="utf-8"))
    assert not offenders, (
        f"{_name(path)}: functions with more than {MAX_POSITIONAL} positional "
        f"parameters; make the rest keyword-only: {offenders}"
    )


def test_the_kernel_check_tells_launches_from_device_functions():
    many = ", ".join(f"a{i}" for i in range(11))
    launch = f"@cuda.jit\ndef k({many}):\n    pass\n"
    device = f"@cuda.jit(device=True)\ndef d({many}):\n    pass\n"
    compiled = f"@_jit\ndef c({many}):\n    pass\n"
    assert kernels_over_limit(launch) == []
    assert kernels_over_limit(device) == ["d (line 2): 11"]
    assert kernels_over_limit(compiled) == ["c (line 2): 11"]


@pytest.mark.parametrize(
    "path", [p for p in MODULES if _inside(p) in EXEMPT], ids=_name
)
def test_kernels_take_structures_not_long_argument_lists(path):
    offenders = kernels_over_limit(path.read_text(encoding="utf-8"))
    assert not offenders, (
        f"{_name(path)}: kernels with more than {MAX_KERNEL_POSITIONAL} "
        "positional parameters; pass the model's arrays as the structures of "
        f"_kernels/_structures.py: {offenders}"
    )


@pytest.mark.parametrize(
    "path", [p for p in MODULES if _inside(p) not in EXEMPT], ids=_name
)
def test_no_function_over_a_hundred_lines(path):
    offenders = too_long_functions(path.read_text(encoding="utf-8"), _inside(path))
    assert not offenders, (
        f"{_name(path)}: functions over {MAX_FUNCTION_LINES} lines (docstring "
        f"aside); split them into steps (parse, build, check): {offenders}"
    )


#: Where Dask may be named in code: its engine, and the one dispatch place.
DASK_PLACES = ("_engines/dask/", "_engines/__init__.py")


def dask_names(source: str) -> list[str]:
    """Names in ``source``'s code (not its strings or comments) that name Dask."""
    import io
    import tokenize

    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [
        f"{tok.string} (line {tok.start[0]})"
        for tok in tokens
        if tok.type == tokenize.NAME and "dask" in tok.string.lower()
    ]


def test_the_dask_check_catches_a_duck_typed_test():
    assert dask_names("ok = hasattr(X, '__dask_graph__')\n") == []  # a string
    assert dask_names("lazy = X.__dask_graph__ is not None\n") == [
        "__dask_graph__ (line 1)"
    ]
    assert dask_names("# Dask in a comment\nx = 1\n") == []


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in MODULES
        if not _name(p).removeprefix("skl_treeinner/").startswith(DASK_PLACES)
    ],
    ids=_name,
)
def test_only_the_dask_engine_and_the_dispatch_name_dask(path):
    # The in-memory path never decides on Dask: no import (lint-imports holds
    # that) and no duck-typed test either.
    found = dask_names(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{_name(path)} names Dask in its code: {found}. Ask the engines "
        "(skl_treeinner._engines.engine_for) instead."
    )


#: Booster libraries' parameter and class names: library knowledge, which
#: lives in the readers (``_readers/``: a reader's hooks or its registry row).
LIBRARY_NAMES = (
    # fit parameters and settings
    "categorical_feature",
    "categorical_features",
    "cat_features",
    "text_features",
    "embedding_features",
    "eval_set",
    "eval_X",
    "X_val",
    "monotone_constraints",
    "interaction_constraints",
    "feature_weights",
    "monotonic_cst",
    "interaction_cst",
    "max_ctr_complexity",
    "enable_categorical",
    "early_stopping_rounds",
    "tree_method",
    "nthread",
    "thread_count",
    # estimators
    "XGBModel",
    "XGBRegressor",
    "XGBClassifier",
    "DaskXGBRegressor",
    "DaskXGBClassifier",
    "LGBMModel",
    "LGBMRegressor",
    "LGBMClassifier",
    "DaskLGBMRegressor",
    "DaskLGBMClassifier",
    "CatBoostRegressor",
    "CatBoostClassifier",
    "HistGradientBoostingRegressor",
    "HistGradientBoostingClassifier",
    "GradientBoostingRegressor",
    "GradientBoostingClassifier",
)


def library_names(source: str) -> list[str]:
    """Library names in ``source``'s code: names and strings, docstrings aside."""
    import re

    pattern = re.compile(r"\b(" + "|".join(LIBRARY_NAMES) + r")\b")
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(
            node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
        )
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = None if id(node) in docstrings else node.value
        elif isinstance(node, ast.Name | ast.Attribute | ast.alias | ast.keyword):
            text = getattr(node, "id", None) or getattr(node, "attr", None)
            text = text or getattr(node, "name", None) or getattr(node, "arg", None)
        else:
            continue
        for match in pattern.finditer(text or ""):
            found.append(f"{match.group(0)} (line {node.lineno})")
    return found


def test_the_library_check_catches_a_parameter_in_code_only():
    assert library_names('"""Cut eval_set to the columns."""\n') == []
    assert library_names("# eval_set\nx = 1\n") == []
    assert library_names("p = params.get('eval_set')\n") == ["eval_set (line 1)"]
    assert library_names("from lightgbm import LGBMRegressor\n") == [
        "LGBMRegressor (line 1)"
    ]
    assert library_names("est.fit(X, y, categorical_feature=[0])\n") == [
        "categorical_feature (line 1)"
    ]


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if not _name(p).startswith("skl_treeinner/_readers/")],
    ids=_name,
)
def test_only_the_readers_name_a_librarys_parameters_or_classes(path):
    # A new library is a reader and a registry row (docs/core.md): every
    # other module asks the reader (positional settings a refit refuses,
    # fit parameters cut to a subset of the columns, early stopping).
    found = library_names(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{_name(path)} names a booster library's parameters or classes in its "
        f"code: {found}. Move that knowledge into the library's reader "
        "(skl_treeinner/_readers/) and ask the reader."
    )


@pytest.mark.parametrize(
    "page", sorted(ROOT.glob("docs/**/*.md")) + [ROOT / "README.md"], ids=str
)
def test_every_code_block_of_the_docs_is_closed(page):
    # A generated output once swallowed a heading: an empty block's closing
    # fence was not found, and the next block's opening closed it instead.
    fences = [line for line in page.read_text().splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0, f"{page}: an unclosed code block"
    closing = fences[1::2]
    assert all(line == "```" for line in closing), f"{page}: {closing}"
