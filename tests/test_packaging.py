"""The wheel ships every package of the tree and the examples (pyproject.toml lists them)."""

from __future__ import annotations

import tomllib
from pathlib import Path

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


def test_wheel_and_sdist_hold_the_package_and_pass_twine_check(tmp_path: Path) -> None:
    """``python -m build`` (no isolation: the test environment has setuptools and wheel):
    the wheel holds py.typed, the embedded server's OpenAPI descriptions, the demo's examples
    and samples, and no tests; the sdist has the README and CHANGELOG; ``twine check``
    passes; the version comes from one place."""
    import subprocess
    import sys
    import tarfile
    import zipfile

    import reconcile_kit

    out = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
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
