"""Secret-safe logs (issue 33): an operator whose children are Secrets, run with every logger at
DEBUG (reconcile_kit, kr8s, httpx, httpcore, aiohttp, asyncio), writing, patching, failing
on Secrets and answering metrics scrapes: not one line holds a Secret's value (as sent,
base64-encoded, or in a diff) or a bearer token. On kube-apiserver and the embedded server.

The records are read as the loggers emit them, before any handler's filter: the values must
not reach a log call at all (``configure_logging``'s RedactingFilter is a second line, for
tokens)."""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import Context, Controller, Manager, PatchHelper, set_controller_reference
from reconcile_kit.cli.manifests import DeploymentSettings, documents
from reconcile_kit.testing import eventually
from reconcile_kit.testing.backends import Backend
from reconcile_kit.webhooks import SelfSignedCertificates

from .kube import ok, req
from .test_metrics_auth import account
from .test_rbac_enforced import RBAC_KINDS, path_of

LOGGERS = ("", "reconcile_kit", "kr8s", "httpx", "httpcore", "aiohttp", "asyncio")


class Everything(logging.Handler):
    """Every record of every logger but the embedded API server's own (it runs in this
    process; it is the cluster, not the operator), formatted with its traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.startswith("reconcile_kit.testing"):
            self.lines.append(self.format(record))


@contextmanager
def everything_at_debug() -> Iterator[Everything]:
    handler = Everything()
    loggers = [logging.getLogger(name) for name in LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    logging.getLogger().addHandler(handler)
    try:
        yield handler
    finally:
        logging.getLogger().removeHandler(handler)
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def value(name: str) -> str:
    return f"{name}-{secrets.token_hex(8)}"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


async def test_no_secret_value_or_token_in_any_log_line(backend: Backend, tmp_path: Path) -> None:
    ns = backend.namespace
    password, token_value, rotated, unfit = (
        value("password"),
        value("token"),
        value("rotated"),
        value("unfit"),
    )
    immutable_value, changed_immutable = value("frozen"), value("thawed")
    done: dict[str, asyncio.Event] = {k: asyncio.Event() for k in ("child", "rotate", "frozen")}

    async def vault(obj: Any, ctx: Context) -> None:
        """A ConfigMap owns a Secret (applied: stringData and data), and tries one the
        server refuses (data that is not base64: 400)."""
        async with PatchHelper(obj):
            obj.raw["metadata"].setdefault("annotations", {})["vault"] = "synced"
            child: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"{obj.name}-creds", "namespace": ns},
                "stringData": {"password": password},
                "data": {"token": b64(token_value)},
            }
            set_controller_reference(obj, child)
            await ctx.apply(child)
        broken = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{obj.name}-broken", "namespace": ns},
            "data": {"token": unfit + "!"},  # not base64: 400, which the controller logs
        }
        done["child"].set()
        await ctx.apply(broken)

    async def rotate(obj: Any, ctx: Context) -> None:
        """Secrets reconciled themselves: the PatchHelper adds and changes data (its PATCH is
        logged at DEBUG), the reconcile logs what changed; an immutable one's change fails
        (422), with a traceback at DEBUG."""
        if obj.name.endswith("-broken"):
            return
        async with PatchHelper(obj) as helper:
            data = obj.raw.setdefault("data", {})
            if obj.raw.get("immutable"):
                data["key"] = b64(changed_immutable)
                done["frozen"].set()
            elif "rotated" not in data:
                data["rotated"] = b64(rotated)
                data["token"] = b64(rotated)
                done["rotate"].set()
            ctx.log.debug("changes: %s", helper.changes())

    operator = Manager(
        backend.api,
        name=backend.unique("vault"),
        namespace=ns,
        metrics_port=0,
        host="127.0.0.1",
        handle_signals=False,
        metrics_certificates=SelfSignedCertificates(["127.0.0.1"]),
    )
    operator.add(Controller(ConfigMap, retry=3600).owns(Secret), vault)
    operator.add(Controller(Secret, retry=3600), rotate)
    settings = DeploymentSettings(target="x:manager", namespace=ns, watch_namespace=ns)
    rbac = [
        d
        for d in documents(operator, settings)
        if d["kind"] in RBAC_KINDS and "namespace" not in d["metadata"]
    ]
    for doc in rbac:  # the metrics-reader ClusterRole, for the scraper below
        await ok(backend, "POST", path_of(doc), doc)
    reader = f"{operator.name}-metrics-reader"
    scraper = await account(backend, "scraper", reader)
    stranger = await account(backend, "stranger", None)
    with everything_at_debug() as log:
        running = asyncio.create_task(operator.run())
        try:
            await eventually(lambda: operator.ready() or running.done(), 30.0)
            frozen = {
                "metadata": {"name": "frozen"},
                "immutable": True,
                "data": {"key": b64(immutable_value)},
            }
            await ok(backend, "POST", f"/api/v1/namespaces/{ns}/secrets", frozen)
            await ok(
                backend,
                "POST",
                f"/api/v1/namespaces/{ns}/configmaps",
                {"metadata": {"name": "app"}},
            )
            for event in done.values():
                await asyncio.wait_for(event.wait(), 30.0)
            # the rotation reached the server (the values are real, not redacted there)
            creds = await ok(backend, "GET", f"/api/v1/namespaces/{ns}/secrets/app-creds")
            assert creds["data"]["rotated"] == b64(rotated)
            assert creds["data"]["password"] == b64(password)
            context = ssl.create_default_context(
                cadata=operator.metrics_certificates.ca_bundle.decode()  # type: ignore[union-attr]
            )
            url = f"https://127.0.0.1:{operator.ports['/metrics']}/metrics"
            async with httpx.AsyncClient(verify=context, timeout=30.0) as client:
                for token, status in ((scraper, 200), (stranger, 403), (scraper[:-4], 401)):
                    answer = await client.get(url, headers={"Authorization": f"Bearer {token}"})
                    assert answer.status_code == status, answer.text

            def failures_logged() -> bool:
                text = "\n".join(log.lines)
                return "app-broken" in text and "secrets/frozen" in text

            await eventually(failures_logged, 30.0, what="both failures logged")
        finally:
            operator.stop()
            await asyncio.wait_for(running, 30.0)
            await req(backend, "DELETE", f"{path_of(rbac[0])}/{reader}")
            await req(
                backend,
                "DELETE",
                f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{reader}-scraper",
            )
    output = "\n".join(log.lines)
    admin_token = backend.server.token
    plain = [password, token_value, rotated, unfit, immutable_value, changed_immutable]
    forbidden = plain + [b64(v) for v in plain] + [scraper, stranger, scraper[:-4]]
    if admin_token:
        forbidden.append(admin_token)
    leaks = [(v, line) for v in forbidden for line in output.splitlines() if v in line]
    assert leaks == [], leaks[:3]
    # and the run did log the Secrets' story, at DEBUG, with tracebacks
    assert "PATCH application/merge-patch+json" in output
    assert "changes: " in output and "<redacted, changed>" in output
    assert "Traceback" in output
    assert "illegal base64 data" in output
