"""APIServices validated as kube-apiserver 1.32.5's aggregator does (kube-aggregator
ValidateAPIService and ValidateAPIServiceStatus): a name that is a path segment and
``version.group``, group, version, priorities, a service reference or a local service's
lack of TLS settings; a service's port defaults to 443. Each case's group is the test's
own; what is stored is deleted at once (an APIService for a group nobody serves makes
the aggregator's discovery of it fail)."""

from __future__ import annotations

from typing import Any

from reconcile_kit.testing.backends import Backend

from .kube import MERGE, ok, req
from .test_validation_core import RFC1123_SUB, inv, req_, unsupported
from .validation_table import Cause, check_invalid

PATH = "/apis/apiregistration.k8s.io/v1/apiservices"
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with"
    " an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or"
    " 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def api_service(name: str, **spec: Any) -> dict[str, Any]:
    base = {"groupPriorityMinimum": 100, "versionPriority": 10}
    return {"metadata": {"name": name}, "spec": {**base, **spec}}


async def refused(backend: Backend, body: dict[str, Any], causes: list[Cause]) -> None:
    reply = await req(backend, "POST", PATH, body)
    check_invalid("apiservices", body["metadata"]["name"], reply, causes)


async def test_name_is_version_dot_group(backend: Backend) -> None:
    group = f"{backend.namespace}.example.com"
    body = api_service(f"v2.{group}", group=group, version="v1")
    wanted = f'must be `spec.version+"."+spec.group`: "v1.{group}"'
    await refused(backend, body, [inv("metadata.name", f'"v2.{group}"', wanted)])
    body = api_service("v1/x", group=group, version="v1")
    await refused(backend, body, [inv("metadata.name", '"v1/x"', "may not contain '/'")])


async def test_spec_fields(backend: Backend) -> None:
    group = f"{backend.namespace}.Bad_Group"
    body = api_service(
        f"1v.{group}",
        group=group,
        version="1v",
        groupPriorityMinimum=0,
        versionPriority=1001,
        caBundle="YWJj",
        insecureSkipTLSVerify=True,
    )
    causes = [
        inv("spec.group", f'"{group}"', RFC1123_SUB),
        inv("spec.version", '"1v"', DNS1035),
        inv("spec.groupPriorityMinimum", "0", "must be positive and less than 20000"),
        inv("spec.versionPriority", "1001", "must be positive and less than 1000"),
        inv("spec.caBundle", '"3 bytes"', "local APIServices may not have a caBundle"),
        inv(
            "spec.insecureSkipTLSVerify",
            "true",
            "local APIServices may not have insecureSkipTLSVerify",
        ),
    ]
    await refused(backend, body, causes)
    body = api_service("v2.", version="v2")
    detail = "only v1 may have an empty group and it better be legacy kube"
    await refused(backend, body, [req_("spec.group", detail)])


async def test_service_reference(backend: Backend) -> None:
    group = f"{backend.namespace}.example.com"
    body = api_service(
        f"v1.{group}",
        group=group,
        version="v1",
        service={"port": 70000},
        caBundle="YWJj",
        insecureSkipTLSVerify=True,
    )
    causes = [
        req_("spec.service.namespace"),
        req_("spec.service.name"),
        inv(
            "spec.service.port",
            "70000",
            "port is not valid: must be between 1 and 65535, inclusive",
        ),
        inv("spec.insecureSkipTLSVerify", "true", "may not be true if caBundle is present"),
    ]
    await refused(backend, body, causes)


async def test_stored_defaults_and_status(backend: Backend) -> None:
    """A service's port defaults to 443; the status's condition statuses are checked on
    /status (stored, then deleted at once)."""
    group = f"{backend.namespace}.example.com"
    service = {"namespace": backend.namespace, "name": "nobody"}
    body = api_service(f"v1.{group}", group=group, version="v1", service=service)
    path = f"{PATH}/v1.{group}"
    try:
        created = await ok(backend, "POST", PATH, body)
        assert created["spec"]["service"]["port"] == 443
        status = {"status": {"conditions": [{"type": "Available", "status": "Maybe"}]}}
        reply = await req(backend, "PATCH", f"{path}/status", status, content_type=MERGE)
        allowed = ("True", "False", "Unknown")
        field = "status.conditions[0].status"
        check_invalid("apiservices", f"v1.{group}", reply, [unsupported(field, "Maybe", *allowed)])
    finally:
        await req(backend, "DELETE", path)
