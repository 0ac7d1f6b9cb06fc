"""The wheel ships every package of the tree and the examples (pyproject.toml lists them)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_lists_every_package_and_the_examples() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(path.parent.relative_to(ROOT).parts)
        for path in (ROOT / "reconcile_kit").rglob("__init__.py")
    }
    assert set(config["packages"]) == on_disk | {"reconcile_kit.examples"}
    assert config["package-dir"] == {"reconcile_kit.examples": "examples"}
    assert (ROOT / "examples" / "__init__.py").is_file()


def test_the_demo_loads_the_packaged_examples() -> None:
    from reconcile_kit.cli.demo import examples_dir, load_examples

    assert load_examples().__name__ == "reconcile_kit.examples.manager"
    assert (examples_dir() / "samples" / "ippool.yaml").is_file()


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build`` (no isolation: the test environment has setuptools and wheel)
    of the tree, once for this module: the folder holding the wheel and the sdist."""
    out = tmp_path_factory.mktemp("dist")
    build = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    return out


def test_wheel_and_sdist_hold_the_package_and_pass_twine_check(dist: Path) -> None:
    """``python -m build`` (no isolation: the test environment has setuptools and wheel):
    the wheel holds py.typed, the embedded server's OpenAPI descriptions, the demo's examples
    and samples, and no tests; the sdist has the README and CHANGELOG; ``twine check``
    passes; the version comes from one place."""
    import tarfile
    import zipfile

    import reconcile_kit

    out = dist
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    assert wheel.name == f"reconcile_kit-{reconcile_kit.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for required in (
        "reconcile_kit/py.typed",
        "reconcile_kit/testing/apiserver/openapi_docs.json.gz",
        "reconcile_kit/examples/website.py",
        "reconcile_kit/examples/website-crd.yaml",
        "reconcile_kit/examples/samples/ippool.yaml",
        "reconcile_kit/webhooks/server.py",
        "reconcile_kit/cli/scaffold.py",
    ):
        assert required in names, required
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "examples/"))]
    root = sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as archive:
        members = set(archive.getnames())
    for required in ("README.md", "CHANGELOG.md", "pyproject.toml"):
        assert f"{root}/{required}" in members, required
    assert not [m for m in members if "/.venv/" in m or m.endswith(".pyc")]
    twine = subprocess.run(
        [str(Path(sys.executable).parent / "twine"), "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert twine.returncode == 0, twine.stdout + twine.stderr


_CORE_IMPORTS = """
import importlib.util
import reconcile_kit
from reconcile_kit import Controller, Manager, PatchHelper
import reconcile_kit.manager, reconcile_kit.typed, reconcile_kit.webhooks
from reconcile_kit.client.extras import MissingExtraError
for module in ("jsonschema", "cel", "celpy"):
    assert importlib.util.find_spec(module) is None, module
try:
    from reconcile_kit.testing import APIServer
except MissingExtraError as error:
    print(error)
else:
    raise AssertionError("the embedded API server imported without its packages")
"""


def test_the_wheel_without_extras_runs_an_operator_without_the_test_servers_packages(
    dist: Path, tmp_path: Path
) -> None:
    """``pip install reconcile_kit-*.whl`` (no extras) in a fresh venv: the core imports
    (Manager, Controller, PatchHelper, typed, webhooks) and jsonschema and the CEL evaluator
    are not installed; the embedded API server and ``reconcile-kit demo`` say which extra
    installs them (``[testing]``)."""
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    imports = subprocess.run(
        [str(venv / "bin" / "python"), "-c", _CORE_IMPORTS],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert imports.returncode == 0, imports.stdout + imports.stderr
    assert "pip install 'reconcile-kit[testing]'" in imports.stdout
    demo = subprocess.run(
        [str(venv / "bin" / "reconcile-kit"), "demo", "--objects", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert demo.returncode == 1
    assert "pip install 'reconcile-kit[testing]'" in demo.stderr, demo.stderr
