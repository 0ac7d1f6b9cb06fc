"""Sharding across separate processes (benchmarks/sharding_processes.py at a small size):
three ``reconcile-kit run`` replicas and the embedded server in their own processes, a
mutator throughout, a replica SIGKILLed, one SIGTERMed, one joining. The correctness
checks only (timings are the benchmark's): no key reconciled by two replicas at once,
every object reconciled, caches sharing the objects, nothing lost."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import sharding_processes

OBJECTS = 150


@pytest.mark.parametrize("chaos", [False, True], ids=["calm", "chaos"])
async def test_three_processes_share_the_objects_safely(chaos: bool) -> None:
    async def body(workdir: Path, conn: Any, server: Any) -> dict[str, Any]:
        return await sharding_processes.scenario(workdir, conn, OBJECTS, 2.0, 30.0, server)

    results = await sharding_processes.on_backend("embedded", chaos, body)
    # settled() raised if any final annotation differed from its value: nothing was lost
    assert results["overlaps"] == 0, results.get("overlapping")
    assert results["reconciled_keys"] == OBJECTS
    assert sum(results["cache_shares"]) == OBJECTS and all(results["cache_shares"])
    assert results["kill_takeover_seconds"] >= 0 and results["stop_takeover_seconds"] >= 0
    assert 0 < results["joined_share"] < OBJECTS
