"""Raw Kubernetes API calls over kr8s's HTTP session, for tests that check wire details."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import kr8s.asyncio


def split_path(path: str) -> tuple[str, str, str]:
    """``(base, version, url)`` of an API path, as kr8s's ``call_api`` takes them."""
    parts = path.strip("/").split("/")
    if len(parts) < (2 if parts[0] == "api" else 3):
        return "/" + "/".join(parts), "", ""
    if parts[0] == "api":
        return "/api", parts[1], "/".join(parts[2:])
    return "/apis", f"{parts[1]}/{parts[2]}", "/".join(parts[3:])


async def send(
    api: kr8s.asyncio.Api,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    params: dict[str, str] | None = None,
    raw: bytes | None = None,
    accept: str | None = None,
) -> tuple[int, Any, httpx.Headers]:
    """Send one request (no retries, no raising); returns status, body (JSON or text), headers."""
    base, version, url = split_path(path)
    headers = {"Content-Type": content_type} | ({"Accept": accept} if accept else {})
    kwargs: dict[str, Any] = {"headers": headers}
    if raw is not None:
        kwargs["content"] = raw
    elif body is not None:
        kwargs["content"] = json.dumps(body)
    if params:
        kwargs["params"] = params
    async with api.call_api(
        method, version=version, base=base, url=url, raise_for_status=False, **kwargs
    ) as response:
        try:
            decoded: Any = response.json()
        except ValueError:
            decoded = response.text
        return response.status_code, decoded, response.headers


async def call(
    api: kr8s.asyncio.Api,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    params: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> tuple[int, Any]:
    """Send one request; returns (status, decoded JSON body or text)."""
    status, decoded, _ = await send(api, method, path, body, content_type, params, raw)
    return status, decoded


async def watch(
    api: kr8s.asyncio.Api, path: str, params: dict[str, str]
) -> AsyncIterator[dict[str, Any]]:
    """Yield watch events (decoded lines) until the server ends the stream."""
    base, version, url = split_path(path)
    async with api.call_api(
        "GET", version=version, base=base, url=url, stream=True, params={"watch": "1", **params}
    ) as response:
        async for line in response.aiter_lines():
            if line.strip():
                yield json.loads(line)
