"""``reconcile-kit init``: the scaffolded project's own tests pass out of the box, its code
is lint-clean, and its operator runs under ``reconcile-kit`` (issue 18)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import kr8s.asyncio
import pytest
from click.testing import CliRunner

import reconcile_kit
from reconcile_kit.cli.commands import main
from reconcile_kit.client.transport import close_session
from reconcile_kit.testing import eventually

from ..kubehttp import call

BIN = Path(sys.executable).parent


def init(tmp_path: Path, *args: str) -> Path:
    project = tmp_path / "guestbook-operator"
    result = CliRunner().invoke(
        main, ["init", "guestbook-operator", "--directory", str(project), *args]
    )
    assert result.exit_code == 0, result.output
    return project


def test_scaffold_requires_the_version_that_made_it(tmp_path: Path) -> None:
    """The scaffold's dependency admits the reconcile-kit that wrote it, dev releases
    included (issue 29, point 5: ``reconcile-kit>=0.1`` excluded 0.1.0.dev0, and
    ``pip install -e '.[test]'`` failed with "No matching distribution found"): pip,
    offline, resolves the project against the installed reconcile-kit."""
    project = init(tmp_path)
    text = (project / "pyproject.toml").read_text()
    assert f'dependencies = ["reconcile-kit>={reconcile_kit.__version__}"]' in text
    resolve = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--no-index",
            "--no-build-isolation",
            "--quiet",
            "-e",
            f"{project}[test]",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resolve.returncode == 0, resolve.stdout + resolve.stderr


def test_scaffolded_project_tests_pass_out_of_the_box(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The scaffold's test passes on the backends this run's ``--backend`` selects (CI:
    ``--backend both`` in its real-backend step)."""
    backend = request.config.getoption("--backend")
    project = init(tmp_path)
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()) == [
        ".dockerignore",
        "Dockerfile",
        "README.md",
        "pyproject.toml",
        "src/guestbook_operator/__init__.py",
        "src/guestbook_operator/operator.py",
        "tests/test_operator.py",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--backend", backend],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{2 if backend == 'both' else 1} passed" in run.stdout
    for check in (["check"], ["format", "--check"]):
        lint = subprocess.run(
            [str(BIN / "ruff"), *check, "--no-cache", "."],
            cwd=project,
            capture_output=True,
            text=True,
        )
        assert lint.returncode == 0, lint.stdout + lint.stderr


def scaffold_command(project: Path, *args: str) -> str:
    """``reconcile-kit ARGS`` run with the scaffolded project's source on the path; its
    output (the command must succeed)."""
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    done = subprocess.run(
        [str(BIN / "reconcile-kit"), *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_scaffolded_operator_gives_its_crd_and_manifests(tmp_path: Path) -> None:
    project = init(tmp_path, "--kind", "Book", "--group", "library.example.org")
    crd = scaffold_command(project, "crd", "guestbook_operator.operator")
    assert "name: books.library.example.org" in crd
    manifests = scaffold_command(
        project, "manifests", "guestbook_operator.operator:manager", "--image", "gb:1"
    )
    assert "- guestbook_operator.operator:manager" in manifests
    dockerfile = (project / "Dockerfile").read_text()
    assert "USER 65532" in dockerfile and "python:3.11-slim" in dockerfile
    assert '"reconcile-kit", "run", "guestbook_operator.operator:manager"' in dockerfile


@pytest.mark.parametrize(
    ("kind", "plural"),
    [("Policy", "policies"), ("Ingress", "ingresses"), ("Box", "boxes"), ("Day", "days")],
)
def test_scaffolded_kinds_are_pluralized_as_kubebuilder_does(
    tmp_path: Path, kind: str, plural: str
) -> None:
    """``init --kind Policy`` serves ``policies`` (kubebuilder's plural), not the
    ``policys`` of CustomResource's default rule; the CRD the operator module gives says so."""
    project = init(tmp_path, "--kind", kind, "--group", "acme.example.org")
    crd = scaffold_command(project, "crd", "guestbook_operator.operator")
    assert f"name: {plural}.acme.example.org" in crd
    assert f"plural: {plural}" in crd


@pytest.mark.parametrize(
    ("name", "kind", "plural", "test_name"),
    [
        ("guestbook-operator", "Guestbook", "guestbooks", "test_a_guestbook_configmap"),
        ("my-operator", "MyOperator", "myoperators", "test_a_my_operator_configmap"),
        ("my-app-operator", "MyApp", "myapps", "test_a_my_app_configmap"),
        ("policy-operator", "Policy", "policies", "test_a_policy_configmap"),
        ("redis", "Redis", "redises", "test_a_redis_configmap"),
    ],
)
def test_the_default_kind_is_the_name_without_operator_and_never_a_determiner(
    tmp_path: Path, name: str, kind: str, plural: str, test_name: str
) -> None:
    """``init my-operator`` scaffolded kind ``My`` serving ``mies`` and a test named
    ``test_a_mies_configmap_...``: the kind is NAME without ``-operator`` unless only a
    determiner would be left, its plural kubebuilder's, the test named by the singular."""
    project = tmp_path / name
    result = CliRunner().invoke(main, ["init", name, "--directory", str(project)])
    assert result.exit_code == 0, result.output
    package = name.replace("-", "_")
    operator = (project / "src" / package / "operator.py").read_text()
    assert f'class {kind}(CustomResource, group=GROUP, version="v1", kind="{kind}"' in operator
    crd = scaffold_command(project, "crd", f"{package}.operator")
    assert f"plural: {plural}\n" in crd and f"kind: {kind}\n" in crd
    test = (project / "tests" / "test_operator.py").read_text()
    assert f"async def {test_name}_holds_its_greeting(" in test


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Guestbook", "DNS label"),
        ("9lives", "DNS label"),
        ("class", "Python keyword"),
        ("operator", "standard library"),  # src/operator/operator.py: operator.operator
        ("kr8s", "dependencies"),
    ],
)
def test_bad_project_names_are_refused_with_the_reason(
    tmp_path: Path, name: str, problem: str
) -> None:
    result = CliRunner().invoke(main, ["init", name, "--directory", str(tmp_path / "p")])
    assert result.exit_code == 2, result.output  # a usage error, as click's
    assert "Invalid value for 'NAME'" in result.output and problem in result.output


def test_init_never_overwrites_a_project(tmp_path: Path) -> None:
    project = init(tmp_path)
    result = CliRunner().invoke(main, ["init", "guestbook-operator", "--directory", str(project)])
    assert result.exit_code == 2, result.output
    assert "'--directory'" in result.output and "is not empty" in result.output


async def test_the_scaffold_runs_on_a_fresh_embedded_server(tmp_path: Path) -> None:
    """The scaffold README's "try it, no cluster" line: ``reconcile-kit run ...
    --embedded`` installs the CRD of the manager's typed kind in the fresh server (it had
    none: the reflector's LIST was a 404 every second), and a Guestbook created there gets
    its ConfigMap and Ready."""
    project = init(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    proc = await asyncio.create_subprocess_exec(
        str(BIN / "reconcile-kit"),
        "run",
        "guestbook_operator.operator:manager",
        "--embedded",
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        lines = await _lines_until(proc.stdout, "try: ")
        assert "CRDs installed: guestbooks.guestbook.example.com" in lines
        kubeconfig = next(line for line in lines if line.startswith("kubeconfig: "))
        api = await kr8s.asyncio.api(kubeconfig=kubeconfig.split(": ", 1)[1])
        try:
            await _guestbook_gets_ready(api)
        finally:
            await close_session(api)
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 30) == 0


async def _lines_until(stream: asyncio.StreamReader, prefix: str) -> list[str]:
    lines: list[str] = []
    async with asyncio.timeout(60):
        while not lines or not lines[-1].startswith(prefix):
            line = (await stream.readline()).decode()
            assert line, f"run exited early: {lines}"
            lines.append(line.strip())
    return lines


async def _guestbook_gets_ready(api: kr8s.asyncio.Api) -> None:
    path = "/apis/guestbook.example.com/v1/namespaces/default/guestbooks"
    guestbook = {
        "apiVersion": "guestbook.example.com/v1",
        "kind": "Guestbook",
        "metadata": {"name": "demo"},
        "spec": {"greeting": "yo"},
    }
    status, body = await call(api, "POST", path, guestbook)
    assert status == 201, body

    async def ready() -> bool:
        _, obj = await call(api, "GET", f"{path}/demo")
        conditions: list[dict[str, Any]] = (obj.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    await eventually(ready, 30.0, what="the Guestbook Ready")
    status, configmap = await call(api, "GET", "/api/v1/namespaces/default/configmaps/demo")
    assert status == 200 and configmap["data"] == {"greeting": "yo"}
