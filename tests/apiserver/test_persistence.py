"""State kept in ``data_dir`` survives restarts, including SIGTERM of the CLI server."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import kr8s.asyncio

from reconcile_kit.testing import APIServer

from ..crds import WIDGETS, install_crd, widget, widget_crd
from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


async def test_state_survives_restart(tmp_path: Path) -> None:
    async with APIServer(data_dir=tmp_path) as server:
        api = await server.api()
        await install_crd(api, widget_crd())
        await call(api, "POST", WIDGETS, widget())
        await call(api, "POST", CM, {"metadata": {"name": "a"}, "data": {"k": "v"}})
        await call(api, "POST", CM, {"metadata": {"name": "gone"}})
        await call(api, "DELETE", f"{CM}/gone")
        rv = server.cluster.store.rv
    async with APIServer(data_dir=tmp_path) as server:
        api = await server.api()
        status, body = await call(api, "GET", f"{CM}/a")
        assert status == 200 and body["data"] == {"k": "v"}
        status, _ = await call(api, "GET", f"{CM}/gone")
        assert status == 404
        status, body = await call(api, "GET", f"{WIDGETS}/w1")
        assert status == 200 and body["spec"]["size"] == 1
        assert server.cluster.store.rv == rv
        status, body = await call(api, "POST", CM, {"metadata": {"name": "b"}})
        assert int(body["metadata"]["resourceVersion"]) == rv + 1
        namespaces = [n.name async for n in api.get("namespaces")]
        assert namespaces.count("default") == 1


async def _start_cli(tmp_path: Path, run: int) -> tuple[asyncio.subprocess.Process, Path]:
    # a new kubeconfig path per run: kr8s caches one Api per kubeconfig path
    kubeconfig = tmp_path / f"kubeconfig-{run}"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        "apiserver",
        "--data-dir",
        str(tmp_path / "data"),
        "--kubeconfig",
        str(kubeconfig),
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 30)
    assert b"listening on" in line
    return proc, kubeconfig


async def test_acknowledged_writes_survive_sigterm(tmp_path: Path) -> None:
    proc, kubeconfig = await _start_cli(tmp_path, 1)
    api = await kr8s.asyncio.api(kubeconfig=str(kubeconfig))
    for i in range(20):
        status, _ = await call(api, "POST", CM, {"metadata": {"name": f"cm{i}"}})
        assert status == 201
    os.kill(proc.pid, signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), 30) == 0
    proc, kubeconfig = await _start_cli(tmp_path, 2)
    try:
        api = await kr8s.asyncio.api(kubeconfig=str(kubeconfig))
        names = [c.name async for c in api.get("configmaps", namespace="default")]
        assert names == sorted(f"cm{i}" for i in range(20))
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
