"""Admission round trip through the manager's webhook server (issue 17).

An embedded API server and a WebhookServer (validating + mutating handlers for ConfigMaps,
self-signed TLS, URL-mode configurations) in one process, as a user's test runs them.
Measured: the latency of a ConfigMap create with the webhooks registered (the API server
calls the mutating then the validating webhook over HTTPS) and without them, median and
p99 in milliseconds; the difference is what admission adds. Target: it adds at most 5 ms
at the median and 20 ms at p99 (a webhook's default timeout is 10 s; controller-runtime's
server answers in about a millisecond).

    python benchmarks/webhooks.py [--creates 400]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from kr8s.asyncio.objects import ConfigMap

from reconcile_kit.testing import APIServer
from reconcile_kit.webhooks import (
    AdmissionRequest,
    SelfSignedCertificates,
    WebhookServer,
    register,
    unregister,
)

TARGET_P50_MS = 5.0
TARGET_P99_MS = 20.0


def webhook_server() -> WebhookServer:
    webhooks = WebhookServer(
        host="127.0.0.1", port=0, certificates=SelfSignedCertificates(["127.0.0.1"]), name="bench"
    )

    @webhooks.mutating(ConfigMap)
    def label(obj: Any, request: AdmissionRequest) -> None:
        obj.raw["metadata"].setdefault("labels", {})["checked"] = "yes"

    @webhooks.validating(ConfigMap)
    def check(obj: Any, request: AdmissionRequest) -> list[str]:
        return [] if len(obj.raw.get("data") or {}) < 100 else ["many keys"]

    return webhooks


async def creates(api: Any, prefix: str, count: int) -> list[float]:
    """Milliseconds per ConfigMap create."""
    latencies = []
    for i in range(count):
        body = {"metadata": {"name": f"{prefix}-{i}", "namespace": "default"}, "data": {"k": "v"}}
        start = time.perf_counter()
        await ConfigMap(body, api=api).create()
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def p99(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.99) - 1)]


async def main(count: int) -> None:
    async with APIServer(record_requests=False) as server:
        api = await server.api()
        await creates(api, "warm", 50)
        plain = await creates(api, "plain", count)
        webhooks = webhook_server()
        async with webhooks:
            await register(api, webhooks, webhooks.url)
            await creates(api, "warm-hooked", 50)
            hooked = await creates(api, "hooked", count)
            await unregister(api, webhooks)
        calls = sum(sum(w.calls.values()) for w in webhooks.webhooks)
    added_p50 = statistics.median(hooked) - statistics.median(plain)
    added_p99 = p99(hooked) - p99(plain)
    print(f"{count} ConfigMap creates each; {calls} webhook calls served")
    print(f"without webhooks: p50 {statistics.median(plain):6.2f} ms  p99 {p99(plain):6.2f} ms")
    hooked_p50 = statistics.median(hooked)
    print(f"with mutating + validating: p50 {hooked_p50:6.2f} ms  p99 {p99(hooked):6.2f} ms")
    verdict = "PASS" if added_p50 <= TARGET_P50_MS and added_p99 <= TARGET_P99_MS else "MISS"
    print(
        f"admission adds p50 {added_p50:.2f} ms (target <= {TARGET_P50_MS:g}), "
        f"p99 {added_p99:.2f} ms (target <= {TARGET_P99_MS:g}): {verdict}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--creates", type=int, default=400)
    asyncio.run(main(parser.parse_args().creates))
