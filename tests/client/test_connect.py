"""connect() names the kubeconfig it could not use: a file that does not exist, a
directory (tests/cli/test_errors.py runs the same through ``reconcile-kit run``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile_kit import KubeconfigError
from reconcile_kit.client.connect import connect


async def test_a_kubeconfig_that_does_not_exist_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "kc"
    with pytest.raises(KubeconfigError) as info:
        await connect(str(missing))
    assert str(info.value) == (
        f"no kubeconfig found (kubeconfig {missing}, which does not exist) and not in a cluster"
    )


async def test_kubeconfig_files_that_do_not_exist_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
    with pytest.raises(KubeconfigError) as info:
        await connect()
    assert str(info.value) == (
        f"no kubeconfig found ($KUBECONFIG names {first}, {second}, which do not exist)"
        " and not in a cluster"
    )


async def test_a_kubeconfig_that_is_a_directory_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kr8s's IsADirectoryError was reported as an API server that cannot be reached."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path))
    with pytest.raises(KubeconfigError, match=f"^kubeconfig {tmp_path}: is a directory"):
        await connect()
