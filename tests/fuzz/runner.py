"""The two backends, the requests sent to both, the normalisation and the comparison.

Every example gets a fresh namespace on both servers (created by the same request), and a
cluster-scoped object a name suffix unique in the session, so examples never see each
other's objects; the string ``{ns}`` in a drawn object stands for that namespace.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import jsonpatch
import kr8s.asyncio

from reconcile_kit.patch.mergepatch import create_merge_patch

from ..kubehttp import send
from .spec import Change, KindSpec, Obj

NORMALISED: tuple[tuple[str, str], ...] = (
    ("metadata.uid", "a random UUID per server"),
    (
        "metadata.resourceVersion (whether an update kept the stored one is compared)",
        "etcd's revision against the embedded server's counter",
    ),
    ("metadata.creationTimestamp", "the wall clock of each write"),
    ("metadata.managedFields[].time", "the wall clock of each write"),
    ("spec.clusterIP, spec.clusterIPs[]", "allocated at random from the service range"),
    ("spec.ports[].nodePort, spec.healthCheckNodePort", "allocated at random"),
    ("a node port in a cause's message about spec.ports[].nodePort", "allocated at random"),
    (
        "the object's uid and resourceVersion inside any string",
        "Job selector labels carry the uid; a conflict message names the resourceVersion",
    ),
    (
        "Go pointer addresses, (0x...), inside any string",
        "a message printing a Go struct with %#v shows its pointers' addresses",
    ),
    (
        "the order of consecutive causes about keys of one map (data[a], data[b])",
        "Go ranges over a map in random order",
    ),
    (
        "a go-cmp diff inside a message (the Pod update rule, a claim's immutable spec)",
        "go-cmp makes its report unstable on purpose (random non-breaking spaces); the "
        "message before it is compared",
    ),
)
"""What must differ between the servers and is replaced by a placeholder before comparing
(path, reason). Nothing else is touched."""

_TIMES = ("creationTimestamp",)


@dataclass
class Answer:
    """One server's answer: status code and decoded body."""

    status: int
    body: Any


@dataclass
class Exchange:
    """One request sent to both servers and their answers."""

    method: str
    path: str
    body: Any
    embedded: Answer
    real: Answer


class Backends:
    """The embedded server's and kube-apiserver's kr8s clients, on one event loop."""

    def __init__(self, embedded: kr8s.asyncio.Api, real: kr8s.asyncio.Api) -> None:
        self.embedded = embedded
        self.real = real
        self._session = secrets.token_hex(3)
        self._count = itertools.count()

    def unique(self) -> str:
        """A suffix unique in this session."""
        return f"{self._session}{next(self._count)}"

    async def both(self, method: str, path: str, body: Any = None) -> Exchange:
        """Send the same request to both servers (concurrently)."""
        embedded, real = await asyncio.gather(
            send(self.embedded, method, path, copy.deepcopy(body)),
            send(self.real, method, path, copy.deepcopy(body)),
        )
        return Exchange(
            method, path, body, Answer(embedded[0], embedded[1]), Answer(real[0], real[1])
        )

    async def namespace(self) -> str:
        """A fresh namespace on both servers."""
        name = f"fz-{self.unique()}"
        sent = await self.both("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        assert sent.embedded.status == sent.real.status == 201, sent
        return name


def _own_values(body: Any) -> dict[str, str]:
    """Strings of an object that must differ between servers, by their placeholder."""
    if not isinstance(body, dict) or body.get("kind") == "Status":
        return {}
    meta = body.get("metadata") or {}
    found = {meta.get("uid"): "<uid>", meta.get("resourceVersion"): "<resourceVersion>"}
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    for ip in [spec.get("clusterIP"), *(spec.get("clusterIPs") or [])]:
        found[ip] = "<clusterIP>"
    return {k: v for k, v in found.items() if isinstance(k, str) and k not in ("", "None")}


_POINTER = re.compile(r"\(0x[0-9a-f]*\)")
_GO_CMP = re.compile(r"\n[\u00a0 ]{2}core\.\w+\{.*?\n[\u00a0 ]{2}\}\n", re.DOTALL)
_NODE_PORT = re.compile(r"(spec\.ports\[\d+\]\.nodePort: [A-Za-z ]+: )\d+")


def _replace(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        if value in values:
            return values[value]
        for raw, placeholder in values.items():
            if len(raw) > 6 and raw in value:
                value = value.replace(raw, placeholder)
        value = _GO_CMP.sub("\n<go-cmp diff>\n", _POINTER.sub("(0x…)", value))
        return _NODE_PORT.sub(r"\1<nodePort>", value)
    if isinstance(value, dict):
        return {k: _replace(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, values) for v in value]
    return value


def normalise(body: Any, values: dict[str, str]) -> Any:
    """``body`` with the :data:`NORMALISED` parts replaced by placeholders; ``values`` are
    the strings (uid, resourceVersion, cluster IPs) of this server's object."""
    body = _replace(copy.deepcopy(body), values)
    if not isinstance(body, dict):
        return body
    meta = body.get("metadata")
    if isinstance(meta, dict):
        for key in _TIMES:
            if key in meta:
                meta[key] = "<time>"
        for entry in meta.get("managedFields") or []:
            if "time" in entry:
                entry["time"] = "<time>"
    for cause in (body.get("details") or {}).get("causes") or []:
        if isinstance(cause, dict) and str(cause.get("field", "")).endswith(".nodePort"):
            cause["message"] = re.sub(r"\d+$", "<nodePort>", str(cause.get("message", "")))
    _sort_map_ordered(body)
    spec = body.get("spec")
    if isinstance(spec, dict) and body.get("kind") == "Service":
        for port in spec.get("ports") or []:
            if "nodePort" in port:
                port["nodePort"] = "<nodePort>"
        if "healthCheckNodePort" in spec:
            spec["healthCheckNodePort"] = "<nodePort>"
    return body


_KEYED = re.compile(r"^(.+)\[[^\]]+\]$")


def _sort_map_ordered(body: dict[str, Any]) -> None:
    """Sort each run of consecutive causes about keys of one map (``data[a]``, ``data[b]``,
    same reason): Go ranges over a map in random order, so kube-apiserver lists them in
    any order. The Status message's list is rebuilt in the same order."""
    details = body.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    if not isinstance(causes, list) or not all(isinstance(c, dict) for c in causes):
        return
    before = [f"{c.get('field', '')}: {c.get('message', '')}" for c in causes]
    runs: list[list[dict[str, Any]]] = []
    for cause in causes:
        keyed = _KEYED.match(str(cause.get("field", "")))
        last = runs[-1][-1] if runs else {}
        previous = _KEYED.match(str(last.get("field", "")))
        same_reason = last.get("reason") == cause.get("reason")
        if keyed and previous and previous.group(1) == keyed.group(1) and same_reason:
            runs[-1].append(cause)
        else:
            runs.append([cause])
    causes[:] = [c for run in runs for c in sorted(run, key=lambda c: str(c.get("field")))]
    message = body.get("message")
    unique = list(dict.fromkeys(before))
    listed = "[" + ", ".join(unique) + "]"
    if isinstance(message, str) and len(unique) > 1 and message.endswith(listed):
        after = list(dict.fromkeys(f"{c.get('field', '')}: {c.get('message', '')}" for c in causes))
        body["message"] = message[: -len(listed)] + "[" + ", ".join(after) + "]"


def _differences(embedded: Any, real: Any, path: str = "") -> Iterator[str]:
    if isinstance(embedded, dict) and isinstance(real, dict):
        for key in sorted(set(embedded) | set(real), key=str):
            here = f"{path}.{key}" if path else str(key)
            if key not in embedded:
                yield f"{here}: missing on embedded, real {_short(real[key])}"
            elif key not in real:
                yield f"{here}: embedded {_short(embedded[key])}, missing on real"
            else:
                yield from _differences(embedded[key], real[key], here)
    elif isinstance(embedded, list) and isinstance(real, list) and len(embedded) == len(real):
        for index, (a, b) in enumerate(zip(embedded, real, strict=True)):
            yield from _differences(a, b, f"{path}[{index}]")
    elif embedded != real:
        yield f"{path or '<body>'}: embedded {_short(embedded)}, real {_short(real)}"


def _short(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)[:600]


def compare(kind: str, exchange: Exchange, values: tuple[dict[str, str], dict[str, str]]) -> str:
    """A readable report of how the two answers differ ("" when they agree), after
    normalising each with its server's own ``values`` and those of its answer."""
    embedded_values = _own_values(exchange.embedded.body) | values[0]
    real_values = _own_values(exchange.real.body) | values[1]
    a = {
        "status": exchange.embedded.status,
        "body": normalise(exchange.embedded.body, embedded_values),
    }
    b = {"status": exchange.real.status, "body": normalise(exchange.real.body, real_values)}
    lines = list(_differences(a, b))
    if not lines:
        return ""
    return "\n".join(
        [
            f"{kind}: {exchange.method} {exchange.path}",
            f"request: {json.dumps(exchange.body, sort_keys=True)}",
            "differences (normalised):",
            *(f"  {line}" for line in lines),
            f"embedded answer: {_answer(exchange.embedded)}",
            f"real answer:     {_answer(exchange.real)}",
        ]
    )


def _answer(answer: Answer) -> str:
    return f"{answer.status} {json.dumps(answer.body, sort_keys=True)}"


def _place(value: Any, namespace: str) -> Any:
    if isinstance(value, str):
        return value.replace("{ns}", namespace)
    if isinstance(value, dict):
        return {k: _place(v, namespace) for k, v in value.items()}
    if isinstance(value, list):
        return [_place(v, namespace) for v in value]
    return value


@dataclass
class Outcome:
    """What one example did: its exchanges, the report of the first difference ("" when
    none), and whether kube-apiserver accepted the last request."""

    exchanges: list[Exchange]
    report: str

    @property
    def last(self) -> Exchange:
        return self.exchanges[-1]


async def _prepare(backends: Backends, spec: KindSpec, obj: Obj) -> tuple[str, Obj]:
    """The collection path for ``obj`` and ``obj`` placed there (namespace, unique name)."""
    obj = copy.deepcopy(obj)
    if spec.namespaced:
        namespace = await backends.namespace()
        obj = _place(obj, namespace)
        return spec.path(namespace), obj
    obj["metadata"]["name"] = f"{obj['metadata']['name']}-{backends.unique()}"
    return spec.path(""), _place(obj, "default")


async def create(
    backends: Backends, spec: KindSpec, obj: Obj, change: Change | None = None
) -> Outcome:
    """POST ``obj`` (changed by ``change``) to both servers and compare the answers."""
    path, placed = await _prepare(backends, spec, obj)
    if change is not None:
        placed = change.applied(placed)
    exchange = await backends.both("POST", path, placed)
    outcome = Outcome([exchange], compare(spec.kind, exchange, ({}, {})))
    await _delete_created(backends, path, exchange)
    return outcome


async def update(backends: Backends, spec: KindSpec, obj: Obj, change: Change) -> Outcome:
    """Create ``obj`` on both, then PUT each server's stored object changed by ``change``
    and compare the answers to the PUT (the creation is the ``valid`` property's)."""
    path, placed = await _prepare(backends, spec, obj)
    created = await backends.both("POST", path, placed)
    try:
        return await _update(backends, spec, path, placed, created, change)
    finally:
        await _delete_created(backends, path, created)


async def _delete_created(backends: Backends, path: str, exchange: Exchange) -> None:
    """DELETE what the exchange created on either server: kube-apiserver gives a deleted
    Service's cluster IP and node ports back (its /24 service range would fill up over a
    run of thousands of examples)."""
    for api, answer in ((backends.embedded, exchange.embedded), (backends.real, exchange.real)):
        if answer.status == 201 and isinstance(answer.body, dict):
            await send(api, "DELETE", f"{path}/{answer.body['metadata']['name']}")


async def _update(
    backends: Backends, spec: KindSpec, path: str, placed: Obj, created: Exchange, change: Change
) -> Outcome:
    if created.real.status != 201 or created.embedded.status != 201:
        return Outcome([created], compare(spec.kind, created, ({}, {})))
    stored = (created.embedded.body, created.real.body)
    url = f"{path}/{placed['metadata']['name']}"
    embedded, real = await asyncio.gather(
        send(backends.embedded, "PUT", url, change.applied(stored[0])),
        send(backends.real, "PUT", url, change.applied(stored[1])),
    )
    exchange = Exchange(
        "PUT",
        url,
        change.applied(stored[1]),
        Answer(embedded[0], embedded[1]),
        Answer(real[0], real[1]),
    )
    values = (_stored_values(stored[0]), _stored_values(stored[1]))
    return Outcome([created, exchange], compare(spec.kind, exchange, values))


PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}
"""The patch types the ``patch`` property sends, by the name it draws."""


async def patch(
    backends: Backends, spec: KindSpec, obj: Obj, change: Change, patch_type: str
) -> Outcome:
    """Create ``obj`` on both, then PATCH each server's stored object with ``change`` as
    ``patch_type`` (:data:`PATCH_TYPES`): RFC 7386's diff of the stored object and the
    changed one, the same body as a strategic merge patch (lists with a merge key are
    merged by it), or RFC 6902's operations; compare the answers to the PATCH."""
    path, placed = await _prepare(backends, spec, obj)
    created = await backends.both("POST", path, placed)
    try:
        if created.real.status != 201 or created.embedded.status != 201:
            return Outcome([created], compare(spec.kind, created, ({}, {})))
        stored = (created.embedded.body, created.real.body)
        bodies = [_patch_body(s, change.applied(s), patch_type) for s in stored]
        url = f"{path}/{placed['metadata']['name']}"
        content_type = PATCH_TYPES[patch_type]
        embedded, real = await asyncio.gather(
            send(backends.embedded, "PATCH", url, bodies[0], content_type),
            send(backends.real, "PATCH", url, bodies[1], content_type),
        )
        exchange = Exchange(
            f"PATCH ({patch_type})",
            url,
            bodies[1],
            Answer(embedded[0], embedded[1]),
            Answer(real[0], real[1]),
        )
        values = (_stored_values(stored[0]), _stored_values(stored[1]))
        return Outcome([created, exchange], compare(spec.kind, exchange, values))
    finally:
        await _delete_created(backends, path, created)


def _patch_body(stored: Obj, changed: Obj, patch_type: str) -> Any:
    if patch_type == "json":
        return jsonpatch.make_patch(stored, changed).patch
    body, _exact = create_merge_patch(stored, changed)  # a null value: removed (RFC 7386)
    return body


def _stored_values(stored: Obj) -> dict[str, str]:
    """:func:`_own_values` of the object an update started from, its resourceVersion
    named apart: an answer that keeps it (a write that changed nothing, no new revision)
    must do so on both servers."""
    values = _own_values(stored)
    version = (stored.get("metadata") or {}).get("resourceVersion")
    if isinstance(version, str) and version:
        values[version] = "<the stored resourceVersion>"
    return values
