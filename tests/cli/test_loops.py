"""``reconcile-kit run --loop``: the manager runs on the event loop asked for (asyncio's by
default; auto: uvloop when installed, as uvicorn's ``--loop auto``), and reconciles
there."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# a manager whose controller reconciles one ConfigMap, then reports its loop and stops
TARGET = """
import asyncio

from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Controller, Manager

manager = Manager(name="loops")


async def reconcile(obj, ctx):
    loop = type(asyncio.get_running_loop())
    print("reconciled", obj.name, "on", loop.__module__, flush=True)
    manager.stop()


manager.add(Controller(ConfigMap, namespace="default"), reconcile)


@manager.on_start
async def create(api):
    await ConfigMap({"metadata": {"name": "on-loop", "namespace": "default"}}, api=api).create()
"""

# the interpreter as if uvloop were not installed (an import of it fails)
WITHOUT_UVLOOP = (
    "import sys; sys.modules['uvloop'] = None; from reconcile_kit.cli.commands import main; main()"
)


async def run_target(tmp_path: Path, *flags: str, uvloop: bool = True) -> tuple[int, str, str]:
    target = tmp_path / "loops.py"
    target.write_text(TARGET)
    entry = ["-m", "reconcile_kit"] if uvloop else ["-c", WITHOUT_UVLOOP]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *entry,
        "run",
        f"{target}:manager",
        "--embedded",
        *flags,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize(
    ("flags", "module"),
    [((), "asyncio"), (("--loop", "auto"), "uvloop"), (("--loop", "uvloop"), "uvloop")],
)
async def test_the_manager_reconciles_on_the_loop_asked_for(
    tmp_path: Path, flags: tuple[str, ...], module: str
) -> None:
    pytest.importorskip("uvloop")
    code, out, err = await run_target(tmp_path, *flags)
    assert code == 0, err
    reported = out.split("reconciled on-loop on ", 1)[1].split()[0]
    assert reported.split(".")[0] == module, out


async def test_auto_falls_back_to_asyncio_and_uvloop_names_the_extra(tmp_path: Path) -> None:
    code, out, err = await run_target(tmp_path, "--loop", "auto", uvloop=False)
    assert code == 0, err
    assert "reconciled on-loop on asyncio" in out
    code, out, err = await run_target(tmp_path, "--loop", "uvloop", uvloop=False)
    assert code == 2 and "reconciled" not in out
    assert "uvloop is not installed" in err and "reconcile-kit[uvloop]" in err, err
