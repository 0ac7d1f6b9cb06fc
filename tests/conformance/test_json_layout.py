"""How answers are laid out byte for byte, on both backends: kube-apiserver's serializer ends
a JSON document with a newline (clients comparing error bodies, such as the kubernetes
Python client's ``create_from_yaml`` tests, see it), a Status lists ``details`` before
``code`` (metav1.Status's field order), ``?pretty=true`` or a curl User-Agent indents the
answer, and ``/openapi`` documents and ``/version`` keep their own layout."""

from __future__ import annotations

import json

import pytest

from reconcile_kit.testing.backends import Backend

from .kube import admin_http

pytestmark = pytest.mark.asyncio

QUIET_AGENT = "layout-probe/1.0"


async def raw(
    backend: Backend,
    method: str,
    path: str,
    body: object = None,
    agent: str = QUIET_AGENT,
    params: dict[str, str] | None = None,
    accept: str = "application/json",
) -> tuple[int, bytes]:
    headers = {"Accept": accept, "User-Agent": agent}
    if body is not None:
        content_type = "merge-patch+json" if method == "PATCH" else "json"
        headers["Content-Type"] = f"application/{content_type}"
    async with admin_http(backend) as http:
        content = None if body is None else json.dumps(body)
        answer = await http.request(method, path, headers=headers, params=params, content=content)
        return answer.status_code, answer.content


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


async def test_json_answers_end_with_a_newline(backend: Backend) -> None:
    path = configmaps(backend)
    code, created = await raw(backend, "POST", path, {"metadata": {"name": "nl"}})
    assert code == 201 and created.endswith(b"}\n")
    for answer in (
        await raw(backend, "GET", f"{path}/nl"),
        await raw(backend, "GET", path),
        await raw(backend, "GET", f"{path}/missing"),
        await raw(backend, "GET", "/api/v1"),
        await raw(backend, "GET", "/apis"),
        await raw(
            backend,
            "GET",
            "/apis",
            accept="application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        ),
        await raw(backend, "PATCH", f"{path}/nl", {"data": {"a": "b"}}),
    ):
        assert answer[1].endswith(b"}\n") and not answer[1].endswith(b"\n\n"), answer


async def test_a_status_lists_details_before_code(backend: Backend) -> None:
    path = configmaps(backend)
    await raw(backend, "POST", path, {"metadata": {"name": "dup"}})
    code, body = await raw(backend, "POST", path, {"metadata": {"name": "dup"}})
    assert code == 409
    assert body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"configmaps \\"dup\\" already exists","reason":"AlreadyExists",'
        b'"details":{"name":"dup","kind":"configmaps"},"code":409}\n'
    )


async def test_a_deletion_status_names_the_group_before_the_kind(backend: Backend) -> None:
    path = f"/apis/coordination.k8s.io/v1/namespaces/{backend.namespace}/leases"
    await raw(backend, "POST", path, {"metadata": {"name": "gone"}})
    code, body = await raw(backend, "DELETE", f"{path}/gone")
    assert code == 200
    status = json.loads(body)
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "details"]
    assert list(status["details"]) == ["name", "group", "kind", "uid"]


@pytest.mark.parametrize(
    ("agent", "params", "pretty"),
    [
        (QUIET_AGENT, {"pretty": "true"}, True),
        (QUIET_AGENT, {"pretty": "1"}, True),
        (QUIET_AGENT, {"pretty": "yes"}, False),  # strconv.ParseBool cannot read it
        ("curl/8.5.0", {}, True),
        ("curl/8.5.0", {"pretty": "false"}, False),
        ("Wget/1.21", {}, True),
        ("Mozilla/5.0 (X11; Linux x86_64)", {}, True),
        ("python-curl", {}, False),
        (QUIET_AGENT, {}, False),
    ],
)
async def test_pretty_answers(
    backend: Backend, agent: str, params: dict[str, str], pretty: bool
) -> None:
    path = configmaps(backend)
    await raw(backend, "POST", path, {"metadata": {"name": "pp"}, "data": {"k": "v"}})
    for answer in (
        await raw(backend, "GET", f"{path}/pp", agent=agent, params=params),
        await raw(backend, "GET", f"{path}/missing", agent=agent, params=params),
    ):
        body = answer[1]
        if pretty:
            assert body.startswith(b'{\n  "') and body.endswith(b"\n}"), body[:80]
        else:
            assert body.startswith(b'{"') and body.endswith(b"}\n"), body[:80]


async def test_openapi_and_version_keep_their_layout(backend: Backend) -> None:
    _, index = await raw(backend, "GET", "/openapi/v3", agent="curl/8.5.0")
    assert index.startswith(b'{"paths":') and index.endswith(b"}}}")
    _, version = await raw(backend, "GET", "/version")
    assert version.startswith(b'{\n  "major": "1",\n  "minor": "32",') and version.endswith(b"\n}")
