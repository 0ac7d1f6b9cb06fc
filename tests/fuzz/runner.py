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

import kr8s.asyncio

from ..kubehttp import send
from .spec import Change, KindSpec, Obj

NORMALISED: tuple[tuple[str, str], ...] = (
    ("metadata.uid", "a random UUID per server"),
    ("metadata.resourceVersion", "etcd's revision against the embedded server's counter"),
    ("metadata.creationTimestamp", "the wall clock of each write"),
    ("metadata.managedFields[].time", "the wall clock of each write"),
    ("spec.clusterIP, spec.clusterIPs[]", "allocated at random from the service range"),
    ("spec.ports[].nodePort, spec.healthCheckNodePort", "allocated at random"),
    (
        "the object's uid and resourceVersion inside any string",
        "Job selector labels carry the uid; a conflict message names the resourceVersion",
    ),
    (
        "a set pointer's address in a Go %#v rendering inside any string, (*T)(0x...)",
        "the Go heap address of a kube-apiserver process (a Job's immutable pod template)",
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


_ADDRESS = re.compile(r"\((\*[\w.\[\]]+)\)\(0x[0-9a-f]+\)")


def _replace(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        if value in values:
            return values[value]
        for raw, placeholder in values.items():
            if len(raw) > 6 and raw in value:
                value = value.replace(raw, placeholder)
        return _ADDRESS.sub(r"(\1)(<address>)", value)
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
    spec = body.get("spec")
    if isinstance(spec, dict) and body.get("kind") == "Service":
        for port in spec.get("ports") or []:
            if "nodePort" in port:
                port["nodePort"] = "<nodePort>"
        if "healthCheckNodePort" in spec:
            spec["healthCheckNodePort"] = "<nodePort>"
    return body


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
    embedded_values = values[0] | _own_values(exchange.embedded.body)
    real_values = values[1] | _own_values(exchange.real.body)
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
    return Outcome([exchange], compare(spec.kind, exchange, ({}, {})))


async def update(backends: Backends, spec: KindSpec, obj: Obj, change: Change) -> Outcome:
    """Create ``obj`` on both, then PUT each server's stored object changed by ``change``
    and compare the answers to the PUT (the creation is the ``valid`` property's)."""
    path, placed = await _prepare(backends, spec, obj)
    created = await backends.both("POST", path, placed)
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
    values = (_own_values(stored[0]), _own_values(stored[1]))
    return Outcome([created, exchange], compare(spec.kind, exchange, values))
