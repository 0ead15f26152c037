"""Griffe extension: read the numpydoc docstrings as Markdown for mkdocstrings.

The docstrings are written for ``help()`` and numpydoc, so they use a little
reStructuredText that Markdown would render wrongly:

- roles such as ``:func:`~skl_treeinner.tree_inner``` become cross-references
  to the API pages when the target is documented there, inline code otherwise
  (no remote inventory is fetched, so the build stays offline);
- maths written like ``f_[m-1](x_i)`` would be read as a link to ``x_i``: the
  bracket is escaped;
- a paragraph ending in ``::`` (reST's literal-block marker) ends in ``:``;
  the indented block after it is a code block in Markdown too;
- a definition list before the numpydoc sections (a term line, then its
  indented definition) becomes a bold term and an unindented paragraph, which
  Markdown would otherwise render as a code block after its first blank line.

Doctest lines (``>>>``, ``...``), literal blocks and inline code are left as
they are. Only the text handed to mkdocstrings changes; the docstrings in the
source, and what ``help()`` shows, do not.
"""

from __future__ import annotations

import re

import griffe

#: Objects and modules with a page in docs/api/: the package's public names
#: and every public member of the modules documented whole.
TOP_LEVEL = {
    "predecomp",
    "tree_inner",
    "global_importance",
    "TreeInnerSelector",
    "read_ensemble",
    "TreeEnsemble",
}
MODULES = {
    "skl_treeinner.datasets",
    "skl_treeinner.plotting",
    "skl_treeinner.exceptions",
}

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|obj|data|exc):`([^`]+)`")
_CODE = re.compile(r"(`+)(?:.+?)\1")
_BRACKET_PAREN = re.compile(r"(?<!\\)\[([^\[\]`]*)\]\(")


def _target(name: str, module: str) -> str | None:
    """Return the identifier of ``name`` on the API pages, or None."""
    if "." not in name:
        if name in TOP_LEVEL:
            return f"skl_treeinner.{name}"
        name = f"{module}.{name}"
    parent, _, last = name.rpartition(".")
    if name in MODULES:
        return name
    if parent == "skl_treeinner" and last in TOP_LEVEL:
        return name
    if parent in MODULES and not last.startswith("_"):
        return name
    return None


def _role(match: re.Match, module: str) -> str:
    target = match.group(1).strip()
    short = target.startswith("~")
    target = target.lstrip("~")
    shown = target.rsplit(".", 1)[-1] if short else target
    path = _target(target, module)
    if path is not None:
        return f"[`{shown}`][{path}]"
    return f"`{shown}`"


def _escape_outside_code(line: str) -> str:
    pieces, last = [], 0
    for code in _CODE.finditer(line):
        pieces.append(_BRACKET_PAREN.sub(r"\\[\1](", line[last : code.start()]))
        pieces.append(code.group(0))
        last = code.end()
    pieces.append(_BRACKET_PAREN.sub(r"\\[\1](", line[last:]))
    return "".join(pieces)


def _definition_lists(lines: list[str]) -> list[str]:
    """Un-indent the definitions of definition lists before the first section."""
    end = next(
        (
            i
            for i in range(len(lines) - 1)
            if lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        ),
        len(lines),
    )
    out, i, after_definition = [], 0, False
    while i < end:
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < end else ""
        starts_item = after_definition or not out or not out[-1].strip()
        term = line.strip() and not line.startswith(" ") and nxt.startswith("    ")
        if not (term and starts_item) or line.rstrip().endswith("::"):
            out.append(line)
            after_definition = False
            i += 1
            continue
        if out and out[-1].strip():
            out.append("")
        out += [f"**{line.strip()}**", ""]
        i += 1
        while i < end and (not lines[i].strip() or lines[i].startswith("    ")):
            out.append(lines[i][4:])
            i += 1
        after_definition = True
    return out + lines[end:]


def rst_to_markdown(text: str, module: str = "skl_treeinner") -> str:
    """Return ``text`` with the reST conventions above turned into Markdown.

    ``module`` is the module the docstring belongs to; bare names in roles are
    looked up there.
    """
    out = []
    literal = None  # indent of the line that opened a literal block
    for line in _definition_lists(text.splitlines()):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal is not None and (not stripped or indent > literal):
            out.append(line)  # inside the literal block
            continue
        literal = None
        if stripped.startswith((">>>", "...")):
            out.append(line)  # doctest
            continue
        line = _escape_outside_code(line)
        line = _ROLE.sub(lambda match: _role(match, module), line)
        if line.endswith("::"):
            literal = indent
            line = line[:-1] if stripped != "::" else ""
        out.append(line)
    return "\n".join(out)


class RstToMarkdown(griffe.Extension):
    """Rewrite every docstring with :func:`rst_to_markdown` once it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        """Convert the docstring of one object (every kind) as it is created."""
        if obj.docstring is not None:
            module = obj.path if obj.is_module else obj.module.path
            obj.docstring.value = rst_to_markdown(obj.docstring.value, module)
