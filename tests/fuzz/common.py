"""Strategies shared by the kinds: names, labels, quantities, containers, pod templates,
and the metadata mutations every kind is subject to (apimachinery ValidateObjectMeta)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .spec import Change, Obj, changes, put

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_ALNUM = _LOWER + "0123456789"


def dns_label(max_middle: int = 8) -> st.SearchStrategy[str]:
    """An RFC 1123 label: lower-case alphanumerics and '-', starting with a letter."""
    middle = st.text(_ALNUM + "-", max_size=max_middle)
    end = st.text(_ALNUM, min_size=1, max_size=1)
    return st.builds(
        lambda a, m, e: a + (m + e if m or e else ""),
        st.sampled_from(_LOWER),
        middle,
        st.one_of(st.just(""), end),
    ).filter(lambda s: not s.endswith("-"))


def dns_subdomain() -> st.SearchStrategy[str]:
    """An RFC 1123 subdomain of one or two labels."""
    return st.lists(dns_label(6), min_size=1, max_size=2).map(".".join)


def label_key() -> st.SearchStrategy[str]:
    """A qualified name, sometimes prefixed (``example.com/name``)."""
    name = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?", fullmatch=True)
    prefix = st.sampled_from(["", "example.com/", "app.kubernetes.io/"])
    return st.builds(lambda p, n: p + n, prefix, name)


def label_value() -> st.SearchStrategy[str]:
    """A label value (possibly empty)."""
    return st.from_regex(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?)?", fullmatch=True)


def labels(min_size: int = 0) -> st.SearchStrategy[dict[str, str]]:
    """A label map."""
    return st.dictionaries(label_key(), label_value(), min_size=min_size, max_size=3)


def annotations() -> st.SearchStrategy[dict[str, str]]:
    """An annotation map (values are free text)."""
    return st.dictionaries(label_key(), st.text(max_size=12), max_size=2)


def quantity() -> st.SearchStrategy[str]:
    """A resource quantity in the forms people write (``100m``, ``0.5``, ``1Gi``, ``2e3``...)."""
    whole = st.integers(1, 2048).map(str)
    suffixed = st.builds(
        lambda n, s: f"{n}{s}",
        st.integers(1, 1024),
        st.sampled_from(["m", "", "k", "M", "G", "Ki", "Mi", "Gi"]),
    )
    fraction = st.sampled_from(["0.5", "1.5", "0.25", "2.000", "0.1", "1e3", "100e-3", "1000m"])
    return st.one_of(whole, suffixed, fraction)


def memory() -> st.SearchStrategy[str]:
    """A memory quantity."""
    return st.builds(
        lambda n, s: f"{n}{s}", st.integers(1, 512), st.sampled_from(["Mi", "Gi", "M"])
    )


def _resources() -> st.SearchStrategy[dict[str, Any]]:
    both = st.fixed_dictionaries({}, optional={"cpu": quantity(), "memory": memory()})
    return st.one_of(
        st.just({}),
        both.map(lambda r: {"requests": r} if r else {}),
        both.map(lambda r: {"limits": r} if r else {}),
        both.map(lambda r: {"requests": r, "limits": r} if r else {}),
    )


def _ports() -> st.SearchStrategy[list[dict[str, Any]]]:
    port = st.fixed_dictionaries(
        {"containerPort": st.integers(1, 65535)},
        optional={"protocol": st.sampled_from(["TCP", "UDP", "SCTP"])},
    )
    return st.lists(port, max_size=2, unique_by=lambda p: (p["containerPort"], p.get("protocol")))


def container(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """A container named ``name``: image, ports, resources, env, pull policy."""
    env = st.lists(
        st.fixed_dictionaries(
            {"name": st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True)},
            optional={"value": st.text(_ALNUM, max_size=5)},
        ),
        max_size=2,
    )
    return st.fixed_dictionaries(
        {"name": st.just(name), "image": st.sampled_from(["nginx", "busybox:1.36", "r/app:v2"])},
        optional={
            "ports": _ports(),
            "resources": _resources(),
            "env": env,
            "imagePullPolicy": st.sampled_from(["Always", "IfNotPresent", "Never"]),
            "command": st.lists(st.sampled_from(["sh", "-c", "sleep 1"]), min_size=1, max_size=2),
        },
    )


def pod_spec(restart: tuple[str, ...] = ("Always", "OnFailure", "Never")) -> st.SearchStrategy[Obj]:
    """A pod spec: one or two containers, a restart policy from ``restart``, and a few of
    the optional fields people set."""
    containers = st.lists(dns_label(5), min_size=1, max_size=2, unique=True).flatmap(
        lambda names: st.tuples(*(container(n) for n in names)).map(list)
    )
    # Without "Always" among the choices (Jobs), restartPolicy is required.
    required: dict[str, st.SearchStrategy[Any]] = {"containers": containers}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    (optional if "Always" in restart else required)["restartPolicy"] = st.sampled_from(restart)
    return st.fixed_dictionaries(
        required,
        optional=optional
        | {
            "terminationGracePeriodSeconds": st.integers(0, 120),
            "nodeSelector": st.dictionaries(label_key(), label_value(), max_size=1),
            "hostname": dns_label(),
            "dnsPolicy": st.sampled_from(["ClusterFirst", "Default", "None"]),
            "priority": st.just(0),
        },
    ).map(_fix_dns)


def _fix_dns(spec: Obj) -> Obj:
    # dnsPolicy None needs a dnsConfig with a nameserver (ValidatePodSpec validateDNSPolicy).
    if spec.get("dnsPolicy") == "None":
        spec["dnsConfig"] = {"nameservers": ["10.0.0.10"]}
    # The real control plane runs without the ServiceAccount admission plugin, which the
    # embedded server has: name the account, as that plugin would.
    spec.setdefault("serviceAccountName", "default")
    return spec


def pod_template(
    template_labels: dict[str, str], restart: tuple[str, ...] = ("Always",)
) -> st.SearchStrategy[Obj]:
    """A pod template labelled ``template_labels`` (plus drawn extras)."""
    return st.builds(
        lambda extra, spec: {"metadata": {"labels": {**extra, **template_labels}}, "spec": spec},
        labels(),
        pod_spec(restart),
    )


def selector_labels() -> st.SearchStrategy[dict[str, str]]:
    """Non-empty labels for a selector and the template it must match."""
    return st.dictionaries(label_key(), label_value(), min_size=1, max_size=2)


def metadata(name: st.SearchStrategy[str] | None = None) -> st.SearchStrategy[Obj]:
    """``metadata`` with a name and maybe labels and annotations."""
    return st.fixed_dictionaries(
        {"name": name if name is not None else dns_label()},
        optional={"labels": labels(1), "annotations": annotations()},
    )


def obj(api_version: str, kind: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Obj]:
    """An object of ``kind`` with drawn metadata and ``fields``."""
    return st.fixed_dictionaries(
        {"apiVersion": st.just(api_version), "kind": st.just(kind), "metadata": metadata()} | fields
    )


def _bad_label(obj: Obj) -> None:
    obj["metadata"].setdefault("labels", {})["bad key!"] = "v"


def _bad_label_value(obj: Obj) -> None:
    obj["metadata"].setdefault("labels", {})["ok"] = "-starts-with-dash"


def _bad_annotation(obj: Obj) -> None:
    obj["metadata"].setdefault("annotations", {})["a/b/c"] = "v"


def _long_name(obj: Obj) -> None:
    obj["metadata"]["name"] = "n" * 254


METADATA_INVALID: tuple[Change, ...] = (
    put("metadata.name", "Bad_Name"),
    put("metadata.name", "-dash"),
    Change("metadata.name = 'n' * 254", _long_name),
    Change("metadata.labels['bad key!'] = 'v'", _bad_label),
    Change("metadata.labels['ok'] = '-starts-with-dash'", _bad_label_value),
    Change("metadata.annotations['a/b/c'] = 'v'", _bad_annotation),
)
"""Mutations of metadata that every kind rejects (ValidateObjectMeta)."""


def invalid(*own: Change) -> st.SearchStrategy[Change]:
    """The kind's own invalidating changes and the metadata ones."""
    return changes(*own, *METADATA_INVALID)


def _relabel(value: dict[str, str]) -> Change:
    return put("metadata.labels", value)


METADATA_UPDATES: st.SearchStrategy[Change] = st.one_of(
    labels().map(_relabel),
    annotations().map(lambda value: put("metadata.annotations", value)),
    changes(put("metadata.name", "renamed"), put("metadata.uid", "0000-other")),
)
"""Updates of metadata that any kind takes or rejects the same way (labels, annotations,
and a changed name or uid: ValidateObjectMetaUpdate)."""


def updates(*own: st.SearchStrategy[Change]) -> st.SearchStrategy[Change]:
    """The kind's own updates and the metadata ones."""
    return st.one_of(*own, METADATA_UPDATES)
