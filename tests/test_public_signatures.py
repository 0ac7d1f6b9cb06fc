"""The public API's seams (issue 30): every public function and class documented, at most
ten ``Any`` left in public signatures (each with a comment saying why), and errors written
one way (a ``Raises:`` section, never "Raises X when..." in the prose).

Public: what tools/api_audit.py walks (modules and names without a leading underscore; the
embedded API server is internal).
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import api_audit  # noqa: E402

INLINE_RAISES = re.compile(r"(?<![\w`-])(?:Raises|raises) (?:an? )?[A-Z]\w*(?:Error|Exception)\b")


@pytest.fixture(scope="module")
def audit() -> api_audit.Audit:
    return api_audit.audit("reconcile_kit")


def test_every_public_function_and_class_is_documented(audit: api_audit.Audit) -> None:
    assert audit.undocumented == []


def test_at_most_ten_any_in_public_signatures_each_explained(audit: api_audit.Audit) -> None:
    assert len(audit.any_parameters) <= 10, audit.any_parameters
    for finding in audit.any_parameters:
        name = finding.split("(")[0].split(" -> ")[0]
        param = finding.split("(")[1].rstrip(")") if "(" in finding else None
        assert _explained(name, param), f"{finding}: say why with a '# Any: ...' comment"


def test_raises_is_one_section_style(audit: api_audit.Audit) -> None:
    inline = []
    for module in api_audit.public_modules("reconcile_kit", include_testing=True):
        for qualname, func in api_audit._functions(module):
            doc = inspect.getdoc(func) or ""
            prose = doc.split("\nRaises:\n")[0]
            if INLINE_RAISES.search(prose):
                inline.append(qualname)
    assert inline == []


def test_the_audit_sees_an_undocumented_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit can fail: a package with one undocumented function taking Any."""
    package = tmp_path / "probe_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from typing import Any\n\ndef f(x: Any) -> None:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = api_audit.audit("probe_pkg")
    assert found.undocumented == ["probe_pkg.f"]
    assert found.any_parameters == ["probe_pkg.f(x)"]


def _explained(name: str, param: str | None) -> bool:
    """Whether the ``Any`` of ``param`` (None: the return) of function ``name`` has a
    ``# Any:`` comment on its line or the line before (a dataclass's generated
    ``__init__``: the field's line in the class)."""
    target = _resolve(name)
    try:
        lines = inspect.getsource(target).splitlines()
    except OSError:  # a dataclass's __init__: look at its fields
        lines = inspect.getsource(_resolve(name.rsplit(".", 1)[0])).splitlines()
    pattern = re.compile(r"->\s*Any\b" if param is None else rf"\b{param}\s*:\s*Any\b")
    for number, line in enumerate(lines):
        if pattern.search(line):
            return "# Any:" in line or (number > 0 and "# Any:" in lines[number - 1])
    return False


def _resolve(name: str) -> object:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = __import__(".".join(parts[:cut]), fromlist=["_"])
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return inspect.unwrap(obj) if callable(obj) else obj
    raise LookupError(name)
