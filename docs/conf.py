"""Sphinx configuration of the documentation site (``sh scripts/docs``).

The sources are the repository itself (``sphinx-build -c docs . OUT``): the pages under
docs/ and the documents that already live beside what they describe (hardware/README.md,
firmware/PROTOCOL.md, docs/RULES.md, ...), each kept in one place and built as it is.
Why Sphinx with MyST-Parser and furo: docs/dev/docs.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

project = "truco-table"
author = "truco-table"
copyright = "2026, truco-table"
language = "es"
root_doc = "docs/index"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "layers",
    "page_language",  # each page's theme words in its language (docs/_ext/page_language.py)
]

# Only the documents of the site: every other Markdown file (tests/, node_modules, ...)
# stays out. A page not in a toctree is a warning, so a strict build fails on it.
include_patterns = [
    "docs/**.md",
    "hardware/*.md",
    "firmware/*.md",
    "tests/scenarios/README.md",
]
exclude_patterns = ["_build", ".venv*", "**/node_modules"]
source_suffix = {".md": "markdown"}

myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
# A shell line pygments cannot lex is shown plain: no reader is misled by that.
suppress_warnings = ["misc.highlighting_failure"]

# A reference to a symbol that no longer exists is a warning: -n (nitpicky) with -W.
nitpicky = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": False}
# Standard-library types in signatures: no intersphinx (the build is offline).
nitpick_ignore_regex = [
    ("py:class", r"(collections\.abc|typing|enum|re|pathlib|dataclasses)\..*"),
    ("py:class", r"(Iterator|Iterable|Mapping|Sequence|Callable|Self|Path)"),
    ("py:class", r"os\.PathLike"),
    # the engine's type aliases and inner classes (a signature names them; not in the API)
    ("py:class", r"controller\.engine\.hand\.(Board|Deal|Saved)"),
    # a quoted annotation that Sphinx splits at its commas
    ("py:class", r"'.*"),
]

html_theme = "furo"
html_title = "truco-table"
html_static_path: list[str] = []
# The site's root page sends the browser to the manual's first page (docs/index).
html_extra_path = ["_root"]
html_show_sourcelink = False
