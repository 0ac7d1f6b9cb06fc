"""Differential fuzzing: the same requests on the embedded server and on kube-apiserver
must get the same answers (issue 28).

For each kind four properties, each over ``$RECONCILE_KIT_FUZZ_EXAMPLES`` examples
(default 5):

* ``valid``: a random valid object is created on both; kube-apiserver must accept it
  (else the strategy is wrong) and both answers (status, stored object) must agree;
* ``invalid``: one mutation making the object invalid; status, reason, message and causes
  must agree;
* ``update``: a stored object is changed (allowed changes and immutable fields alike) and
  PUT back; the answers must agree;
* ``patch``: the same changes sent as a PATCH: a JSON merge patch, the same body as a
  strategic merge patch, or a JSON patch (drawn); the answers must agree.

The answers are compared after :data:`tests.fuzz.runner.NORMALISED`; the differences
found so far are expected failures, listed in :mod:`tests.fuzz.known`. It needs the real
control plane (``--backend real`` or ``both``) and skips otherwise.
``RECONCILE_KIT_FUZZ_SEED=N`` fixes the seed; ``RECONCILE_KIT_FUZZ_DERANDOMIZE=1`` derives
it from the test (CI). A failure prints the seed, the falsifying example and both answers.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import kr8s.asyncio
import pytest
from hypothesis import HealthCheck, Phase, given, note, seed, settings, target
from hypothesis import strategies as st

from reconcile_kit.client.transport import close_session
from reconcile_kit.testing import APIServer, ControlPlane
from reconcile_kit.testing.backends import selected_backends
from reconcile_kit.testing.controlplane import find_binaries

from .kinds import KINDS
from .known import KNOWN_DIFFERENCES
from .runner import PATCH_TYPES, Backends, Outcome, create, patch, update
from .spec import Change, KindSpec, Obj

T = TypeVar("T")

EXAMPLES = int(os.environ.get("RECONCILE_KIT_FUZZ_EXAMPLES", "5"))
"""Examples per kind and property (``$RECONCILE_KIT_FUZZ_EXAMPLES``)."""

DERANDOMIZE = os.environ.get("RECONCILE_KIT_FUZZ_DERANDOMIZE", "") not in ("", "0")
SHRINK = os.environ.get("RECONCILE_KIT_FUZZ_SHRINK", "") not in ("", "0")
SEED = int(os.environ.get("RECONCILE_KIT_FUZZ_SEED") or random.randrange(2**32))


class Loop:
    """The event loop the two clients live on, driven from the synchronous hypothesis test."""

    def __init__(self) -> None:
        self.runner = asyncio.Runner()

    def run(self, work: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await work

        return self.runner.run(wrapped())


@pytest.fixture(scope="module")
def backends(request: pytest.FixtureRequest) -> Iterator[tuple[Loop, Backends]]:
    """The embedded server (configured as the ``backend`` fixture's) and the session's
    real control plane, with a client each, on one event loop."""
    if "real" not in selected_backends(request.config):
        pytest.skip("the differential fuzzer compares with kube-apiserver: --backend real or both")
    if find_binaries() is None:
        pytest.skip("no kube-apiserver and etcd: build them with scripts/build-control-plane")
    plane: ControlPlane = request.getfixturevalue("control_plane")
    loop = Loop()
    with loop.runner:
        server = APIServer(
            garbage_collection=False,
            cluster_role_aggregation=False,
            authorization="RBAC",
            tls=True,
        )
        loop.run(server.start())
        apis: list[kr8s.asyncio.Api] = []
        try:
            for kubeconfig in (server.kubeconfig, plane.kubeconfig):
                apis.append(loop.run(_api(kubeconfig)))
            yield loop, Backends(apis[0], apis[1])
        finally:
            for api in apis:
                loop.run(close_session(api))
            loop.run(server.stop())


async def _api(kubeconfig: str) -> kr8s.asyncio.Api:
    api: kr8s.asyncio.Api = await kr8s.asyncio.Api(kubeconfig=kubeconfig, bypass_factory=True)
    return api


def _settings(test: Callable[..., None]) -> Callable[..., None]:
    configured = settings(
        max_examples=EXAMPLES,
        derandomize=DERANDOMIZE,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
        # Shrinking replays requests on both servers many times: minutes per failure.
        phases=[p for p in Phase if SHRINK or p not in (Phase.shrink, Phase.explain)],
    )(test)
    return configured if DERANDOMIZE else seed(SEED)(configured)


def _judge(outcome: Outcome) -> None:
    for exchange in outcome.exchanges:
        note(
            f"{exchange.method} {exchange.path}: embedded {exchange.embedded.status}, "
            f"real {exchange.real.status}"
        )
    real = outcome.last.real
    causes = (real.body.get("details") or {}).get("causes") if isinstance(real.body, dict) else None
    target(float(len(causes or [])), label="causes in kube-apiserver's answer")
    if outcome.report:
        how = (
            "RECONCILE_KIT_FUZZ_DERANDOMIZE=1" if DERANDOMIZE else f"RECONCILE_KIT_FUZZ_SEED={SEED}"
        )
        # An AssertionError (not pytest.fail) keeps hypothesis's notes: the falsifying
        # example and the exchanges above.
        raise AssertionError(f"{outcome.report}\n(reproduce with {how})")


def _property(kind: KindSpec, mode: str, loop: Loop, pair: Backends) -> Callable[..., None]:
    if mode == "valid":

        @given(kind.valid)
        def valid(obj: Obj) -> None:
            outcome = loop.run(create(pair, kind, obj))
            _judge(outcome)
            real = outcome.last.real
            assert real.status == 201, f"kube-apiserver rejects a 'valid' {kind.kind}: {real.body}"

        return valid
    if mode == "invalid":

        @given(kind.valid, kind.invalid)
        def invalid(obj: Obj, change: Change) -> None:
            _judge(loop.run(create(pair, kind, obj, change)))

        return invalid

    if mode == "patch":

        @given(kind.valid, kind.updates, st.sampled_from(sorted(PATCH_TYPES)))
        def patched(obj: Obj, change: Change, patch_type: str) -> None:
            _judge(loop.run(patch(pair, kind, obj, change, patch_type)))

        return patched

    @given(kind.valid, kind.updates)
    def updated(obj: Obj, change: Change) -> None:
        _judge(loop.run(update(pair, kind, obj, change)))

    return updated


@pytest.mark.parametrize("mode", ["valid", "update", "patch", "invalid"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_same_answers(
    kind: str, mode: str, backends: tuple[Loop, Backends], request: pytest.FixtureRequest
) -> None:
    """Random requests of ``mode`` for ``kind`` get the same answers from both servers."""
    known = [KNOWN_DIFFERENCES[kind, mode]] if (kind, mode) in KNOWN_DIFFERENCES else []
    if known:
        request.applymarker(pytest.mark.xfail(strict=False, reason="; ".join(known)))
    loop, pair = backends
    _settings(_property(KINDS[kind], mode, loop, pair))()


def test_every_kind_of_issue_28_is_fuzzed() -> None:
    """The kinds issue 28 names, no more, no fewer."""
    assert set(KINDS) == {
        *("Pod", "Service", "ConfigMap", "Secret", "ServiceAccount", "Namespace", "Event"),
        *("PersistentVolumeClaim", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"),
        *("Job", "CronJob", "Ingress", "NetworkPolicy", "PodDisruptionBudget"),
        *("HorizontalPodAutoscaler", "Role", "ClusterRole", "RoleBinding"),
        *("ClusterRoleBinding", "Lease"),
    }
