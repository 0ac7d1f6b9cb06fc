"""Server-side conversions asked for in ``Accept``: ``meta.k8s.io`` Table and PartialObjectMetadata.

``kubectl get`` sends ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io,
application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`` and prints the
Table's columns; metadata-only clients (client-go's metadata client, controller-runtime's
metadata informers) ask ``as=PartialObjectMetadata[List]``. The shapes follow
k8s.io/apiserver pkg/endpoints/handlers/response.go:

* a Table has ``columnDefinitions`` and ``rows[{cells, object}]``; ``object`` is a
  PartialObjectMetadata unless ``includeObject=Object`` (whole object) or ``None``;
  list Tables carry the list's ``resourceVersion``/``continue``;
* on a watch each event's object is a one-row Table, and only the first event carries
  ``columnDefinitions`` (later ones are encoded with ``NoHeaders``); Status objects
  (ERROR events) are not converted;
* custom resources get a Name column plus the CRD version's ``additionalPrinterColumns``,
  or a single ``Age`` column when it has none (apiextensions-apiserver tableconvertor);
  CustomResourceDefinitions, Roles, ClusterRoles and LimitRanges use the default
  convertor (Name, Created At); every other built-in kind gets kube-apiserver's columns
  (pkg/printers/internalversion; APIServices kube-aggregator's), checked for every
  listable kind by tests/conformance/test_tables.py.

Ages are printed as k8s.io/apimachinery ``duration.HumanDuration`` prints them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from ...client.contenttypes import JSON, YAML
from ...meta.time import parse_time
from . import errors, eventversions, hpaversions, protobuf
from .resources import ResourceType

Doc = dict[str, Any]
Row = list[Any]
META_GROUP = "meta.k8s.io"
_VERSIONS = ("v1", "v1beta1")


@dataclass(frozen=True)
class Conversion:
    """What the client asked to receive instead of the object: ``Table`` or
    ``PartialObjectMetadata`` (``...List`` for lists) of ``meta.k8s.io/<version>``."""

    kind: str
    version: str

    @property
    def api_version(self) -> str:
        return f"{META_GROUP}/{self.version}"


def _media_ranges(accept: str) -> list[tuple[str, dict[str, str]]]:
    ranges = []
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        params = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            params[key.strip()] = value.strip()
        ranges.append((pieces[0].lower(), params))
    return ranges


def negotiate(accept: str, tables: bool = True) -> Conversion | None:
    """The conversion ``Accept`` asks for, in preference order; None for the plain object.
    ``tables=False`` (a watch-list request: kube-apiserver's
    ``watchListEndpointRestrictions``) skips the ranges asking for a Table.

    Raises a 406 Not Acceptable APIError when every range asks for a conversion this
    server does not offer and nothing plain is acceptable.
    """
    plain_ok = not accept.strip()
    for media_type, params in _media_ranges(accept):
        if media_type not in (JSON, "application/*", "*/*", YAML, protobuf.MEDIA_TYPE):
            continue
        target = params.get("as")
        if target is None:
            plain_ok = True
            break
        if (
            params.get("g") == META_GROUP
            and params.get("v") in _VERSIONS
            and target in ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")
            and (tables or target != "Table")
        ):
            return Conversion(target, params["v"])
    if plain_ok:
        return None
    raise errors.APIError(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json,"
        " application/yaml, application/vnd.kubernetes.protobuf",
    )


# --- ages and cells -------------------------------------------------------------------------


def _parse_time(timestamp: Any) -> datetime | None:
    if not isinstance(timestamp, str):
        return None
    try:
        return parse_time(timestamp)
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration``: ``45s``, ``5m3s``, ``3h20m``, ``2d5h``, ``1y30d``."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // 24 // 365}y"


def age(timestamp: Any) -> str:
    """How long ago ``timestamp`` (RFC 3339) was, or ``<unknown>``."""
    when = _parse_time(timestamp)
    if when is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - when).total_seconds())


def _get(obj: Any, path: str, default: Any = None) -> Any:
    for part in path.split("."):
        if not isinstance(obj, dict):
            return default
        obj = obj.get(part)
    return default if obj is None else obj


def _column(
    name: str, kind: str = "string", priority: int = 0, fmt: str = "", description: str = ""
) -> Doc:
    return {
        "name": name,
        "type": kind,
        "format": fmt,
        "description": description,
        "priority": priority,
    }


_NAME = _column("Name", fmt="name", description="Name of the object (metadata.name).")
_AGE = _column("Age", description="Time since metadata.creationTimestamp.")
_WEBHOOKS = _column(
    "Webhooks",
    "integer",
    description="Webhooks indicates the number of webhooks registered in this configuration",
)


def _none(value: Any) -> Any:
    return "<none>" if value in (None, "", [], {}) else value


def _selector(match_labels: Any) -> str:
    if not isinstance(match_labels, dict) or not match_labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(match_labels.items()))


def _label_selector(selector: Any) -> str:
    if not isinstance(selector, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        values = ",".join(expr.get("values") or [])
        operator = expr.get("operator", "")
        key = expr.get("key", "")
        if operator == "In":
            parts.append(f"{key} in ({values})")
        elif operator == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif operator == "Exists":
            parts.append(key)
        elif operator == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) if parts else "<none>"


def _selector_or_none(selector: Any) -> str:
    """A label selector as kubectl prints it; an empty one selects everything: <none>."""
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return "<none>"
    return _label_selector(selector)


def _containers(obj: Doc, path: str = "spec.template.spec") -> tuple[str, str]:
    containers = _get(obj, f"{path}.containers", [])
    return (
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
    )


def _pod(obj: Doc) -> Row:
    status = obj.get("status") or {}
    containers = _get(obj, "spec.containers", [])
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    reason = status.get("reason") or status.get("phase") or "Unknown"
    if obj["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    gates = _get(obj, "spec.readinessGates", [])
    return [
        f"{ready}/{len(containers)}",
        reason,
        str(restarts),
        age(_created(obj)),
        _none(status.get("podIP")),
        _none(_get(obj, "spec.nodeName")),
        _none(status.get("nominatedNodeName")),
        f"0/{len(gates)}" if gates else "<none>",
    ]


def _service_ports(spec: Doc) -> str:
    ports = []
    for port in spec.get("ports") or []:
        protocol = port.get("protocol", "TCP")
        if port.get("nodePort"):
            ports.append(f"{port.get('port')}:{port['nodePort']}/{protocol}")
        else:
            ports.append(f"{port.get('port')}/{protocol}")
    return ",".join(ports) if ports else "<none>"


def _service(obj: Doc) -> Row:
    spec = obj.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    external: Any = ",".join(spec.get("externalIPs") or [])
    if kind == "ExternalName":
        external = spec.get("externalName", "")
    elif kind == "LoadBalancer":
        ingress = _get(obj, "status.loadBalancer.ingress", [])
        addresses = [i.get("ip") or i.get("hostname") or "" for i in ingress]
        external = ",".join([*addresses, *(spec.get("externalIPs") or [])]) or "<pending>"
    return [
        kind,
        _none(spec.get("clusterIP")),
        _none(external),
        _service_ports(spec),
        age(_created(obj)),
        _selector(spec.get("selector")),
    ]


def _deployment(obj: Doc) -> Row:
    status = obj.get("status") or {}
    names, images = _containers(obj)
    return [
        f"{status.get('readyReplicas', 0)}/{_get(obj, 'spec.replicas', 0)}",
        int(status.get("updatedReplicas") or 0),
        int(status.get("availableReplicas") or 0),
        age(_created(obj)),
        names,
        images,
        _label_selector(_get(obj, "spec.selector")),
    ]


def _replica_set(obj: Doc) -> Row:
    status = obj.get("status") or {}
    names, images = _containers(obj)
    return [
        int(_get(obj, "spec.replicas", 0)),
        int(status.get("replicas") or 0),
        int(status.get("readyReplicas") or 0),
        age(_created(obj)),
        names,
        images,
        _label_selector(_get(obj, "spec.selector")),
    ]


def _stateful_set(obj: Doc) -> Row:
    names, images = _containers(obj)
    ready = _get(obj, "status.readyReplicas", 0)
    return [f"{ready}/{_get(obj, 'spec.replicas', 0)}", age(_created(obj)), names, images]


def _daemon_set(obj: Doc) -> Row:
    status = obj.get("status") or {}
    names, images = _containers(obj)
    counts = [
        int(status.get(key) or 0)
        for key in (
            "desiredNumberScheduled",
            "currentNumberScheduled",
            "numberReady",
            "updatedNumberScheduled",
            "numberAvailable",
        )
    ]
    return [
        *counts,
        _selector(_get(obj, "spec.template.spec.nodeSelector")),
        age(_created(obj)),
        names,
        images,
        _label_selector(_get(obj, "spec.selector")),
    ]


def _job(obj: Doc) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    if conditions.get("Complete") == "True":
        state = "Complete"
    elif conditions.get("Failed") == "True":
        state = "Failed"
    elif spec.get("suspend"):
        state = "Suspended"
    else:
        state = "Running"
    succeeded = int(status.get("succeeded") or 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    else:
        completions = f"{succeeded}/1 of {spec.get('parallelism', 1)}"
    start, end = _parse_time(status.get("startTime")), _parse_time(status.get("completionTime"))
    duration = ""
    if start is not None:
        duration = human_duration(((end or datetime.now(UTC)) - start).total_seconds())
    names, images = _containers(obj)
    return [
        state,
        completions,
        duration,
        age(_created(obj)),
        names,
        images,
        _label_selector(spec.get("selector")),
    ]


def _event_source(obj: Doc) -> str:
    """formatEventSource: the source's component and host, else the reporting ones."""
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else component


def _event(obj: Doc) -> Row:
    """printEvent, on the internal form (core/v1's: an events.k8s.io/v1 Event converted)."""
    obj = eventversions.storage_form(obj)
    first = age(obj.get("firstTimestamp") or obj.get("eventTime"))
    last = age(obj["lastTimestamp"]) if obj.get("lastTimestamp") else first
    count = obj.get("count") or 1
    series = obj.get("series")
    if isinstance(series, dict):
        last, count = age(series.get("lastObservedTime")), series.get("count") or 0
    involved = obj.get("involvedObject") or {}
    target = str(involved.get("kind") or "").lower()
    if involved.get("name"):
        target += f"/{involved['name']}"
    return [
        last,
        obj.get("type", ""),
        obj.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        _event_source(obj),
        (obj.get("message") or "").strip(),
        first,
        int(count),
        obj["metadata"]["name"],
    ]


def _created(obj: Doc) -> Any:
    return obj["metadata"].get("creationTimestamp")


# --- the kinds added in issue 15 (kube-apiserver's printers.go columns) ------------------


def _node(obj: Doc) -> Row:
    conditions = {c.get("type"): c.get("status") for c in _get(obj, "status.conditions", [])}
    ready = conditions.get("Ready")
    status = "Ready" if ready == "True" else ("NotReady" if ready == "False" else "Unknown")
    roles = sorted(
        k.split("/", 1)[1]
        for k in (obj["metadata"].get("labels") or {})
        if k.startswith("node-role.kubernetes.io/")
    )
    addresses = {a.get("type"): a.get("address") for a in _get(obj, "status.addresses", [])}
    info = _get(obj, "status.nodeInfo", {})
    return [
        status,
        ",".join(roles) or "<none>",
        age(_created(obj)),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _endpoints(obj: Doc) -> Row:
    pairs = [
        f"{address.get('ip')}:{port.get('port')}"
        for subset in obj.get("subsets") or []
        for address in subset.get("addresses") or []
        for port in subset.get("ports") or [{}]
    ]
    return [",".join(pairs) or "<none>", age(_created(obj))]


def _access_modes(modes: list[str]) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX"}
    short["ReadWriteOncePod"] = "RWOP"
    return ",".join(short.get(m, m) for m in modes)


def _pvc(obj: Doc) -> Row:
    bound = _get(obj, "status.phase", "") == "Bound"
    return [
        _get(obj, "status.phase", ""),
        _get(obj, "spec.volumeName", ""),
        _get(obj, "status.capacity.storage", "") if bound else "",
        _access_modes(_get(obj, "status.accessModes", [])) if bound else "",
        _get(obj, "spec.storageClassName", ""),
        _get(obj, "spec.volumeAttributesClassName", "<unset>"),
        age(_created(obj)),
        _get(obj, "spec.volumeMode", "<unset>"),
    ]


def _pv(obj: Doc) -> Row:
    claim = _get(obj, "spec.claimRef", {})
    return [
        _get(obj, "spec.capacity.storage", ""),
        _access_modes(_get(obj, "spec.accessModes", [])),
        _get(obj, "spec.persistentVolumeReclaimPolicy", ""),
        _get(obj, "status.phase", ""),
        f"{claim.get('namespace')}/{claim.get('name')}" if claim else "",
        _get(obj, "spec.storageClassName", ""),
        _get(obj, "spec.volumeAttributesClassName", "<unset>"),
        _get(obj, "status.reason", ""),
        age(_created(obj)),
        _get(obj, "spec.volumeMode", "<unset>"),
    ]


def _controller_revision(obj: Doc) -> Row:
    owner = next(
        (r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")), None
    )
    if owner is None:
        return ["<none>", obj.get("revision", 0), age(_created(obj))]
    group = str(owner.get("apiVersion", "")).rpartition("/")[0]
    controller = f"{str(owner.get('kind', '')).lower()}.{group}/{owner.get('name', '')}"
    return [controller, obj.get("revision", 0), age(_created(obj))]


def _cronjob(obj: Doc) -> Row:
    names, images = _containers(obj, "spec.jobTemplate.spec.template.spec")
    last = _get(obj, "status.lastScheduleTime")
    return [
        _get(obj, "spec.schedule", ""),
        _get(obj, "spec.timeZone", "<none>"),
        str(bool(_get(obj, "spec.suspend", False))),
        len(_get(obj, "status.active", [])),
        age(last) if last else "<none>",
        age(_created(obj)),
        names,
        images,
        _label_selector(_get(obj, "spec.jobTemplate.spec.selector")),
    ]


def _hpa_metric(spec: Doc, status: Doc | None) -> str:
    """One metric of formatHPAMetrics: ``current/target``, ``name: current/target``."""
    kind = spec.get("type")
    source_key = {
        "External": "external",
        "Pods": "pods",
        "Object": "object",
        "Resource": "resource",
        "ContainerResource": "containerResource",
    }.get(str(kind))
    if source_key is None:
        return "<unknown type>"
    source = spec.get(source_key) or {}
    target = source.get("target") or {}
    current_source = (status or {}).get(source_key)
    current = current_source.get("current") or {} if isinstance(current_source, dict) else None
    name = f"{source.get('name', '')}: " if kind in ("Resource", "ContainerResource") else ""
    if kind == "Pods" or target.get("averageValue") is not None:
        value = "<unknown>" if current is None else current.get("averageValue", "0")
        suffix = " (avg)" if kind in ("External", "Object") else ""
        return f"{name}{value}/{target.get('averageValue', '0')}{suffix}"
    if kind in ("External", "Object"):
        value = "<unknown>" if current is None else current.get("value", "0")
        return f"{value}/{target.get('value', '0')}"
    used = None if current is None else current.get("averageUtilization")
    wanted = target.get("averageUtilization")
    return (
        f"{name}{'<unknown>' if used is None else f'{used}%'}/"
        f"{'<auto>' if wanted is None else f'{wanted}%'}"
    )


def _hpa_targets(obj: Doc) -> str:
    """formatHPAMetrics: the first two metrics, then how many more."""
    specs = _get(obj, "spec.metrics", [])
    if not specs:
        return "<none>"
    statuses = _get(obj, "status.currentMetrics", [])
    cells = [
        _hpa_metric(spec, statuses[i] if i < len(statuses) else None)
        for i, spec in enumerate(specs)
    ]
    more = f" + {len(cells) - 2} more..." if len(cells) > 2 else ""
    return ", ".join(cells[:2]) + more


def _hpa(obj: Doc) -> Row:
    if obj.get("apiVersion") == hpaversions.V1:  # printed from the internal (v2) form
        obj = hpaversions.to_v2(obj)
    ref = _get(obj, "spec.scaleTargetRef", {})
    minimum = _get(obj, "spec.minReplicas")
    return [
        f"{ref.get('kind')}/{ref.get('name')}",
        _hpa_targets(obj),
        "<unset>" if minimum is None else str(minimum),
        _get(obj, "spec.maxReplicas", 0),
        _get(obj, "status.currentReplicas", 0),
        age(_created(obj)),
    ]


def _ingress(obj: Doc) -> Row:
    hosts = [r.get("host") for r in _get(obj, "spec.rules", []) if r.get("host")]
    addresses = [
        i.get("ip") or i.get("hostname") for i in _get(obj, "status.loadBalancer.ingress", [])
    ]
    ports = "80, 443" if _get(obj, "spec.tls") else "80"
    return [
        _get(obj, "spec.ingressClassName", "<none>"),
        ",".join(hosts) or "*",
        ",".join(a for a in addresses if a),
        ports,
        age(_created(obj)),
    ]


def _endpoint_slice(obj: Doc) -> Row:
    ports = ",".join(str(p.get("port")) for p in obj.get("ports") or []) or "<unset>"
    addresses = [a for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    return [obj.get("addressType", ""), ports, ",".join(addresses) or "<unset>", age(_created(obj))]


def _csr_condition(obj: Doc) -> str:
    """extractCSRStatus: Denied over Approved over Pending, then Failed and Issued."""
    status = obj.get("status") or {}
    types = {c.get("type") for c in status.get("conditions") or [] if isinstance(c, dict)}
    text = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        text += ",Failed"
    if status.get("certificate"):
        text += ",Issued"
    return text


def _csr(obj: Doc) -> Row:
    seconds = _get(obj, "spec.expirationSeconds")
    return [
        age(_created(obj)),
        _get(obj, "spec.signerName") or "<none>",
        _get(obj, "spec.username", ""),
        human_duration(seconds) if isinstance(seconds, int) else "<none>",
        _csr_condition(obj),
    ]


def _pdb(obj: Doc) -> Row:
    spec = obj.get("spec") or {}
    return [
        str(spec["minAvailable"]) if "minAvailable" in spec else "N/A",
        str(spec["maxUnavailable"]) if "maxUnavailable" in spec else "N/A",
        _get(obj, "status.disruptionsAllowed", 0),
        age(_created(obj)),
    ]


def _format_labels(labels: Any) -> str:
    """labels.FormatLabels: ``k=v`` pairs sorted by key, joined by commas; ``<none>``."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _binding(obj: Doc) -> Row:
    """printRoleBinding/printClusterRoleBinding, wide: rbac.SubjectsStrings."""
    ref = obj.get("roleRef") or {}
    subjects = [s for s in obj.get("subjects") or [] if isinstance(s, dict)]
    users = [s.get("name", "") for s in subjects if s.get("kind") == "User"]
    groups = [s.get("name", "") for s in subjects if s.get("kind") == "Group"]
    accounts = [
        f"{s.get('namespace', '')}/{s.get('name', '')}"
        for s in subjects
        if s.get("kind") == "ServiceAccount"
    ]
    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        age(_created(obj)),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]


def _resource_quota(obj: Doc) -> Row:
    """printResourceQuota: ``name: used/hard`` of status.hard, sorted, ``limits.*`` apart."""
    hard, used = _get(obj, "status.hard", {}), _get(obj, "status.used", {})
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        cell = f"{name}: {used.get(name, '0')}/{hard[name]}"
        (limits if name.split(".")[0] == "limits" and "." in name else requests).append(cell)
    return [age(_created(obj)), ", ".join(requests), ", ".join(limits)]


def _pod_template(obj: Doc) -> Row:
    names, images = _containers(obj, "template.spec")
    return [names, images, _format_labels(_get(obj, "template.metadata.labels"))]


def _replication_controller(obj: Doc) -> Row:
    names, images = _containers(obj)
    return [
        _get(obj, "spec.replicas", 0),
        _get(obj, "status.replicas", 0),
        _get(obj, "status.readyReplicas", 0),
        age(_created(obj)),
        names,
        images,
        _format_labels(_get(obj, "spec.selector")),
    ]


def _csi_driver(obj: Doc) -> Row:
    spec = obj.get("spec") or {}
    requests = spec.get("tokenRequests")
    audiences = "<unset>" if requests is None else ",".join(r.get("audience", "") for r in requests)
    return [
        spec.get("attachRequired", True),
        spec.get("podInfoOnMount", False),
        spec.get("storageCapacity", False),
        audiences,
        spec.get("requiresRepublish", False),
        ",".join(spec.get("volumeLifecycleModes") or []) or "<none>",
        age(_created(obj)),
    ]


def _flow_schema(obj: Doc) -> Row:
    method = _get(obj, "spec.distinguisherMethod.type") or "<none>"
    dangling = [
        c.get("status", "")
        for c in _get(obj, "status.conditions", [])
        if c.get("type") == "Dangling"
    ]
    return [
        _get(obj, "spec.priorityLevelConfiguration.name", ""),
        _get(obj, "spec.matchingPrecedence", 0),
        method,
        age(_created(obj)),
        dangling[0] if dangling else "?",
    ]


def _priority_level(obj: Doc) -> Row:
    limited = _get(obj, "spec.limited")
    cells: list[Any] = ["<none>"] * 4
    if isinstance(limited, dict):
        queuing = _get(limited, "limitResponse.queuing")
        cells[0] = limited.get("nominalConcurrencyShares", 0)
        if isinstance(queuing, dict):
            cells[1:] = [queuing.get(f, 0) for f in ("queues", "handSize", "queueLengthLimit")]
    return [_get(obj, "spec.type", ""), *cells, age(_created(obj))]


def _go_selector(selector: Doc) -> str:
    """metav1.LabelSelector's generated ``String()`` (what printers.go prints of it)."""
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    requirements = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{requirements}}},}}"
    )


def _policy_binding(obj: Doc) -> Row:
    ref, param = _get(obj, "spec.paramRef"), "<unset>"
    if isinstance(ref, dict) and ref.get("name"):
        param = f"{ref.get('namespace') or '*'}/{ref['name']}"
    elif isinstance(ref, dict) and isinstance(ref.get("selector"), dict):
        param = _go_selector(ref["selector"])
    return [_get(obj, "spec.policyName", ""), param, age(_created(obj))]


def _admission_policy(obj: Doc) -> Row:
    kind = _get(obj, "spec.paramKind")
    param = f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}" if kind else "<unset>"
    return [len(_get(obj, "spec.validations", [])), param, age(_created(obj))]


def _api_service(obj: Doc) -> Row:
    """kube-aggregator's apiservice table: the service reference, the Available condition."""
    service = _get(obj, "spec.service")
    where = "Local" if not service else f"{service.get('namespace', '')}/{service.get('name', '')}"
    available = "Unknown"
    for condition in _get(obj, "status.conditions", []):
        if condition.get("type") == "Available":
            status, reason = condition.get("status", ""), condition.get("reason", "")
            available = status if status == "True" or not reason else f"{status} ({reason})"
            break
    return [where, available, age(_created(obj))]


def _component_status(obj: Doc) -> Row:
    for condition in obj.get("conditions") or []:
        if condition.get("type") == "Healthy":
            healthy = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            return [healthy, condition.get("message", ""), condition.get("error", "")]
    return ["Unknown", "", ""]


def _created_at(obj: Doc) -> Row:
    """The default table convertor's second cell (rest.NewDefaultTableConvertor)."""
    return [str(_created(obj) or "")]


_Printer = tuple[list[Doc], Callable[[Doc], Row]]
_WORKLOAD_WIDE = [_column("Containers", priority=1), _column("Images", priority=1)]
_PRINTERS: dict[tuple[str, str], _Printer] = {
    ("", "nodes"): (
        [
            _NAME,
            _column("Status"),
            _column("Roles"),
            _AGE,
            _column("Version"),
            *(
                _column(n, priority=1)
                for n in (
                    "Internal-IP",
                    "External-IP",
                    "OS-Image",
                    "Kernel-Version",
                    "Container-Runtime",
                )
            ),
        ],
        _node,
    ),
    ("", "endpoints"): ([_NAME, _column("Endpoints"), _AGE], _endpoints),
    ("", "persistentvolumeclaims"): (
        [
            _NAME,
            *(
                _column(n)
                for n in (
                    "Status",
                    "Volume",
                    "Capacity",
                    "Access Modes",
                    "StorageClass",
                    "VolumeAttributesClass",
                )
            ),
            _AGE,
            _column("VolumeMode", priority=1),
        ],
        _pvc,
    ),
    ("", "persistentvolumes"): (
        [
            _NAME,
            *(
                _column(n)
                for n in (
                    "Capacity",
                    "Access Modes",
                    "Reclaim Policy",
                    "Status",
                    "Claim",
                    "StorageClass",
                    "VolumeAttributesClass",
                    "Reason",
                )
            ),
            _AGE,
            _column("VolumeMode", priority=1),
        ],
        _pv,
    ),
    ("apps", "controllerrevisions"): (
        [_NAME, _column("Controller"), _column("Revision"), _AGE],
        _controller_revision,
    ),
    ("batch", "cronjobs"): (
        [
            _NAME,
            _column("Schedule"),
            _column("Timezone"),
            _column("Suspend", "boolean"),
            _column("Active", "integer"),
            _column("Last Schedule"),
            _AGE,
            *_WORKLOAD_WIDE,
            _column("Selector", priority=1),
        ],
        _cronjob,
    ),
    ("autoscaling", "horizontalpodautoscalers"): (
        [
            _NAME,
            *(_column(n) for n in ("Reference", "Targets", "MinPods", "MaxPods", "Replicas")),
            _AGE,
        ],
        _hpa,
    ),
    ("networking.k8s.io", "ingresses"): (
        [_NAME, *(_column(n) for n in ("Class", "Hosts", "Address", "Ports")), _AGE],
        _ingress,
    ),
    ("networking.k8s.io", "ingressclasses"): (
        [_NAME, _column("Controller"), _column("Parameters"), _AGE],
        lambda o: [_get(o, "spec.controller", ""), "<none>", age(_created(o))],
    ),
    ("networking.k8s.io", "networkpolicies"): (
        [_NAME, _column("Pod-Selector"), _AGE],
        lambda o: [_selector_or_none(_get(o, "spec.podSelector")), age(_created(o))],
    ),
    ("discovery.k8s.io", "endpointslices"): (
        [_NAME, *(_column(n) for n in ("AddressType", "Ports", "Endpoints")), _AGE],
        _endpoint_slice,
    ),
    ("policy", "poddisruptionbudgets"): (
        [
            _NAME,
            _column("Min Available"),
            _column("Max Unavailable"),
            _column("Allowed Disruptions", "integer"),
            _AGE,
        ],
        _pdb,
    ),
    ("storage.k8s.io", "storageclasses"): (
        [
            _NAME,
            *(
                _column(n)
                for n in (
                    "Provisioner",
                    "ReclaimPolicy",
                    "VolumeBindingMode",
                    "AllowVolumeExpansion",
                )
            ),
            _AGE,
        ],
        lambda o: [
            o.get("provisioner", ""),
            o.get("reclaimPolicy", ""),
            o.get("volumeBindingMode", ""),
            bool(o.get("allowVolumeExpansion", False)),
            age(_created(o)),
        ],
    ),
    ("scheduling.k8s.io", "priorityclasses"): (
        [
            _NAME,
            _column("Value", "integer"),
            _column("Global-Default", "boolean"),
            _AGE,
            _column("PreemptionPolicy"),
        ],
        lambda o: [
            o.get("value", 0),
            bool(o.get("globalDefault", False)),
            age(_created(o)),
            o.get("preemptionPolicy", ""),
        ],
    ),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): (
        [_NAME, _WEBHOOKS, _AGE],
        lambda o: [len(o.get("webhooks") or []), age(_created(o))],
    ),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): (
        [_NAME, _WEBHOOKS, _AGE],
        lambda o: [len(o.get("webhooks") or []), age(_created(o))],
    ),
    ("", "namespaces"): (
        [_NAME, _column("Status"), _AGE],
        lambda o: [_get(o, "status.phase", ""), age(_created(o))],
    ),
    ("", "configmaps"): (
        [_NAME, _column("Data"), _AGE],
        lambda o: [len(o.get("data") or {}) + len(o.get("binaryData") or {}), age(_created(o))],
    ),
    ("", "secrets"): (
        [_NAME, _column("Type"), _column("Data"), _AGE],
        lambda o: [o.get("type", ""), len(o.get("data") or {}), age(_created(o))],
    ),
    ("", "serviceaccounts"): (
        [_NAME, _column("Secrets"), _AGE],
        lambda o: [len(o.get("secrets") or []), age(_created(o))],
    ),
    ("", "pods"): (
        [
            _NAME,
            _column("Ready"),
            _column("Status"),
            _column("Restarts"),
            _AGE,
            _column("IP", priority=1),
            _column("Node", priority=1),
            _column("Nominated Node", priority=1),
            _column("Readiness Gates", priority=1),
        ],
        _pod,
    ),
    ("", "services"): (
        [
            _NAME,
            _column("Type"),
            _column("Cluster-IP"),
            _column("External-IP"),
            _column("Port(s)"),
            _AGE,
            _column("Selector", priority=1),
        ],
        _service,
    ),
    ("apps", "deployments"): (
        [
            _NAME,
            _column("Ready"),
            _column("Up-to-date"),  # "string" in kube-apiserver's printer, cells numbers
            _column("Available"),
            _AGE,
            *_WORKLOAD_WIDE,
            _column("Selector", priority=1),
        ],
        _deployment,
    ),
    ("apps", "replicasets"): (
        [
            _NAME,
            _column("Desired", "integer"),
            _column("Current", "integer"),
            _column("Ready", "integer"),
            _AGE,
            *_WORKLOAD_WIDE,
            _column("Selector", priority=1),
        ],
        _replica_set,
    ),
    ("apps", "statefulsets"): ([_NAME, _column("Ready"), _AGE, *_WORKLOAD_WIDE], _stateful_set),
    ("apps", "daemonsets"): (
        [
            _NAME,
            *(
                _column(n, "integer")
                for n in ("Desired", "Current", "Ready", "Up-to-date", "Available")
            ),
            _column("Node Selector"),
            _AGE,
            *_WORKLOAD_WIDE,
            _column("Selector", priority=1),
        ],
        _daemon_set,
    ),
    ("batch", "jobs"): (
        [
            _NAME,
            _column("Status"),
            _column("Completions"),
            _column("Duration"),
            _AGE,
            *_WORKLOAD_WIDE,
            _column("Selector", priority=1),
        ],
        _job,
    ),
    ("coordination.k8s.io", "leases"): (
        [_NAME, _column("Holder"), _AGE],
        lambda o: [_get(o, "spec.holderIdentity", ""), age(_created(o))],
    ),
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        [_NAME, _column("Created At", "date")],
        lambda o: [str(_created(o) or "")],
    ),
    # no printer in kube-apiserver: its default table convertor
    ("storage.k8s.io", "csistoragecapacities"): (
        [_NAME, _column("Created At", "date")],
        lambda o: [str(_created(o) or "")],
    ),
    ("certificates.k8s.io", "certificatesigningrequests"): (
        [
            _NAME,
            _AGE,
            *(_column(n) for n in ("SignerName", "Requestor", "RequestedDuration", "Condition")),
        ],
        _csr,
    ),
}
_EVENT_PRINTER: _Printer = (
    [
        _column("Last Seen"),
        _column("Type"),
        _column("Reason"),
        _column("Object"),
        _column("Subobject", priority=1),
        _column("Source", priority=1),
        _column("Message"),
        _column("First Seen", priority=1),
        _column("Count", priority=1),
        {**_NAME, "priority": 1},
    ],
    _event,
)
_PRINTERS[("", "events")] = _EVENT_PRINTER
_PRINTERS[("events.k8s.io", "events")] = _EVENT_PRINTER
_CREATED_AT = _column("Created At", "date")
_BINDING_PRINTER: _Printer = (
    [
        _NAME,
        _column("Role"),
        _AGE,
        *(_column(n, priority=1) for n in ("Users", "Groups", "ServiceAccounts")),
    ],
    _binding,
)
_PRINTERS.update(
    {
        # rest.NewDefaultTableConvertor: kinds without a printer in printers.go
        ("", "limitranges"): ([_NAME, _CREATED_AT], _created_at),
        ("rbac.authorization.k8s.io", "roles"): ([_NAME, _CREATED_AT], _created_at),
        ("rbac.authorization.k8s.io", "clusterroles"): ([_NAME, _CREATED_AT], _created_at),
        ("rbac.authorization.k8s.io", "rolebindings"): _BINDING_PRINTER,
        ("rbac.authorization.k8s.io", "clusterrolebindings"): _BINDING_PRINTER,
        ("", "resourcequotas"): (
            [_NAME, _AGE, _column("Request"), _column("Limit")],
            _resource_quota,
        ),
        ("", "podtemplates"): (
            [_NAME, _column("Containers"), _column("Images"), _column("Pod Labels")],
            _pod_template,
        ),
        ("", "replicationcontrollers"): (
            [
                _NAME,
                *(_column(n, "integer") for n in ("Desired", "Current", "Ready")),
                _AGE,
                *_WORKLOAD_WIDE,
                _column("Selector", priority=1),
            ],
            _replication_controller,
        ),
        ("", "componentstatuses"): (
            [_NAME, *(_column(n) for n in ("Status", "Message", "Error"))],
            _component_status,
        ),
        ("node.k8s.io", "runtimeclasses"): (
            [_NAME, _column("Handler"), _AGE],
            lambda o: [o.get("handler", ""), age(_created(o))],
        ),
        ("storage.k8s.io", "csidrivers"): (
            [
                _NAME,
                _column("AttachRequired", "boolean"),
                _column("PodInfoOnMount", "boolean"),
                _column("StorageCapacity", "boolean"),
                _column("TokenRequests"),
                _column("RequiresRepublish", "boolean"),
                _column("Modes"),
                _AGE,
            ],
            _csi_driver,
        ),
        ("storage.k8s.io", "csinodes"): (
            [_NAME, _column("Drivers", "integer"), _AGE],
            lambda o: [len(_get(o, "spec.drivers", [])), age(_created(o))],
        ),
        ("storage.k8s.io", "volumeattachments"): (
            [
                _NAME,
                _column("Attacher", fmt="name"),
                _column("PV"),
                _column("Node"),
                _column("Attached", "boolean"),
                _AGE,
            ],
            lambda o: [
                _get(o, "spec.attacher", ""),
                _get(o, "spec.source.persistentVolumeName", ""),
                _get(o, "spec.nodeName", ""),
                _get(o, "status.attached", False),
                age(_created(o)),
            ],
        ),
        ("flowcontrol.apiserver.k8s.io", "flowschemas"): (
            [
                _NAME,
                *(
                    _column(n)
                    for n in ("PriorityLevel", "MatchingPrecedence", "DistinguisherMethod")
                ),
                _AGE,
                _column("MissingPL"),
            ],
            _flow_schema,
        ),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): (
            [
                _NAME,
                *(
                    _column(n)
                    for n in (
                        "Type",
                        "NominalConcurrencyShares",
                        "Queues",
                        "HandSize",
                        "QueueLengthLimit",
                    )
                ),
                _AGE,
            ],
            _priority_level,
        ),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies"): (
            [_NAME, _column("Validations", "integer"), _column("ParamKind"), _AGE],
            _admission_policy,
        ),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): (
            [_NAME, _column("PolicyName"), _column("ParamRef"), _AGE],
            _policy_binding,
        ),
        ("apiregistration.k8s.io", "apiservices"): (
            [_NAME, _column("Service"), _column("Available"), _AGE],
            _api_service,
        ),
    }
)


# --- custom resource columns (JSONPath) -----------------------------------------------------

_TOKEN = re.compile(
    r"""
    \.([^.\[\]]+)                                  # .field
  | \[(\d+|\*)\]                                  # [0] or [*]
  | \['([^']*)'\]                                  # ['dotted.key']
  | \[\?\(@\.([\w.-]+)\s*(==|!=)\s*              # [?(@.key == literal)]
      (?:"([^"]*)"|'([^']*)'|([\w.-]+))\)\]
""",
    re.VERBOSE,
)


def jsonpath(obj: Any, path: str) -> list[Any]:
    """The values a printer column's JSONPath (``.spec.size``, ``.items[0]``,
    ``.status.conditions[?(@.type=="Ready")].status``, ``.metadata.labels['a.b/c']``)
    selects from ``obj``, as k8s.io/client-go util/jsonpath selects them."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if path.startswith("$"):
        path = path[1:]
    current = [obj]
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None:
            return []
        pos = match.end()
        field, index, quoted, filter_key, op, *literals = match.groups()
        nxt: list[Any] = []
        for value in current:
            if field is not None or quoted is not None:
                key = field if field is not None else quoted
                if isinstance(value, dict) and key in value:
                    nxt.append(value[key])
            elif index is not None:
                if isinstance(value, list):
                    if index == "*":
                        nxt.extend(value)
                    elif int(index) < len(value):
                        nxt.append(value[int(index)])
                elif isinstance(value, dict) and index == "*":
                    nxt.extend(value.values())
            elif filter_key is not None:
                wanted = next((lit for lit in literals if lit is not None), "")
                items = value if isinstance(value, list) else []
                for item in items:
                    found = _get(item, filter_key)
                    text = found if isinstance(found, str) else json.dumps(found)
                    if (text == wanted) == (op == "=="):
                        nxt.append(item)
        current = nxt
    return current


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return orjson.dumps(value).decode()
    return "null" if value is None else str(value)


def _cr_cell(column: Doc, obj: Doc) -> Any:
    results = jsonpath(obj, column.get("jsonPath", ""))
    if not results or results[0] is None:
        return None
    value = results[0]
    kind = column.get("type", "string")
    if kind == "string":
        return _text(value)
    if kind == "integer":
        return (
            int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if kind == "number":
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        return age(value) if _parse_time(value) is not None else None
    return value


_DEFAULT_CR_COLUMNS = [
    {
        "name": "Age",
        "type": "date",
        "jsonPath": ".metadata.creationTimestamp",
        "description": "Time since metadata.creationTimestamp.",
    }
]


def _printer(rt: ResourceType) -> _Printer:
    if not rt.builtin:
        columns = rt.printer_columns or _DEFAULT_CR_COLUMNS
        definitions = [_NAME] + [
            _column(
                c["name"],
                c.get("type", "string"),
                int(c.get("priority") or 0),
                c.get("format", ""),
                c.get("description", ""),
            )
            for c in columns
        ]
        return definitions, lambda o: [_cr_cell(c, o) for c in columns]
    known = _PRINTERS.get((rt.group, rt.plural))
    if known is not None:
        return known
    return [_NAME, _AGE], lambda o: [age(_created(o))]


# --- conversions ------------------------------------------------------------------------------


def partial_metadata(obj: Doc, version: str) -> Doc:
    """``meta.AsPartialObjectMetadata``: kind, apiVersion and metadata only."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"{META_GROUP}/{version}",
        "metadata": obj.get("metadata") or {},
    }


def _include(query: dict[str, str]) -> str:
    include = query.get("includeObject", "Metadata") or "Metadata"
    if include not in ("None", "Metadata", "Object"):
        raise errors.bad_request(
            "Unable to convert to Table as requested: includeObject: Unsupported value:"
            f' "{include}": supported values: "Metadata", "None", "Object"'
        )
    return include


def to_table(
    rt: ResourceType,
    objects: list[Doc],
    list_meta: Doc | None,
    conversion: Conversion | None = None,
    query: dict[str, str] | None = None,
    headers: bool = True,
) -> Doc:
    """A Table of ``objects`` (which ``rt`` serves) with ``rt``'s columns.

    ``list_meta`` is the list's metadata (resourceVersion, continue), None for a single
    object (whose resourceVersion the Table then carries); ``headers=False`` leaves out
    ``columnDefinitions`` as watch events after the first do.
    """
    version = conversion.version if conversion is not None else "v1"
    include = _include(query or {})
    definitions, cells = _printer(rt)
    rows = []
    for obj in objects:
        row_cells = cells(obj)
        if definitions[0] is _NAME:
            row_cells = [obj["metadata"].get("name", ""), *row_cells]
        row: Doc = {"cells": row_cells}
        if include == "Object":
            row["object"] = obj
        elif include == "Metadata":
            row["object"] = partial_metadata(obj, version)
        rows.append(row)
    if list_meta is not None:
        metadata = {
            k: v
            for k, v in list_meta.items()
            if k in ("resourceVersion", "continue", "remainingItemCount")
        }
    elif objects:
        metadata = {"resourceVersion": objects[0]["metadata"].get("resourceVersion", "")}
    else:
        metadata = {}
    table: Doc = {"kind": "Table", "apiVersion": f"{META_GROUP}/{version}", "metadata": metadata}
    if headers:
        table["columnDefinitions"] = definitions
    table["rows"] = rows
    return table


def convert(
    rt: ResourceType,
    conversion: Conversion,
    objects: list[Doc],
    list_meta: Doc | None,
    query: dict[str, str],
) -> Doc:
    """The body for a get (``list_meta`` None, one object) or a list in ``conversion``'s form."""
    if conversion.kind == "Table":
        return to_table(rt, objects, list_meta, conversion, query)
    if list_meta is None:
        if conversion.kind != "PartialObjectMetadata":
            raise errors.APIError(
                406,
                "NotAcceptable",
                "you requested PartialObjectMetadataList, but the requested object is not a list",
            )
        return partial_metadata(objects[0], conversion.version)
    if conversion.kind != "PartialObjectMetadataList":
        raise errors.APIError(
            406,
            "NotAcceptable",
            "you requested PartialObjectMetadata, but the requested object is a list",
        )
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": conversion.api_version,
        "metadata": list_meta,
        "items": [partial_metadata(o, conversion.version) for o in objects],
    }


def watch_converter(
    rt: ResourceType, conversion: Conversion, query: dict[str, str]
) -> Callable[[bytes], bytes]:
    """Rewrites encoded watch lines: each object becomes a one-row Table (headers on the
    first event only) or a PartialObjectMetadata; ERROR and BOOKMARK lines pass unchanged."""
    _include(query)
    first = [True]

    def rewrite(line: bytes) -> bytes:
        event = orjson.loads(line)
        obj = event.get("object")
        if event.get("type") not in ("ADDED", "MODIFIED", "DELETED") or not isinstance(obj, dict):
            return line
        if conversion.kind == "Table":
            converted = to_table(rt, [obj], None, conversion, query, headers=first[0])
            first[0] = False
        else:
            converted = partial_metadata(obj, conversion.version)
        return orjson.dumps({"type": event["type"], "object": converted}) + b"\n"

    return rewrite
