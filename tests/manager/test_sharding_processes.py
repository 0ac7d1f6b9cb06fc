"""Sharding across separate processes (benchmarks/sharding_processes.py's scenario): three
``reconcile-kit run`` replicas, the API server in its own process, a writer making
numbered changes throughout; the replica running the sharder SIGKILLed, an API server
restart, a graceful stop, a replica joining, one SIGSTOPped past its Lease then SIGCONT.
The correctness checks (the timings are the benchmark's, except the bounds issue 27 sets):
no key reconciled by two replicas at once, no change lost, no write landing on an object
the server had labelled for another replica, no stale label left, every change read within
Lease duration + 5 s (unless the machine was saturated by other work before the run
started: then the wait is reported, not checked).

The chaos run injects 5% 500s, 1% 409s and 0.25 s of latency into 5% of the requests (the
embedded server's fault injection; before kube-apiserver, benchmarks/faultproxy.py), on
the backends ``--backend`` selects."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from reconcile_kit.testing.backends import selected_backends
from reconcile_kit.testing.controlplane import find_binaries

from ..machine import busy_before

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import sharding_processes

LEASE = 3.0
CALM_OBJECTS = 150
CHAOS_OBJECTS = 1000


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend_name" in metafunc.fixturenames:
        metafunc.parametrize("backend_name", selected_backends(metafunc.config))


def run(backend_name: str, chaos: bool, objects: int) -> Any:
    if backend_name == "real" and find_binaries() is None:
        pytest.skip("no control plane: scripts/build-control-plane builds it")

    async def body(workdir: Path, conn: Any, server: Any) -> dict[str, Any]:
        return await sharding_processes.scenario(workdir, conn, objects, LEASE, 30.0, server)

    return sharding_processes.on_backend(backend_name, chaos, body)


def check(results: dict[str, Any], objects: int, busy: bool = False) -> None:
    # settled() raised if any final annotation differed from its value
    assert results["overlaps"] == 0, results.get("overlapping")
    assert results["reconciled_keys"] == objects
    assert sum(results["cache_shares"]) == objects and all(results["cache_shares"])
    assert 0 < results["joined_share"] < objects
    assert results["lost_changes"] == 0
    assert results["foreign_writes"] == 0, results.get("foreign")
    assert results["stale_labels"] == 0
    assert results["stop_exit_seconds"] <= 30
    if busy:
        # On a machine other work already saturates, the replicas starve and the wait
        # measures the machine; benchmarks/sharding_processes.py --chaos reports it always.
        warnings.warn(
            f"machine busy before the run: change wait {results['change_wait_max']} s "
            f"not checked against {LEASE + 5} s",
            stacklevel=2,
        )
        return
    assert results["change_wait_max"] <= LEASE + 5, results


async def test_three_processes_share_the_objects_safely(backend_name: str) -> None:
    check(await run(backend_name, False, CALM_OBJECTS), CALM_OBJECTS)


async def test_under_faults_kills_restarts_and_pauses(backend_name: str) -> None:
    busy = busy_before()
    results = await run(backend_name, True, CHAOS_OBJECTS)
    print(results)  # the run's figures, for the record (pytest -s)
    check(results, CHAOS_OBJECTS, busy)
