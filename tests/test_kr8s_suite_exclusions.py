"""tests/kr8s_suite/exclusions.toml stays true: every entry names a test of the installed
kr8s, says why, and appears once."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

from tests.conftest import ROOT

EXCLUSIONS = ROOT / "tests" / "kr8s_suite" / "exclusions.toml"


def _entries() -> list[tuple[str, str]]:
    listed = tomllib.loads(EXCLUSIONS.read_text())
    entries = [(test, group["reason"]) for group in listed["exclude"] for test in group["tests"]]
    entries += [(entry["test"], entry["reason"]) for entry in listed.get("xfail", [])]
    return entries


def test_every_entry_names_a_kr8s_test_and_a_reason() -> None:
    entries = _entries()
    assert entries
    for test, reason in entries:
        module, _, function = test.partition("::")
        assert module.startswith("test_") and module.endswith(".py"), test
        kr8s_module = importlib.import_module(f"kr8s.tests.{module.removesuffix('.py')}")
        assert callable(getattr(kr8s_module, function, None)), f"kr8s has no {test}"
        assert reason.strip(), test


def test_no_entry_is_listed_twice() -> None:
    tests = [test for test, _ in _entries()]
    assert len(tests) == len(set(tests))


def test_each_kr8s_test_module_has_its_wrapper() -> None:
    import kr8s.tests  # a namespace package: its modules are files

    modules = sorted(path.name for path in _kr8s_tests_dir(kr8s.tests).glob("test_*.py"))
    wrappers = sorted(path.name for path in (ROOT / "tests" / "kr8s_suite").glob("test_*.py"))
    assert wrappers == modules


def _kr8s_tests_dir(package: object) -> Path:
    return Path(next(iter(package.__path__)))  # type: ignore[attr-defined]
