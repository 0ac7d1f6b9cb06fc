"""The toolkit's own integration tests, run again on every selected backend.

Tests from ``tests/patch/test_helper.py``, ``tests/runtime/test_controller.py`` and
``tests/meta/test_finalizers.py`` that need only a kr8s client (no request log, fault injection
or fast-forwarded clock) are re-collected here with this module's ``kube`` fixture, which
depends on ``backend`` and so is parametrised by ``--backend``. Those tests use namespace
``default`` and fixed names, so on ``real`` (one control plane per session) ``default`` is
emptied before and after each of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import kr8s.asyncio
import pytest_asyncio

from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend

from ..meta import test_finalizers as finalizer_tests
from ..patch import test_helper as patch_tests
from ..runtime import test_apply as apply_tests
from ..runtime import test_controller as controller_tests
from .kube import MERGE, req

# PatchHelper: merges with concurrent writers, guarded lists, condition conflicts, errors.
test_concurrent_writers_changes_survive = patch_tests.test_concurrent_writers_changes_survive
test_owner_reference_guard_under_concurrent_write = (
    patch_tests.test_owner_reference_guard_under_concurrent_write
)
test_condition_conflict_unless_owned = patch_tests.test_condition_conflict_unless_owned
test_errors_name_object_and_field = patch_tests.test_errors_name_object_and_field

# Controller: watches, coalescing, ownership, mappers, predicates, retries, shutdown.
test_reconciles_every_object_with_a_kr8s_object = (
    controller_tests.test_reconciles_every_object_with_a_kr8s_object
)
test_rapid_updates_coalesce_and_the_last_state_wins = (
    controller_tests.test_rapid_updates_coalesce_and_the_last_state_wins
)
test_update_during_reconcile_runs_exactly_once_more = (
    controller_tests.test_update_during_reconcile_runs_exactly_once_more
)
test_a_key_is_never_reconciled_concurrently = (
    controller_tests.test_a_key_is_never_reconciled_concurrently
)
test_owned_children_reconcile_their_owner = (
    controller_tests.test_owned_children_reconcile_their_owner
)
test_watches_mapper_and_reconcile_all_on = controller_tests.test_watches_mapper_and_reconcile_all_on
test_predicates_filter_primary_events = controller_tests.test_predicates_filter_primary_events
test_errors_retry_and_the_loop_goes_on = controller_tests.test_errors_retry_and_the_loop_goes_on
test_requeue_after = controller_tests.test_requeue_after
test_the_cache_holds_a_controllers_own_writes_as_the_server_does = (
    controller_tests.test_the_cache_holds_a_controllers_own_writes_as_the_server_does
)
test_graceful_shutdown_waits_then_cancels = (
    controller_tests.test_graceful_shutdown_waits_then_cancels
)
test_object_that_fails_to_build_is_counted_and_the_loop_goes_on = (
    controller_tests.test_object_that_fails_to_build_is_counted_and_the_loop_goes_on
)

# Children by server-side apply (ctx.apply, ctx.apply_status, ctx.create_or_patch).
test_apply_creates_updates_and_removes_dropped_keys = (
    apply_tests.test_apply_creates_updates_and_removes_dropped_keys
)
test_apply_refuses_a_child_controlled_elsewhere = (
    apply_tests.test_apply_refuses_a_child_controlled_elsewhere
)
test_apply_without_force_names_the_conflicts = (
    apply_tests.test_apply_without_force_names_the_conflicts
)
test_apply_status = apply_tests.test_apply_status
test_apply_cluster_scoped_built_in_and_custom_kinds = (
    apply_tests.test_apply_cluster_scoped_built_in_and_custom_kinds
)
test_create_or_patch = apply_tests.test_create_or_patch

# Finalizers against a server.
test_finalizer_holds_deletion_until_removed = (
    finalizer_tests.test_finalizer_holds_deletion_until_removed
)

EMPTIED = (
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/secrets",
    "/apis/apps/v1/namespaces/default/deployments",
    "/apis/coordination.k8s.io/v1/namespaces/default/leases",
)


async def empty_default(backend: Backend) -> None:
    """Delete every object the reused tests create in ``default`` (finalizers first)."""
    for path in EMPTIED:
        listing = await req(backend, "GET", path)
        for item in listing.body["items"]:
            name = item["metadata"]["name"]
            if item["metadata"].get("finalizers"):
                await req(
                    backend,
                    "PATCH",
                    f"{path}/{name}",
                    {"metadata": {"finalizers": None}},
                    content_type=MERGE,
                )
            await req(backend, "DELETE", f"{path}/{name}")

    async def empty() -> bool:
        for path in EMPTIED:
            if (await req(backend, "GET", path)).body["items"]:
                return False
        return True

    await eventually(empty, 30.0, interval=0.05)


@pytest_asyncio.fixture
async def kube(backend: Backend) -> AsyncIterator[kr8s.asyncio.Api]:
    """A kr8s client for namespace ``default`` of ``backend`` (emptied on ``real``)."""
    if backend.real:
        await empty_default(backend)
    api = await kr8s.asyncio.Api(
        kubeconfig=backend.server.kubeconfig, namespace="default", bypass_factory=True
    )
    try:
        yield api
    finally:
        session = getattr(api, "_session", None)
        if session is not None:
            await session.aclose()
        if backend.real:
            await empty_default(backend)
