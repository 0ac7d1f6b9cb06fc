"""The health endpoints as kube-apiserver 1.32 serves them (k8s.io/apiserver
pkg/server/healthz): ``?verbose`` lists every check, ``?exclude=`` marks checks excluded
and warns about names that match none, each check has a path of its own under its root,
and anything else under a root (a trailing slash included) is Go's ServeMux 404."""

from __future__ import annotations

from collections.abc import Collection

import httpx

from reconcile_kit.testing.backends import Backend

from .kube import admin_http

HOOKS = [
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/storage-object-count-tracker-hook",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-apiserver-identity-lease-controller",
    "poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
    "poststarthook/start-legacy-token-tracking-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/bootstrap-controller",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-status-local-available-controller",
    "poststarthook/apiservice-status-remote-available-controller",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-discovery-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
]
LIVE = ["ping", "log", "etcd", *HOOKS]
READY = ["ping", "log", "etcd", "etcd-readiness", "informer-sync", *HOOKS, "shutdown"]
NOT_FOUND = (404, "404 page not found\n")


async def get(
    backend: Backend, path: str, params: list[tuple[str, str]] | None = None
) -> httpx.Response:
    """GET ``path`` as the tests' admin (health checks below a root are not public)."""
    async with admin_http(backend) as client:
        return await client.get(path, params=params)


def listing(checks: list[str], root: str, excluded: Collection[str] = ()) -> str:
    """The verbose body: one line per check, then ``<root> check passed``."""
    lines = [f"[+]{c} excluded: ok" if c in excluded else f"[+]{c} ok" for c in checks]
    return "".join(f"{line}\n" for line in [*lines, f"{root} check passed"])


async def test_roots_answer_ok_and_list_their_checks_when_verbose(backend: Backend) -> None:
    for root, checks in (("healthz", LIVE), ("livez", LIVE), ("readyz", READY)):
        plain = await get(backend, f"/{root}")
        assert (plain.status_code, plain.text) == (200, "ok")
        assert plain.headers["content-type"] == "text/plain; charset=utf-8"
        assert plain.headers["x-content-type-options"] == "nosniff"
        verbose = await get(backend, f"/{root}", [("verbose", "")])
        assert (verbose.status_code, verbose.text) == (200, listing(checks, root))


async def test_excluded_checks_are_marked_and_unknown_names_warned(backend: Backend) -> None:
    params = [("verbose", ""), ("exclude", "etcd"), ("exclude", "nope"), ("exclude", "a b")]
    params.append(("exclude", "log"))
    answer = await get(backend, "/livez", params)
    expected = listing(LIVE, "livez", {"etcd", "log"}).replace(
        "livez check passed\n",
        'warn: some health checks cannot be excluded: no matches for "a b","nope"\n'
        "livez check passed\n",
    )
    assert (answer.status_code, answer.text) == (200, expected)
    quiet = await get(backend, "/readyz", [("exclude", "nope")])
    assert (quiet.status_code, quiet.text) == (200, "ok")


async def test_each_check_has_a_path_of_its_own(backend: Backend) -> None:
    for path in ("/livez/ping", "/healthz/etcd", "/readyz/shutdown", "/readyz/informer-sync"):
        answer = await get(backend, path, [("verbose", "")])
        assert (answer.status_code, answer.text) == (200, "ok"), path
        assert answer.headers["content-type"] == "text/plain; charset=utf-8"
    hook = await get(backend, "/livez/poststarthook/rbac/bootstrap-roles")
    assert (hook.status_code, hook.text) == (200, "ok")


async def test_other_paths_under_a_root_are_not_found(backend: Backend) -> None:
    for path in ("/livez/", "/healthz/", "/livez/nope", "/livez/shutdown", "/livez/ping/"):
        answer = await get(backend, path)
        assert (answer.status_code, answer.text) == NOT_FOUND, path
        assert answer.headers["x-content-type-options"] == "nosniff"
    prefix = await get(backend, "/livez/poststarthook")
    assert (prefix.status_code, prefix.text) == NOT_FOUND
