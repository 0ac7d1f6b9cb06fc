"""mkdocs hooks (mkdocs.yml ``hooks:``): Sphinx roles in the docstrings become references.

The docstrings name other objects as Sphinx does (``:class:`~reconcile_kit.typed.CustomResource```),
which Markdown renders as the role's text followed by code. This turns each such reference
into the code alone, shortened as Sphinx's ``~`` asks, and, when it names a full
``reconcile_kit.`` path, into an optional mkdocs-autorefs reference: a link where the API
reference documents that object, plain code otherwise (never a warning).
"""

from __future__ import annotations

import html
import re
from typing import Any

ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|exc|obj):<code>(?P<target>[^<]*)</code>")


def _reference(match: re.Match[str]) -> str:
    target = html.unescape(match["target"])
    short = target.startswith("~")
    identifier = target.lstrip("~")
    title = f"<code>{html.escape(identifier.rpartition('.')[2] if short else identifier)}</code>"
    if not identifier.startswith("reconcile_kit."):
        return title
    return f'<autoref optional identifier="{html.escape(identifier)}">{title}</autoref>'


def on_page_content(html_text: str, **kwargs: Any) -> str:
    """Rewrite the Sphinx roles of a rendered page (mkdocs' ``on_page_content`` event)."""
    return ROLE.sub(_reference, html_text)
