"""kube-apiserver's health endpoints: ``/healthz``, ``/livez``, ``/readyz`` and one path per
check under each (k8s.io/apiserver pkg/server/healthz, 1.32).

The checks are those kube-apiserver 1.32.5 installs with the control plane's flags (etcd,
the post-start hooks of the kube-apiserver, apiextensions and aggregator servers; readyz
adds etcd-readiness, informer-sync and shutdown). All of them pass here: the server is
ready once it answers.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from .gofmt import go_quote

__all__ = ["HealthAnswer", "answer_health", "health_root"]

_HOOKS = (
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
)
_LIVE = ("ping", "log", "etcd", *_HOOKS)
CHECKS: dict[str, tuple[str, ...]] = {
    "healthz": _LIVE,
    "livez": _LIVE,
    "readyz": ("ping", "log", "etcd", "etcd-readiness", "informer-sync", *_HOOKS, "shutdown"),
}
_TEXT = "text/plain; charset=utf-8"


@dataclass(frozen=True)
class HealthAnswer:
    """Status, plain-text body and headers of one health response."""

    status: int
    text: str
    headers: dict[str, str] = field(default_factory=dict)


def health_root(path: str) -> str | None:
    """``healthz``, ``livez`` or ``readyz`` when ``path`` is one of theirs."""
    root = path.split("/")[1] if path.startswith("/") else ""
    return root if root in CHECKS else None


def answer_health(path: str, excluded: Collection[str], verbose: bool) -> HealthAnswer:
    """The answer to ``path`` (under a health root): the root's summary, one check's
    ``ok``, or Go's ServeMux 404 for anything else (a trailing slash included)."""
    root = health_root(path) or ""
    if path == f"/{root}":
        return _root(root, excluded, verbose)
    if path[len(root) + 2 :] in CHECKS[root] and path[len(root) + 1] == "/":
        return HealthAnswer(200, "ok", {"Content-Type": _TEXT})
    return HealthAnswer(404, "404 page not found\n", _plain())


def _plain() -> dict[str, str]:
    return {"Content-Type": _TEXT, "X-Content-Type-Options": "nosniff"}


def _root(root: str, excluded: Collection[str], verbose: bool) -> HealthAnswer:
    """handleRootHealth: ``ok``, or each check's line and ``<root> check passed``."""
    if not verbose:
        return HealthAnswer(200, "ok", _plain())
    lines = [
        f"[+]{name} excluded: ok" if name in excluded else f"[+]{name} ok" for name in CHECKS[root]
    ]
    unmatched = sorted(set(excluded) - set(CHECKS[root]))
    if unmatched:
        quoted = ",".join(go_quote(name) for name in unmatched)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    return HealthAnswer(200, "\n".join([*lines, f"{root} check passed", ""]), _plain())
