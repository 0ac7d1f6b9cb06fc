"""Endpoints and EndpointSlices validated as kube-apiserver 1.32.5 validates them
(pkg/apis/core/validation ValidateEndpoints, pkg/apis/discovery/validation
ValidateEndpointSlice): endpoint IPs (valid, not unspecified, loopback or link-local),
hostnames, node names, ports (range, protocol, names required when there are several,
unique in a slice), a slice's addresses of its address type, which is required, supported
and immutable. Each row: an object (or a change to one) and the 422 it gets, causes and
message byte for byte, or its acceptance."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile_kit.testing.backends import Backend

from .test_validation_core import (
    PORT_RANGE,
    QUALIFIED,
    RFC1123_LABEL,
    RFC1123_SUB,
    inv,
    req_,
    unsupported,
)
from .validation_table import Cause, create_refused, update_refused

IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
LOOPBACK = "may not be in the loopback range (127.0.0.0/8, ::1/128)"
LINK_LOCAL = "may not be in the link-local range (169.254.0.0/16, fe80::/10)"
MULTICAST = "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"
ADDRESSES = "must specify `addresses` or `notReadyAddresses`"
PROTOCOLS = ("SCTP", "TCP", "UDP")


def ep(*subsets: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "ep"}, "subsets": list(subsets)}


def subset(*ips: str, ports: list[Any] | None = None) -> dict[str, Any]:
    return {"addresses": [{"ip": ip} for ip in ips], "ports": ports or [{"port": 80}]}


def es(kind: str | None = "IPv4", *addresses: str, **fields: Any) -> dict[str, Any]:
    body = {"metadata": {"name": "es"}, "endpoints": [{"addresses": list(addresses)}], **fields}
    return {**body, "addressType": kind} if kind is not None else body


ADDRESS = "10.1.2.3"
CREATES = [
    pytest.param("endpoints", ep(subset(ADDRESS)), [], id="ep-valid"),
    pytest.param("endpoints", ep({"addresses": [{"ip": ADDRESS}]}), [], id="ep-no-ports"),
    pytest.param(
        "endpoints",
        ep(subset("nope")),
        [
            inv("subsets[0].addresses[0].ip", '"nope"', IP),
            inv("subsets[0].addresses[0].ip", '"nope"', "must be a valid IP address"),
        ],
        id="ep-not-an-ip",
    ),
    pytest.param(
        "endpoints",
        ep(subset("127.0.0.1", "169.254.1.1", "224.0.0.1", "0.0.0.0", "::1", "fe80::1")),
        [
            inv("subsets[0].addresses[0].ip", '"127.0.0.1"', LOOPBACK),
            inv("subsets[0].addresses[1].ip", '"169.254.1.1"', LINK_LOCAL),
            inv("subsets[0].addresses[2].ip", '"224.0.0.1"', MULTICAST),
            inv("subsets[0].addresses[3].ip", '"0.0.0.0"', "may not be unspecified (0.0.0.0)"),
            inv("subsets[0].addresses[4].ip", '"::1"', LOOPBACK),
            inv("subsets[0].addresses[5].ip", '"fe80::1"', LINK_LOCAL),
        ],
        id="ep-special-ips",
    ),
    pytest.param("endpoints", ep({}), [req_("subsets[0]", ADDRESSES)], id="ep-no-addresses"),
    pytest.param(
        "endpoints",
        ep(subset(ADDRESS, ports=[{"port": 70000, "protocol": "tcp"}])),
        [
            inv("subsets[0].ports[0].port", "70000", PORT_RANGE),
            unsupported("subsets[0].ports[0].protocol", "tcp", *PROTOCOLS),
        ],
        id="ep-port",
    ),
    pytest.param(
        "endpoints",
        ep(subset(ADDRESS, ports=[{"port": 80}, {"port": 81, "name": "HTTP"}])),
        [
            req_("subsets[0].ports[0].name"),
            inv("subsets[0].ports[1].name", '"HTTP"', RFC1123_LABEL),
        ],
        id="ep-port-names",
    ),
    pytest.param(
        "endpoints",
        ep(subset(ADDRESS, ports=[{"port": 80, "appProtocol": "a b"}])),
        [inv("subsets[0].ports[0].appProtocol", '"a b"', QUALIFIED)],
        id="ep-app-protocol",
    ),
    pytest.param(
        "endpoints",
        ep(
            {
                "notReadyAddresses": [{"ip": ADDRESS, "hostname": "Bad_H", "nodeName": "Bad_N"}],
                "ports": [{"port": 80}],
            }
        ),
        [
            inv("subsets[0].notReadyAddresses[0].hostname", '"Bad_H"', RFC1123_LABEL),
            inv("subsets[0].notReadyAddresses[0].nodeName", '"Bad_N"', RFC1123_SUB),
        ],
        id="ep-hostname-and-node",
    ),
    pytest.param(
        "endpointslices",
        es("IPv4", "10.0.0.5", ports=[{"port": 80}]),
        [],
        id="es-valid",
    ),
    pytest.param("endpointslices", es(None, "10.0.0.5"), [req_("addressType")], id="es-no-type"),
    pytest.param(
        "endpointslices",
        es("IP", "10.0.0.5"),
        [unsupported("addressType", "IP", "FQDN", "IPv4", "IPv6")],
        id="es-type",
    ),
    pytest.param(
        "endpointslices",
        es("IPv4", "nope", "127.0.0.1", "::1"),
        [
            inv("endpoints[0].addresses[0]", '"nope"', "must be a valid IPv4 address"),
            inv("endpoints[0].addresses[0]", '"nope"', "must be a valid IP address"),
            inv("endpoints[0].addresses[1]", '"127.0.0.1"', LOOPBACK),
            inv("endpoints[0].addresses[2]", '"::1"', "must be a valid IPv4 address"),
            inv("endpoints[0].addresses[2]", '"::1"', LOOPBACK),
        ],
        id="es-ipv4",
    ),
    pytest.param(
        "endpointslices",
        es("IPv6", "10.0.0.1", "fe80::1", "2001:db8::1"),
        [
            inv("endpoints[0].addresses[0]", '"10.0.0.1"', "must be a valid IPv6 address"),
            inv("endpoints[0].addresses[1]", '"fe80::1"', LINK_LOCAL),
        ],
        id="es-ipv6",
    ),
    pytest.param(
        "endpointslices",
        es("FQDN", "Bad_Name", "a.b"),
        [inv("endpoints[0].addresses[0]", '"Bad_Name"', RFC1123_SUB)],
        id="es-fqdn",
    ),
    pytest.param(
        "endpointslices",
        es("IPv4"),
        [req_("endpoints[0].addresses", "must contain at least 1 address")],
        id="es-no-addresses",
    ),
    pytest.param(
        "endpointslices",
        es(
            "IPv4",
            "10.0.0.1",
            ports=[
                {"port": 0, "name": "A"},
                {"port": 70000, "name": "A", "protocol": "tcp"},
                {"name": "", "appProtocol": "a b"},
                {},
            ],
        ),
        [
            inv("ports[0].name", '"A"', RFC1123_LABEL),
            inv("ports[1].name", '"A"', RFC1123_LABEL),
            ("FieldValueDuplicate", "ports[1].name", 'Duplicate value: "A"'),
            unsupported("ports[1].protocol", "tcp", *PROTOCOLS),
            inv("ports[2].appProtocol", '"a b"', QUALIFIED),
            ("FieldValueDuplicate", "ports[3].name", 'Duplicate value: ""'),
        ],
        id="es-ports-numbers-unchecked",
    ),
    pytest.param(
        "endpointslices",
        {
            **es("IPv4"),
            "endpoints": [{"addresses": ["10.0.0.1"], "nodeName": "Bad_N", "hostname": "Bad_H"}],
        },
        [
            inv("endpoints[0].nodeName", '"Bad_N"', RFC1123_SUB),
            inv("endpoints[0].hostname", '"Bad_H"', RFC1123_LABEL),
        ],
        id="es-node-and-hostname",
    ),
]


@pytest.mark.parametrize(("plural", "body", "causes"), CREATES)
async def test_create(
    backend: Backend, plural: str, body: dict[str, Any], causes: list[Cause]
) -> None:
    await create_refused(backend, plural, body, causes)


UPDATES = [
    pytest.param(
        "endpoints",
        ep(subset(ADDRESS)),
        {"subsets": [subset("x")]},
        [
            inv("subsets[0].addresses[0].ip", '"x"', IP),
            inv("subsets[0].addresses[0].ip", '"x"', "must be a valid IP address"),
        ],
        id="ep-ip",
    ),
    pytest.param(
        "endpointslices",
        es("IPv4", "10.0.0.1"),
        {"addressType": "IPv6", "endpoints": [{"addresses": ["2001:db8::1"]}]},
        [inv("addressType", '"IPv6"', "field is immutable")],
        id="es-type-immutable",
    ),
    pytest.param(
        "endpointslices",
        es("IPv4", "10.0.0.1"),
        {"endpoints": [{"addresses": []}]},
        [req_("endpoints[0].addresses", "must contain at least 1 address")],
        id="es-no-addresses",
    ),
]


@pytest.mark.parametrize(("plural", "body", "patch", "causes"), UPDATES)
async def test_update(
    backend: Backend, plural: str, body: dict[str, Any], patch: dict[str, Any], causes: list[Cause]
) -> None:
    await update_refused(backend, plural, body, patch, causes)
