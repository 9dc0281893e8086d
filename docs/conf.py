"""Sphinx configuration for arcnb's documentation site.

Built offline (``make docs``): no intersphinx inventory is fetched and no page asks
for anything from the network (no CDN script, font, analytics or icon). The example
pages are the notebooks executed by ``docs/execute_notebooks.py``; myst-nb renders
them as they are, without executing anything.

Strict builds (``sphinx-build -W --keep-going -n``) fail on a broken reference and,
through ``_ext/arcnb_docs.py``, on a public name without documentation.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
if os.environ.get("ARCNB_DOCS_USE_CHECKOUT", "1") == "1":
    # document the checkout's arcnb (not whichever one is installed elsewhere)
    sys.path.insert(0, str(ROOT))

import arcnb  # noqa: E402
from arcnb.report.notebooks import notebook_libraries  # noqa: E402

# myst-nb reads the notebooks with nbformat: jsonschema imported without the IRI
# grammars nbformat never uses (1.5 s of the build), as arcnb's notebook runner does
notebook_libraries()

project = "arcnb"
author = "the arcnb authors"
copyright = "the arcnb authors"  # noqa: A001
release = arcnb.__version__
version = release

extensions = [
    "myst_nb",                 # Markdown pages (MyST) and notebooks
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "arcnb_docs",              # API pages from __all__, the undocumented-name check
]

root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints",
                    "README.md"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb", ".rst": "restructuredtext"}
templates_path = []
nitpicky = True
# Nothing is fetched: third-party types (numpy, pandas, torch, the standard library)
# cannot be resolved without an inventory, so references to them are not checked.
# Every reference to an arcnb object must resolve (see arcnb_docs.ignore_external).
nitpick_ignore_regex = []
suppress_warnings = []

# ------------------------------------------------------------------------ MyST / myst-nb
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4          # GitHub-style anchors: guide/scoring.md#the-bundled-example
nb_execution_mode = "off"         # the example pages are executed before the build
nb_ipywidgets_js = {}             # no widget JavaScript from a CDN
nb_merge_streams = True
# a static page shows a widget's picture (image/png) instead of its (empty) JS view
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
]

# ------------------------------------------------------------------------ autodoc
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = True
autodoc_default_options = {"show-inheritance": True}
autosummary_generate = False
add_module_names = True
python_maximum_signature_line_length = 88

# ------------------------------------------------------------------------ HTML
html_theme = "pydata_sphinx_theme"
html_title = f"arcnb {release}"
html_static_path = []
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_theme_options = {
    "navbar_end": ["theme-switcher"],      # no icon links to external sites
    "footer_start": ["copyright"],
    "footer_center": [],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc"],
    "primary_sidebar_end": [],             # no ethical-ads slot
    "analytics": {},
    "icon_links": [],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "use_edit_page_button": False,
}
html_context = {"default_mode": "light"}
