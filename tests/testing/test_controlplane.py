"""ControlPlane without real binaries: where binaries are looked for, and start failures.

The real control plane itself is exercised by tests/conformance with --backend real.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from reconcile_kit.testing import ControlPlane, ControlPlaneError
from reconcile_kit.testing.controlplane import (
    ENV_BINARY_DIR,
    KUBERNETES_VERSION,
    default_binary_dir,
    find_binaries,
)

ROOT = Path(__file__).resolve().parents[2]


def fake_binaries(directory: Path, etcd: str = "exit 0", apiserver: str = "exit 0") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, body in (("etcd", etcd), ("kube-apiserver", apiserver)):
        path = directory / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return directory


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No binary-directory variables; an empty XDG cache."""
    monkeypatch.delenv(ENV_BINARY_DIR, raising=False)
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_default_directory_is_keyed_by_version_under_the_xdg_cache(no_env: Path) -> None:
    assert default_binary_dir() == (
        no_env / "cache" / "reconcile-kit" / "control-plane" / KUBERNETES_VERSION
    )
    assert default_binary_dir("v9.9.9").name == "v9.9.9"


def test_lookup_order(no_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_binaries() is None
    cached = fake_binaries(default_binary_dir())
    assert find_binaries() == cached
    assets = fake_binaries(no_env / "assets")
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets))
    assert find_binaries() == assets
    mine = fake_binaries(no_env / "mine")
    monkeypatch.setenv(ENV_BINARY_DIR, str(mine))
    assert find_binaries() == mine
    explicit = fake_binaries(no_env / "explicit")
    assert find_binaries(explicit) == explicit
    # A named directory missing a binary is not skipped over.
    (mine / "etcd").unlink()
    assert find_binaries() is None
    assert find_binaries(no_env / "nowhere") is None


def test_versions_match_the_build_script() -> None:
    pinned = dict(
        line.split("=", 1)
        for line in (ROOT / "controlplane" / "versions.env").read_text().splitlines()
        if line and not line.startswith("#")
    )
    assert pinned["KUBERNETES_VERSION"] == KUBERNETES_VERSION
    gomod = (ROOT / "controlplane" / "kube-apiserver" / "go.mod").read_text()
    assert f"require k8s.io/kubernetes {KUBERNETES_VERSION}\n" in gomod
    staging = "v0." + KUBERNETES_VERSION.split(".", 1)[1]
    assert f"k8s.io/api => k8s.io/api {staging}\n" in gomod
    etcd_mod = (ROOT / "controlplane" / "etcd" / "go.mod").read_text()
    assert f"go.etcd.io/etcd/server/v3 {pinned['ETCD_VERSION']}" in etcd_mod


async def test_missing_binaries_raise_naming_the_build_script(no_env: Path) -> None:
    with pytest.raises(ControlPlaneError, match="scripts/build-control-plane"):
        await ControlPlane().start()


async def test_a_process_that_exits_raises_with_its_log_and_cleans_up(tmp_path: Path) -> None:
    binaries = fake_binaries(tmp_path / "bin", etcd="echo 'etcd: bad flag' >&2; exit 3")
    plane = ControlPlane(binary_dir=binaries, startup_timeout=30)
    with pytest.raises(ControlPlaneError, match=r"(?s)etcd exited with status 3.*bad flag"):
        await plane.start()
    assert plane.workdir is not None and not plane.workdir.exists()


def test_readiness_timeout_raises_and_stops_the_process(tmp_path: Path) -> None:
    binaries = fake_binaries(tmp_path / "bin", etcd="exec sleep 60")
    plane = ControlPlane(binary_dir=binaries, startup_timeout=0.5, stop_timeout=5)
    with pytest.raises(ControlPlaneError, match=r"etcd not ready after 0.5s"):
        plane.start_sync()
    assert plane.workdir is not None and not plane.workdir.exists()


def test_kubeconfig_names_the_server_ca_and_token() -> None:
    plane = ControlPlane(token="secret")
    plane.url = "https://127.0.0.1:6443"
    config = plane.kubeconfig_dict()
    [cluster] = config["clusters"]
    assert cluster["cluster"]["server"] == "https://127.0.0.1:6443"
    assert "certificate-authority-data" in cluster["cluster"]
    assert config["users"] == [{"name": "admin", "user": {"token": "secret"}}]
    assert config["contexts"][0]["context"]["namespace"] == "default"


def test_build_script_check_mode_reports_a_missing_cache(no_env: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(no_env / "cache")}
    script = ROOT / "scripts" / "build-control-plane"
    assert subprocess.run(["bash", script, "--check"], env=env).returncode == 1
    printed = subprocess.run(
        ["bash", script, "--print-dir"], env=env, capture_output=True, text=True
    )
    assert printed.stdout.strip() == str(default_binary_dir())
