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
