"""Sphinx configuration of the provider's documentation site (``make docs``).

Sphinx because Airflow's own providers document themselves with it; MyST so the pages stay
Markdown; autodoc with real imports (Airflow 3.3 is installed in the docs venv), so the
reference shows what Python sees and a public module that fails to import fails the build.
The API pages are generated here, one per public module, on every build.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from docs_api import all_modules, is_public, public_modules  # noqa: E402

import airflow_provider_aihc  # noqa: E402

project = "airflow-provider-aihc"
author = "airflow-provider-aihc contributors"
copyright = "the airflow-provider-aihc contributors, Apache License 2.0"
release = version = airflow_provider_aihc.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "api/_template.rst"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"airflow-provider-aihc {release}"
html_static_path = ["_static"]
html_favicon = "_static/favicon.png"  # else every browser asks for a /favicon.ico (404)
html_show_sourcelink = False

autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Each name is documented once, in the module that defines it: a package's ``__all__``
# re-exports (``airflow_provider_aihc.watch.JobWatch``) are not repeated.
autodoc_default_options = {
    "members": True,
    "undoc-members": True,
    "show-inheritance": True,
    "ignore-module-all": True,
}
autodoc_inherit_docstrings = False

# Every reference to a public name must resolve (nitpicky, -n in make docs). References
# to other projects' objects (Airflow, pydantic, aiohttp, the standard library) cannot: no
# intersphinx inventory can be fetched here, so only those are let through; nor can those
# to internal modules, which have no page (they show as text).
_INTERNAL = "|".join(m.replace(".", r"\.") for m in all_modules() if not is_public(m))
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(?!airflow_provider_aihc\b).*"),
    (r"py:.*", r"airflow_provider_aihc\.(.*\.)?_.*"),  # private modules and names
    (r"py:.*", rf"({_INTERNAL})(\..*)?"),  # internal modules and their names
    # typing constructs as module-level aliases of the models (``Annotated[...]``, TypeVars)
    (r"py:.*", r"airflow_provider_aihc\..*\.(Annotated|T)"),
]
# Names imported only under TYPE_CHECKING reach the signatures as bare strings
# (``JobEvent``), which Sphinx cannot tell apart when two modules define that name; it
# links one of them. Missing references still fail the build (nitpicky, ``ref.class`` …).
suppress_warnings = ["myst.xref_ambiguous", "ref.python"]


def _write_api_pages() -> None:
    """One page per public module under ``api/``; stale pages of removed modules go."""
    out = DOCS / "api"
    wanted = {}
    for name in public_modules():
        title = f"``{name}``"
        wanted[f"{name}.rst"] = f"{title}\n{'=' * len(title)}\n\n.. automodule:: {name}\n"
    for stale in out.glob("airflow_provider_aihc*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    for filename, text in wanted.items():
        path = out / filename
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


_write_api_pages()
