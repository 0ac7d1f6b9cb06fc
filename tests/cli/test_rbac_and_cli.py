"""`reconcile-kit rbac` against the requests a run really makes, and `reconcile-kit run`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import click
import kr8s.asyncio
import pytest
import yaml
from click.testing import CliRunner
from kr8s.asyncio.objects import ConfigMap, Secret, new_class

from reconcile_kit import (
    Context,
    Controller,
    LeaderElection,
    Manager,
    PatchHelper,
    add_finalizer,
    set_condition,
    set_controller_reference,
)
from reconcile_kit.cli.commands import main
from reconcile_kit.cli.rbac import manifests, render, required_grants
from reconcile_kit.testing import APIServer, eventually

from ..crds import WIDGETS, widget, widget_crd
from ..kubehttp import call

ROOT = Path(__file__).resolve().parents[2]
Widget = new_class("Widget", "example.com/v1", namespaced=True, plural="widgets")


def build_manager() -> Manager:
    """Widgets own ConfigMaps and are mapped from Secrets; events and a leader lease."""

    async def reconcile(obj: Any, ctx: Context) -> None:
        child = await ConfigMap(
            {
                "metadata": {"name": obj.name, "namespace": obj.namespace},
                "data": {"size": str(obj.raw["spec"]["size"])},
            },
            api=ctx.api,
        )
        set_controller_reference(obj, child)
        await ctx.apply(child)
        async with PatchHelper(obj):
            add_finalizer(obj, "example.com/cleanup")
            set_condition(obj, "Ready", "True", "Reconciled")
        obj.raw["status"]["replicas"] = obj.raw["spec"]["size"]
        await ctx.update_status(obj)
        for _ in range(3):
            ctx.recorder.event(obj, "Normal", "Synced", "synced")

    def mapper(secret: dict[str, Any]) -> list[tuple[str, str]]:
        return [("default", secret["metadata"]["name"])]

    manager = Manager(
        namespace="default",
        name="widgets",
        leader_election=LeaderElection(
            "widgets",
            namespace="ops",
            retry_period=0.5,
            renew_deadline=1.0,
            lease_duration=2.0,
        ),
    )
    manager.add(Controller(Widget).owns(ConfigMap).watches(Secret, mapper), reconcile)
    return manager


def allows(docs: list[dict[str, Any]], group: str, resource: str, verb: str, ns: str) -> bool:
    """Whether a role in ``docs`` that a binding in ``docs`` grants allows the request."""
    bound = {
        (d["roleRef"]["kind"], d["roleRef"]["name"], d["metadata"].get("namespace"))
        for d in docs
        if d["kind"].endswith("Binding")
    }
    for doc in docs:
        meta = doc["metadata"]
        if (doc["kind"], meta["name"], meta.get("namespace")) not in bound:
            continue
        if doc["kind"] == "Role" and meta["namespace"] != ns:
            continue
        if any(
            group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]
            for rule in doc["rules"]
        ):
            return True
    return False


def granted(manager: Manager) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for (group, resource, _), verbs in required_grants(manager).items()
        for verb in verbs
    }


def _authorized_as(record: Any) -> tuple[str, ...]:
    """The verbs kube-apiserver checks for a request: a server-side apply that creates the
    object is authorized as create too (Kubernetes API concepts, "Patch and apply")."""
    if record.verb == "patch" and record.status == 201:
        return ("patch", "create")
    return (record.verb,)


class Outside:
    """The test's own requests, over aiohttp: its User-Agent tells them from the manager's."""

    def __init__(self, server: APIServer, session: aiohttp.ClientSession) -> None:
        self.server, self.session = server, session

    async def __call__(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> dict[str, Any]:
        async with self.session.request(
            method, self.server.url + path, json=body, headers={"Content-Type": content_type}
        ) as response:
            result: dict[str, Any] = await response.json()
            return result


async def test_rbac_covers_every_request_and_grants_nothing_more(apiserver: APIServer) -> None:
    async with aiohttp.ClientSession() as session:
        outside = Outside(apiserver, session)
        await outside(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd()
        )
        await outside("POST", "/api/v1/namespaces", {"metadata": {"name": "ops"}})
        manager = build_manager()
        manager.api = await apiserver.api()
        # one conflict on the conditions write makes the PatchHelper re-read (its GET)
        apiserver.faults.fail(409, verb="patch", resource="widgets", subresource="status")
        task = asyncio.create_task(manager.run())
        await outside("POST", WIDGETS, widget("w1", size=2))
        await outside("POST", "/api/v1/namespaces/default/secrets", {"metadata": {"name": "w1"}})
        controller = manager.controllers[0]
        await eventually(lambda: controller.running, 10)

        async def settled() -> bool:
            body = await outside("GET", f"{WIDGETS}/w1")
            return body.get("status", {}).get("replicas") == 2

        assert await controller.wait_reconciled(settled, 10)
        await outside(
            "PATCH", f"{WIDGETS}/w1", {"spec": {"size": 3}}, "application/merge-patch+json"
        )

        async def resized() -> bool:
            body = await outside("GET", "/api/v1/namespaces/default/configmaps/w1")
            return body.get("data", {}).get("size") == "3"

        assert await controller.wait_reconciled(resized, 10)
        assert manager.recorder is not None
        await manager.recorder.flush()
        await eventually(
            lambda: any(r.resource == "leases" and r.verb == "update" for r in apiserver.requests),
            10,
            interval=0.05,
            what="a lease renewal",
        )
        manager.stop()
        await asyncio.wait_for(task, 10)
    used = {
        (r.group, r.resource + (f"/{r.subresource}" if r.subresource else ""), verb)
        for r in apiserver.requests
        if r.verb and r.user_agent.startswith("kr8s")
        for verb in _authorized_as(r)
    }
    needed = granted(manager)
    assert used - needed == set()  # every request the manager made is granted
    # and nothing it did not need, but for the owner's finalizers: admission checks that
    # permission (blockOwnerDeletion) without a request of its own
    assert needed - used == {("example.com", "widgets/finalizers", "update")}
    # the YAML grants each request in its namespace: the Lease's in ops, the rest in default
    docs = [doc for _, doc in manifests(manager)]
    requests = {
        (r.group, r.resource + (f"/{r.subresource}" if r.subresource else ""), r.verb, r.namespace)
        for r in apiserver.requests
        if r.verb and r.user_agent.startswith("kr8s")
    }
    assert {ns for group, *_, ns in requests if group == "coordination.k8s.io"} == {"ops"}
    assert [r for r in requests if not allows(docs, *r)] == []
    assert not allows(docs, "coordination.k8s.io", "leases", "get", "default")


def test_rbac_yaml_for_namespaced_and_cluster_managers() -> None:
    manager = build_manager()
    docs = list(yaml.safe_load_all(render(manager)))
    assert [(d["kind"], d["metadata"]) for d in docs] == [
        ("Role", {"name": "widgets", "namespace": "default"}),
        ("RoleBinding", {"name": "widgets", "namespace": "default"}),
        ("Role", {"name": "widgets-leader-election", "namespace": "ops"}),
        ("RoleBinding", {"name": "widgets-leader-election", "namespace": "ops"}),
        # secure metrics (the default): the operator reviews scrapes, a scraper reads
        ("ClusterRoleBinding", {"name": "widgets-auth-delegator"}),
        ("ClusterRole", {"name": "widgets-metrics-reader"}),
    ]
    delegator, reader = docs[4:]
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert delegator["subjects"] == [
        {"kind": "ServiceAccount", "name": "widgets", "namespace": "default"}
    ]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    assert [d["kind"] for d in yaml.safe_load_all(render(manager, metrics_secure=False))] == [
        "Role",
        "RoleBinding",
        "Role",
        "RoleBinding",
    ]
    rules = {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in docs[0]["rules"]}
    assert ("coordination.k8s.io", "leases") not in rules
    assert rules[("example.com", "widgets/finalizers")] == ["update"]
    assert rules[("events.k8s.io", "events")] == ["create", "patch"]
    assert rules[("", "secrets")] == ["list", "watch"]
    assert rules[("", "configmaps")] == ["create", "get", "list", "patch", "watch"]
    assert docs[2]["rules"] == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["create", "get", "update"],
        }
    ]
    for role, binding in (docs[0:2], docs[2:4]):
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": role["metadata"]["name"],
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "widgets", "namespace": "default"}
        ]
    cluster = Manager(name="ns-watcher")

    async def noop(obj: Any, ctx: Context) -> None:
        return None

    cluster.add(Controller("Namespace"), noop)
    role, binding, _, _ = yaml.safe_load_all(
        render(cluster, service_account="sa", service_account_namespace="ops")
    )
    assert role["kind"] == "ClusterRole"
    assert {r["resources"][0] for r in role["rules"]} == {
        "namespaces",
        "namespaces/status",
        "events",
    }
    assert (binding["kind"], binding["metadata"]) == ("ClusterRoleBinding", {"name": "ns-watcher"})
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "sa", "namespace": "ops"}]
    # a namespaced manager of a cluster-scoped kind: the ClusterRole stays, and says why
    cluster.namespace = "team-a"
    text = render(cluster, metrics_secure=False)
    assert [d["kind"] for d in yaml.safe_load_all(text)] == [
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    assert "# Cluster-scoped kinds (namespaces, namespaces/status): a Role cannot" in text


async def first_line(
    stream: asyncio.StreamReader, wanted: Callable[[str], bool], timeout: float = 30
) -> str:
    """The first line of ``stream`` for which ``wanted`` holds; fails at the end of the stream
    or after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while True:
            line = (await stream.readline()).decode()
            assert line, "run exited early"
            if wanted(line):
                return line


async def test_cli_rbac_and_run_embedded(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        "rbac",
        "examples/mirror.py:manager",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0
    assert [d["kind"] for d in yaml.safe_load_all(out)] == [
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterRoleBinding",  # secure metrics: system:auth-delegator
        "ClusterRole",  # and mirror-metrics-reader
    ]

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        "run",
        "examples/mirror.py:manager",
        "--embedded",
        "--log-format",
        "json",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = await first_line(proc.stdout, lambda line: line.startswith("kubeconfig: "))
    kubeconfig = line.split(": ", 1)[1].strip()
    try:
        api = await kr8s.asyncio.api(kubeconfig=kubeconfig)
        await call(
            api,
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {
                "metadata": {"name": "m", "annotations": {"example.com/mirror": "true"}},
                "data": {"k": "v"},
            },
        )
        record = yaml.safe_load(await first_line(proc.stderr, lambda line: "mirrored m" in line))
        assert record["controller"] == "configmap" and record["attempt"] == 1
        assert record["key"] == "ConfigMap default/m"
        status, secret = await call(api, "GET", "/api/v1/namespaces/default/secrets/m")
        assert status == 200 and secret["metadata"]["ownerReferences"][0]["name"] == "m"
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 30) == 0


@pytest.mark.parametrize("target", ["examples/nothing.py", "examples/mirror.py:missing"])
async def test_bad_targets_are_named(target: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        "rbac",
        target,
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode != 0 and target in err.decode()


SLOW_START = """
import asyncio
import contextlib
import os

from kr8s.asyncio.objects import ConfigMap

from reconcile_kit import Controller, Manager

manager = Manager(namespace="default", health_port=0, host="127.0.0.1")


async def reconcile(obj, ctx):
    return None


manager.add(Controller(ConfigMap), reconcile)


@manager.on_start
async def wait_for_something(api):
    print("in on_start hook", flush=True)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        print("on_start hook cancelled", flush=True)
        raise
"""


async def test_sigterm_during_startup_stops_run_gracefully(tmp_path: Path) -> None:
    """SIGTERM while an on_start hook runs: the hook is cancelled, what was opened is
    closed (no ResourceWarning in development mode) and the exit code is 0."""
    target = tmp_path / "slow_start.py"
    target.write_text(SLOW_START)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-X",
        "dev",
        "-W",
        "error::ResourceWarning",
        "-m",
        "reconcile_kit",
        "run",
        str(target),
        "--embedded",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        lines = []
        while "in on_start hook\n" not in lines:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
            assert line, f"run exited early: {lines}"
            lines.append(line)
        proc.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert "on_start hook cancelled" in out.decode()
    stderr = err.decode()
    assert "SIGTERM received; stopping gracefully" in stderr
    assert "stopped while starting" in stderr
    for leak in ("Unclosed", "unclosed", "ResourceWarning", "Traceback"):
        assert leak not in stderr, stderr


REPORTING_TARGET = """
from reconcile_kit import Manager
from reconcile_kit.client.ratelimit import rate_limit_of

manager = Manager(name="flags", qps={qps}, burst={burst})


@manager.on_start
async def report(api):
    bucket = rate_limit_of(api)
    limit = None if bucket is None else (bucket.qps, bucket.burst)
    print("manager", manager.qps, manager.burst, "bucket", limit, flush=True)
    manager.stop()
"""


async def run_reporting(tmp_path: Path, code: dict[str, Any], *flags: str) -> tuple[int, str, str]:
    """``reconcile-kit run`` a manager that prints its client rate limit and stops."""
    target = tmp_path / "flags.py"
    target.write_text(REPORTING_TARGET.format(**code))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        "run",
        f"{target}:manager",
        "--embedded",
        *flags,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_cli_qps_and_burst_reach_the_manager_and_its_api(tmp_path: Path) -> None:
    code, out, err = await run_reporting(
        tmp_path, {"qps": None, "burst": None}, "--qps", "7.5", "--burst", "3"
    )
    assert code == 0, err
    assert "manager 7.5 3 bucket (7.5, 3)" in out
    # without flags the manager's own settings stand: here none, so no limit
    code, out, err = await run_reporting(tmp_path, {"qps": 40, "burst": None})
    assert code == 0, err
    assert "manager 40.0 None bucket (40.0, 10)" in out  # client-go's default burst
    code, out, err = await run_reporting(tmp_path, {"qps": None, "burst": None}, "--burst", "3")
    assert code == 2 and "--burst needs --qps" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--qps", "0"], "--qps"),
        (["--qps", "fast"], "--qps"),
        (["--burst", "0"], "--burst"),
        (["--burst", "2.5"], "--burst"),
    ],
)
def test_cli_refuses_bad_qps_and_burst(flags: list[str], message: str) -> None:
    """Checked while parsing, before the command runs (and configures logging)."""
    result = CliRunner().invoke(main, ["run", "examples/mirror.py:manager", *flags])
    assert result.exit_code == 2
    assert message in result.output


async def test_cli_rbac_namespace_and_leader_elect(apiserver: APIServer) -> None:
    """`rbac --namespace --leader-elect` prints what `run` with the same flags needs: a Role
    and RoleBinding in that namespace and the Lease's; the server accepts every document."""

    def invoke(*args: str) -> Any:  # in a thread: the command runs its own event loop
        return asyncio.to_thread(CliRunner().invoke, main, list(args))

    plain = await invoke("rbac", "examples/mirror.py:manager")
    assert plain.exit_code == 0, plain.output
    cluster_role, _, delegator, reader = yaml.safe_load_all(plain.output)
    assert delegator["metadata"]["name"] == "mirror-auth-delegator"
    assert reader["metadata"]["name"] == "mirror-metrics-reader"
    insecure = await invoke("rbac", "examples/mirror.py:manager", "--metrics-secure=false")
    assert insecure.exit_code == 0, insecure.output
    assert [d["kind"] for d in yaml.safe_load_all(insecure.output)] == [
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    assert cluster_role["kind"] == "ClusterRole"
    assert "leases" not in {r["resources"][0] for r in cluster_role["rules"]}
    assert {"apiGroups": [""], "resources": ["configmaps/finalizers"], "verbs": ["update"]} in (
        cluster_role["rules"]
    )
    args = ["rbac", "examples/mirror.py:manager", "--namespace", "ops", "--leader-elect"]
    args.append("--metrics-secure=false")
    result = await invoke(*args, "--service-account", "op")
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.output))
    assert [(d["kind"], d["metadata"]) for d in docs] == [
        ("Role", {"name": "mirror", "namespace": "ops"}),
        ("RoleBinding", {"name": "mirror", "namespace": "ops"}),
        ("Role", {"name": "mirror-leader-election", "namespace": "ops"}),
        ("RoleBinding", {"name": "mirror-leader-election", "namespace": "ops"}),
    ]
    assert {d["subjects"][0]["name"] for d in docs[1::2]} == {"op"}
    # run --leader-elect's Lease is mirror-leader in ops: exactly what the second Role allows
    assert allows(docs, "coordination.k8s.io", "leases", "update", "ops")
    assert not allows(docs, "coordination.k8s.io", "leases", "update", "default")
    async with aiohttp.ClientSession() as session:
        outside = Outside(apiserver, session)
        await outside("POST", "/api/v1/namespaces", {"metadata": {"name": "ops"}})
        base = "/apis/rbac.authorization.k8s.io/v1/namespaces/ops"
        for doc in docs:
            plural = doc["kind"].lower() + "s"
            async with session.post(apiserver.url + f"{base}/{plural}", json=doc) as response:
                assert response.status == 201, await response.text()
        async with session.get(apiserver.url + f"{base}/roles/mirror") as response:
            assert (await response.json())["rules"] == docs[0]["rules"]
        # and it would refuse a broken one: the server validates what it was given
        broken = {**docs[1], "metadata": {"name": "broken"}, "roleRef": {"kind": "Pod"}}
        async with session.post(apiserver.url + f"{base}/rolebindings", json=broken) as response:
            body = await response.json()
            assert response.status == 422
            # rbac/v1 defaults an empty roleRef.apiGroup (kube-apiserver's SetDefaults, see
            # tests/conformance/test_fuzz_findings.py): only the kind and the name are refused
            assert {c["field"] for c in body["details"]["causes"]} == {
                "roleRef.kind",
                "roleRef.name",
            }


def test_apiserver_webhook_service_option() -> None:
    from reconcile_kit.cli.commands import _webhook_services

    assert _webhook_services(("system/hooks=127.0.0.1:9443",)) == {
        ("system", "hooks"): "127.0.0.1:9443"
    }
    result = CliRunner().invoke(main, ["apiserver", "--webhook-service", "hooks=127.0.0.1:9443"])
    assert result.exit_code == 2
    assert "expected NAMESPACE/NAME=HOST:PORT" in result.output


async def test_rbac_covers_a_sharded_run(apiserver: APIServer) -> None:
    """`rbac --shard` grants what a sharded replica does: its membership and the sharder's
    Leases, the ring watch, and the shard labels written on the primary kind."""
    from reconcile_kit import Sharding

    async def reconcile(obj: Any, ctx: Context) -> None:
        return None

    manager = Manager(
        namespace="default",
        name="mirror",
        sharding=Sharding(
            "mirror",
            namespace="ops",
            identity="r1",
            lease_duration=2,
            renew_deadline=1,
            retry_period=0.2,
        ),
        handle_signals=False,
    )
    controller = manager.add(Controller(ConfigMap), reconcile)
    async with aiohttp.ClientSession() as session:
        outside = Outside(apiserver, session)
        await outside("POST", "/api/v1/namespaces", {"metadata": {"name": "ops"}})
        await outside("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
        manager.api = await apiserver.api()
        task = asyncio.create_task(manager.run())
        await eventually(
            lambda: len(controller.reflector.store) == 1 if controller.reflector else False,
            10,
            interval=0.05,
        )
        manager.stop()
        await asyncio.wait_for(task, 10)
    requests = {
        (r.group, r.resource + (f"/{r.subresource}" if r.subresource else ""), r.verb, r.namespace)
        for r in apiserver.requests
        if r.verb and r.user_agent.startswith("kr8s")
    }
    assert ("", "configmaps", "patch", "default") in requests  # the shard label
    assert {v for g, _, v, ns in requests if g == "coordination.k8s.io"} >= {"watch", "create"}
    docs = [doc for _, doc in manifests(manager)]
    assert [r for r in requests if not allows(docs, *r)] == []
    assert ("Role", "mirror-sharding") in {(d["kind"], d["metadata"]["name"]) for d in docs}

    result = await asyncio.to_thread(
        CliRunner().invoke, main, ["rbac", "examples/mirror.py:manager", "--shard"]
    )
    assert result.exit_code == 0, result.output
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(result.output)]
    assert "mirror-sharding" in names


def test_run_shard_options() -> None:
    from reconcile_kit.cli.commands import _RunOptions

    manager = Manager(name="ops-operator", namespace="ops")
    _RunOptions(shard=True, shard_identity="pod-1").configure(manager)
    assert manager.sharding is not None
    assert (manager.sharding.ring, manager.sharding.namespace) == ("ops-operator", "ops")
    assert manager.sharding.identity == "pod-1"
    result = CliRunner().invoke(main, ["run", "examples/mirror.py:manager", "--shard-ring", "x"])
    assert result.exit_code == 2
    assert "--shard-ring/--shard-identity need --shard" in result.output
    result = CliRunner().invoke(
        main, ["run", "examples/mirror.py:manager", "--shard", "--shard-identity", "Not_Valid"]
    )
    assert result.exit_code == 2
    assert "invalid ring member identity" in result.output


@contextlib.asynccontextmanager
async def apiserver_process(kubeconfig: Path, *options: str) -> AsyncIterator[str]:
    """``reconcile-kit apiserver --kubeconfig KUBECONFIG OPTIONS...`` in a subprocess,
    yielding the URL of its "listening on" line; stopped with SIGTERM."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "reconcile_kit",
        "apiserver",
        "--kubeconfig",
        str(kubeconfig),
        *options,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert "listening on " in line, line
        yield line.split("listening on ", 1)[1].strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)


async def test_apiserver_fail_option_fails_that_share_of_requests(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    async with apiserver_process(kubeconfig, "--fail", "503:1.0"):
        api = await kr8s.asyncio.api(kubeconfig=str(kubeconfig))
        status, _ = await call(api, "GET", "/api/v1/namespaces/default/configmaps")
        assert status == 503
    result = CliRunner().invoke(main, ["apiserver", "--fail", "200:0.5"])
    assert result.exit_code == 2 and "STATUS one of" in result.output


async def test_apiserver_with_a_token_works_with_kubectl(tmp_path: Path) -> None:
    """``apiserver --token`` serves HTTPS (its CA in the kubeconfig): kubectl, as
    client-go, sends no bearer token over plain HTTP ("You must be logged in to the
    server" before), and a request without the token is refused."""
    kubeconfig = tmp_path / "kubeconfig"
    async with apiserver_process(kubeconfig, "--token", "s3cret") as url:
        assert url.startswith("https://")
        kubectl = await asyncio.create_subprocess_exec(
            "kubectl",
            "--kubeconfig",
            str(kubeconfig),
            "--cache-dir",
            str(tmp_path / "cache"),
            "get",
            "namespaces",
            "-o",
            "name",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(kubectl.communicate(), 60)
        assert kubectl.returncode == 0, err.decode()
        assert "namespace/default" in out.decode().split()
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{url}/api/v1/namespaces", ssl=False) as response,
        ):
            assert response.status == 401


def test_run_metrics_flags_configure_the_manager(tmp_path: Path) -> None:
    """``run --metrics-secure=false`` serves plain HTTP, ``--metrics-cert-dir`` names the
    certificate files, and secure metrics refuse the probes' port."""
    from reconcile_kit.cli.commands import _RunOptions
    from reconcile_kit.webhooks import CertificateFiles, SelfSignedCertificates

    SelfSignedCertificates(["127.0.0.1"], directory=tmp_path)  # tls.crt, tls.key, ca.crt
    manager = Manager(name="m")
    assert manager.metrics_secure  # the default
    _RunOptions(metrics_port=8443, metrics_cert_dir=str(tmp_path)).configure(manager)
    assert manager.metrics_port == 8443
    assert isinstance(manager.metrics_certificates, CertificateFiles)
    assert manager.metrics_certificates.directory == tmp_path
    _RunOptions(metrics_secure=False, metrics_port=8081, health_port=8081).configure(manager)
    assert not manager.metrics_secure
    with pytest.raises(click.UsageError, match="--metrics-cert-dir needs secure metrics"):
        _RunOptions(metrics_cert_dir=str(tmp_path)).configure(manager)
    with pytest.raises(click.UsageError, match="a port other than --health-port"):
        _RunOptions(metrics_secure=True, metrics_port=8081, health_port=8081).configure(
            Manager(name="n")
        )


async def test_run_against_a_server_that_cannot_be_reached(tmp_path: Path) -> None:
    """A kubeconfig (given, or found through KUBECONFIG) naming a server nobody serves:
    one line naming the server, exit code 1 (a 110-line httpx traceback before)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "dead", "cluster": {"server": "http://127.0.0.1:1"}}],
                "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": "u"}}],
                "current-context": "dead",
                "users": [{"name": "u", "user": {"token": "x"}}],
            }
        )
    )
    for args, env in (
        (["--kubeconfig", str(kubeconfig)], {}),
        ([], {"KUBECONFIG": str(kubeconfig)}),
    ):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "reconcile_kit",
            "run",
            "examples/mirror.py:manager",
            *args,
            cwd=ROOT,
            env={**os.environ, **env},
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        lines = err.decode().strip().splitlines()
        assert proc.returncode == 1
        assert lines[-1].startswith("Error: ") and "cannot reach http://127.0.0.1:1" in lines[-1]
        assert "Traceback" not in err.decode()


async def test_apiserver_rbac_mode_refuses_a_made_up_token(tmp_path: Path) -> None:
    """``apiserver --rbac``: its kubeconfig (a generated admin token, HTTPS) works, a
    made-up bearer token is 401 and a TokenReview of it is not authenticated, as on
    kube-apiserver (without --rbac every request is allowed: docs/security.md's 401 needs
    this mode)."""
    kubeconfig = tmp_path / "kubeconfig"
    async with apiserver_process(kubeconfig, "--rbac") as url:
        assert url.startswith("https://")
        api = await kr8s.asyncio.api(kubeconfig=str(kubeconfig))
        status, _ = await call(api, "GET", "/api/v1/namespaces")
        assert status == 200
        review = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": "made-up"},
        }
        reviews = "/apis/authentication.k8s.io/v1/tokenreviews"
        status, body = await call(api, "POST", reviews, review)
        assert status == 201 and not body["status"].get("authenticated"), body
        headers = {"Authorization": "Bearer made-up"}
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{url}/api/v1/namespaces", ssl=False, headers=headers) as response,
        ):
            assert response.status == 401
