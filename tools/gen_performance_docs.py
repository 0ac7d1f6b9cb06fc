"""Keep ``docs/performance.md`` in step with README.md's figures (issue 31: the page showed
old figures contradicting the README's).

The page holds README.md's "Performance" section verbatim between two markers, below its
own introduction and above the figures only the page has (PatchHelper, typed resources,
the embedded server, server push-back). This tool copies the section in; a test
(tests/test_docs.py) fails when the copy differs from the README.

    python tools/gen_performance_docs.py        (rewrites docs/performance.md)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGE = ROOT / "docs" / "performance.md"
BEGIN = "<!-- README.md's Performance section, copied by tools/gen_performance_docs.py -->"
END = "<!-- end of README.md's Performance section -->"


def readme_section(readme: str) -> str:
    """README.md's "## Performance" section without its heading, up to the next "## "."""
    found = re.search(r"^## Performance\n(.*?)(?=^## |\Z)", readme, re.MULTILINE | re.DOTALL)
    if found is None:
        raise ValueError("README.md has no '## Performance' section")
    return found.group(1).strip("\n")


def render(page: str, readme: str) -> str:
    """``page`` with the README's section between the markers."""
    before, begin, rest = page.partition(BEGIN)
    _, end, after = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{PAGE.name} lacks the markers {BEGIN!r} ... {END!r}")
    return f"{before}{BEGIN}\n\n{readme_section(readme)}\n\n{END}{after}"


def main() -> int:
    rendered = render(PAGE.read_text(), README.read_text())
    PAGE.write_text(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
