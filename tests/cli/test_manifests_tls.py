"""``reconcile-kit manifests`` without ``--cert-manager``: the webhook TLS Secret the
Deployment mounts is generated, and the configurations and CRDs carry its CA (issue 29,
point 7: it mounted a Secret nothing created and added cert-manager's CA-injection
annotation, without a word)."""

from __future__ import annotations

import asyncio
import base64
import ssl
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from reconcile_kit.cli.commands import main

TARGET = "reconcile_kit.examples.website:manager"
INJECT = "cert-manager.io/inject-ca-from"


def generate(*args: str) -> tuple[list[dict[str, Any]], str]:
    result = CliRunner().invoke(
        main, ["manifests", TARGET, "--image", "op:1", "--namespace", "ops", *args]
    )
    assert result.exit_code == 0, result.output
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc], result.stderr


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["kind"] == kind]


async def handshake(secret: dict[str, Any], ca_bundle: str, host: str, tmp_path: Path) -> str:
    """A TLS handshake with a server holding the Secret's certificate, verified as
    kube-apiserver verifies a webhook: against ``ca_bundle``, for ``host``."""
    data = {name: base64.b64decode(value) for name, value in secret["data"].items()}
    (tmp_path / "tls.crt").write_bytes(data["tls.crt"])
    (tmp_path / "tls.key").write_bytes(data["tls.key"])
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    client_context = ssl.create_default_context(cadata=base64.b64decode(ca_bundle).decode())

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"ok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    async with server:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, ssl=client_context, server_hostname=host),
            10,
        )
        text = (await asyncio.wait_for(reader.read(), 10)).decode()
        writer.close()
    return text


async def test_without_cert_manager_the_mounted_secret_is_generated_and_its_ca_trusted(
    tmp_path: Path,
) -> None:
    docs, note = await asyncio.to_thread(generate)  # the command runs its own loop
    (deployment,) = of_kind(docs, "Deployment")
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    (mounted,) = [v["secret"]["secretName"] for v in volumes if "secret" in v]
    (secret,) = of_kind(docs, "Secret")
    assert (secret["metadata"]["name"], secret["metadata"]["namespace"]) == (mounted, "ops")
    assert secret["type"] == "kubernetes.io/tls"
    assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt"}
    assert docs.index(secret) < docs.index(deployment)
    assert not of_kind(docs, "Certificate") and not of_kind(docs, "Issuer")
    configurations = of_kind(docs, "ValidatingWebhookConfiguration") + of_kind(
        docs, "MutatingWebhookConfiguration"
    )
    (crd,) = of_kind(docs, "CustomResourceDefinition")
    bundles = [w["clientConfig"]["caBundle"] for c in configurations for w in c["webhooks"]]
    bundles.append(crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"])
    assert set(bundles) == {secret["data"]["ca.crt"]}
    for doc in [*configurations, crd]:
        assert INJECT not in (doc["metadata"].get("annotations") or {})
    # the API server, calling website-webhook.ops.svc, trusts the served certificate
    assert await handshake(secret, bundles[0], "website-webhook.ops.svc", tmp_path) == "ok"
    assert "website-webhook-tls" in note and "--cert-manager" in note


def test_with_cert_manager_the_certificate_makes_the_secret_and_the_ca_is_injected() -> None:
    docs, note = generate("--cert-manager")
    assert not of_kind(docs, "Secret") and note == ""
    certificate, metrics = of_kind(docs, "Certificate")
    assert certificate["spec"]["secretName"] == "website-webhook-tls"
    # the secure metrics' certificate too, mounted where --metrics-cert-dir reads it
    assert metrics["spec"]["secretName"] == "website-metrics-tls"
    assert metrics["spec"]["dnsNames"][0] == "website-metrics.ops.svc"
    (deployment,) = of_kind(docs, "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    cert_dir = container["args"][container["args"].index("--metrics-cert-dir") + 1]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "metrics-certs"]
    assert mount["mountPath"] == cert_dir
    (configuration,) = of_kind(docs, "ValidatingWebhookConfiguration")
    assert configuration["metadata"]["annotations"] == {INJECT: "ops/website-webhook"}
    assert all("caBundle" not in w["clientConfig"] for w in configuration["webhooks"])


def test_a_sharded_deployment_has_time_for_its_hand_over() -> None:
    """A sharded replica's stop takes up to the graceful shutdown plus twice
    ``drain_timeout`` (its own moves, then the sharder's wait when it runs the sharder):
    the pod's grace period covers both, plus 10 s (it had one drain: 70 s for 90)."""
    from reconcile_kit import Manager, Sharding
    from reconcile_kit.cli.manifests import DeploymentSettings, documents

    manager = Manager(name="op", sharding=Sharding("op", drain_timeout=30))
    settings = DeploymentSettings(target="x:manager", replicas=3, shard=True)
    deployment = next(d for d in documents(manager, settings) if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == manager.graceful_shutdown_timeout + 60 + 10
