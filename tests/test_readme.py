"""README.md stays true: its code blocks compile and the quickstart really reconciles."""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path
from typing import Any

import kr8s

from reconcile_kit.testing import APIServer, eventually

from .kubehttp import call

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def quickstart() -> str:
    match = re.search(r"<!-- quickstart -->\n```python\n(.*?)```", README, flags=re.DOTALL)
    assert match, "README.md has no quickstart block"
    return match.group(1)


def test_every_python_block_compiles() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 4
    for block in blocks:
        compile(block, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def test_quickstart_is_about_twenty_lines() -> None:
    lines = [line for line in quickstart().splitlines() if line.strip()]
    assert 10 <= len(lines) <= 25


async def test_quickstart_reconciles(kube: kr8s.asyncio.Api, apiserver: APIServer) -> None:
    namespace: dict[str, Any] = {"__name__": "quickstart"}
    exec(compile(quickstart(), "README.md quickstart", "exec"), namespace)
    manager = namespace["manager"]
    manager.api = kube
    await call(
        kube,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        {"metadata": {"name": "settings"}, "data": {"a": "1", "b": "2"}},
    )
    task = asyncio.create_task(manager.run())
    controller = manager.controllers[0]
    await eventually(lambda: controller.running, 10)

    async def labelled() -> bool:
        _, body = await call(kube, "GET", "/api/v1/namespaces/default/configmaps/settings")
        return (body["metadata"].get("labels") or {}).get("example.com/keys") == "2"

    assert await controller.wait_reconciled(labelled, 10)
    manager.stop()
    await asyncio.wait_for(task, 10)


def test_the_test_command_is_what_ci_runs() -> None:
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci  # .ci/run reads the command from README.md
    command = re.search(r"<!-- test-command -->\n```sh\n(.*?)\n```", README)
    assert command and "pytest" in command.group(1)


def test_the_apiserver_signature_is_the_codes() -> None:
    """The README's ``APIServer(*, ...)`` line lists every keyword and default of
    ``APIServer.__init__``, in order (it once lacked three)."""
    import inspect

    match = re.search(r"`APIServer\(\*, (.*?)\)`", README, flags=re.DOTALL)
    assert match, "README.md has no APIServer(*, ...) signature"
    documented = [p.strip() for p in match.group(1).replace("\n", " ").split(",")]
    parameters = list(inspect.signature(APIServer.__init__).parameters.values())[1:]
    actual = [f"{p.name}={p.default!r}".replace("'", '"') for p in parameters]
    actual = [a.replace("100000", "100_000") for a in actual]
    assert documented == actual
