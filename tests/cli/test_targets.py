"""One target loader for every subcommand: a TARGET that does not import gives the same
clean error from run, rbac, manifests and crd (issue 29, point 6: ``rbac pkg.mod`` printed a
raw traceback where ``crd`` printed ``Error: No module named ...``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from reconcile_kit.cli.commands import main

COMMANDS = {
    "run": ["run"],
    "rbac": ["rbac"],
    "manifests": ["manifests", "--image", "op:1"],
    "crd": ["crd"],
}


def invoke(command: str, target: str) -> tuple[int, str, BaseException | None]:
    args = [*COMMANDS[command][:1], target, *COMMANDS[command][1:]]
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output, result.exception


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_module_that_is_not_there_is_named_without_a_traceback(command: str) -> None:
    code, output, exception = invoke(command, "nosuch_pkg.operator:manager")
    assert code == 1, output
    assert isinstance(exception, SystemExit), exception  # click's error, not a traceback
    assert output == (
        "Error: nosuch_pkg.operator:manager: cannot import: No module named 'nosuch_pkg'\n"
    )


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_module_that_raises_on_import_is_named_with_its_error(
    command: str, tmp_path: Path
) -> None:
    broken = tmp_path / "broken_operator.py"
    broken.write_text("import json\nraise RuntimeError('no config')\n")
    code, output, exception = invoke(command, str(broken))
    assert code == 1, output
    assert isinstance(exception, SystemExit), exception
    assert output == f"Error: {broken}: importing it raised RuntimeError: no config\n"
    assert "Traceback" not in output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_function_that_raises_is_named_with_its_error(command: str, tmp_path: Path) -> None:
    """TARGET a function that raises: one line as for a module that raises on import (a
    full traceback before). ``crd`` reads classes and calls no function."""
    fnraise = tmp_path / "fnraise.py"
    fnraise.write_text("def manager():\n    raise RuntimeError('boom')\n")
    code, output, exception = invoke(command, str(fnraise))
    assert code == 1, output
    assert isinstance(exception, SystemExit), exception
    if command == "crd":
        assert output == f"Error: {fnraise}: defines no CustomResource class\n"
    else:
        assert output == f"Error: {fnraise}: calling manager() raised RuntimeError: boom\n"


def test_crd_names_the_target_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``crd notmgr.py`` named the internal module ``reconcile_kit_target_notmgr``; ``crd
    tctl.py:Nope`` says ``has no attribute`` as ``run`` does."""
    monkeypatch.chdir(tmp_path)
    Path("notmgr.py").write_text("x = 1\n")
    Path("tctl.py").write_text("x = 1\n")
    assert invoke("crd", "notmgr.py")[1] == "Error: notmgr.py: defines no CustomResource class\n"
    run = invoke("run", "tctl.py:Nope")[1]
    assert run == "Error: tctl.py:Nope: tctl.py has no attribute 'Nope'\n"
    assert invoke("crd", "tctl.py:Nope")[1] == run
    assert invoke("crd", "tctl.py:x")[1] == "Error: tctl.py:x: x is not a CustomResource class\n"


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("manager = 5\n", "manager is an int"),
        ("def manager():\n    pass\n", "manager() returned None"),
        ("async def manager():\n    return 'x'\n", "manager() returned a str"),
    ],
)
def test_a_target_of_the_wrong_type_says_what_it_is(source: str, said: str, tmp_path: Path) -> None:
    """A function returning nothing was reported as ``manager is a NoneType`` (and an int
    as ``a int``): the message says whether the attribute or its call's result is wrong."""
    operator = tmp_path / "wrong.py"
    operator.write_text(source)
    code, output, exception = invoke("run", str(operator))
    assert code == 1 and isinstance(exception, SystemExit), output
    assert output == (
        f"Error: {operator}: {said}, not a Manager, a MultiClusterManager or a list of "
        "(controller, reconcile) pairs\n"
    )
