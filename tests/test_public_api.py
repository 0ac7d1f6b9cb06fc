"""The public surface: what ``reconcile_kit`` and its modules export, and what the command
line imports before it needs to.

As httpx's tests do, ``__all__`` is pinned: a public name added or dropped by accident
fails here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import reconcile_kit

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"cli", "client", "manager", "meta", "patch", "runtime", "testing"}
# The embedded API server is internal: its public entry is reconcile_kit.testing.APIServer.
INTERNAL = ("reconcile_kit.testing.apiserver",)


def public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(reconcile_kit.__path__, "reconcile_kit."):
        if info.name.startswith(INTERNAL) or info.name.rpartition(".")[2].startswith("_"):
            continue
        if not info.ispkg:
            names.append(info.name)
    return sorted(names)


def test_package_all_is_sorted_and_resolves() -> None:
    assert reconcile_kit.__all__ == sorted(reconcile_kit.__all__)
    assert set(reconcile_kit.__all__) == set(reconcile_kit._EXPORTS)
    for name in reconcile_kit.__all__:
        assert getattr(reconcile_kit, name) is not None, name


def test_package_exposes_exactly_all() -> None:
    public = {
        name
        for name in dir(reconcile_kit)
        if not name.startswith("_") and not isinstance(getattr(reconcile_kit, name), ModuleType)
    }
    assert public - {"annotations"} == set(reconcile_kit.__all__)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Trigger'"):
        _ = reconcile_kit.Trigger  # type: ignore[attr-defined]


def test_every_name_the_readme_imports_is_public() -> None:
    readme = (ROOT / "README.md").read_text()
    imported = set()
    for match in re.finditer(r"^from reconcile_kit import (\([^)]*\)|[^\n]+)$", readme, re.M):
        names = match.group(1).strip("()").replace("\n", ",").split(",")
        imported |= {name.strip() for name in names if name.strip()}
    assert imported, "the README imports nothing from reconcile_kit"
    assert imported <= set(reconcile_kit.__all__)


@pytest.mark.parametrize("name", public_modules())
def test_module_all_lists_its_public_definitions(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    for item in exported:
        assert hasattr(module, item), f"{name}.__all__ names {item}, which it lacks"
    defined = {
        item
        for item, value in vars(module).items()
        if not item.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == name
    }
    assert defined <= set(exported), f"{name}: public but not in __all__: {defined - set(exported)}"


def imported_after(code: str) -> set[str]:
    """Module names loaded by a fresh interpreter after running ``code``."""
    script = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return set(result.stdout.split())


@pytest.mark.parametrize("argument", ["--version", "--help"])
def test_cli_help_and_version_import_neither_kr8s_nor_the_server(argument: str) -> None:
    code = (
        "from reconcile_kit.cli.commands import main\n"
        "try:\n"
        f"    main([{argument!r}])\n"
        "except SystemExit:\n"
        "    pass"
    )
    loaded = imported_after(code)
    heavy = {m for m in loaded if m.split(".")[0] in ("kr8s", "httpx", "aiohttp", "box")}
    ours = {m for m in loaded if m.startswith("reconcile_kit.")}
    assert not heavy
    # the event loop's choice (cli.loops) imports asyncio and click only
    assert ours <= {"reconcile_kit.cli", "reconcile_kit.cli.commands", "reconcile_kit.cli.loops"}


def test_the_embedded_server_serves_without_a_client_or_the_cel_command_line() -> None:
    """``reconcile-kit apiserver`` (and a restart of it) imports neither kr8s nor the
    ``cel`` package (whose own import loads its command line: typer, prompt_toolkit,
    rich) nor the webhooks' runtime: together ~0.6 s of its start."""
    loaded = imported_after("import reconcile_kit.testing.apiserver.server")
    heavy = {m for m in loaded if m.split(".")[0] in ("kr8s", "httpx", "cel", "typer")}
    assert not heavy
    assert "reconcile_kit.webhooks.admission" not in loaded


def test_the_core_loads_without_the_testing_package() -> None:
    loaded = imported_after("import reconcile_kit\nreconcile_kit.Manager")
    assert "reconcile_kit.manager.manager" in loaded
    assert not {m for m in loaded if m.startswith("reconcile_kit.testing")}


def test_sharding_is_public() -> None:
    from reconcile_kit.manager.sharding import Sharding

    assert reconcile_kit.Sharding is Sharding
    assert {"Manager", "LeaderElection", "Sharding"} <= set(reconcile_kit.__all__)
