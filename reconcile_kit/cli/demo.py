"""``reconcile-kit demo``: the example operators converging N objects on an embedded server.

Starts an embedded API server, installs the examples' CRDs, creates N ConfigMapGenerators
(from examples/samples/configmapgenerators.yaml, renamed) and the sample IPPool with its
pods, runs examples/manager.py's Manager, shows a progress bar while objects converge,
prints a summary, then changes and deletes a few objects and waits for the operator to
catch up. Convergence is read from the embedded server's storage (no extra requests).
"""

from __future__ import annotations

import asyncio
import importlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..client.contenttypes import MERGE_PATCH
from ..testing.apiserver.server import APIServer

__all__ = ["Demo", "Phase", "examples_dir", "load_examples", "run_demo"]

GROUP = "examples.reconcile-kit.io"
GENERATORS = f"{GROUP}/configmapgenerators"
POOLS = f"{GROUP}/ippools"
Obj = dict[str, Any]


def examples_dir() -> Path:
    """Where the example operators are installed (``reconcile_kit.examples``: the repo's
    examples/ folder, shipped in the wheel)."""
    return Path(load_examples().__file__ or "").parent


def load_examples() -> ModuleType:
    """The examples' manager module (``reconcile_kit.examples.manager``)."""
    return importlib.import_module("reconcile_kit.examples.manager")


@dataclass
class Phase:
    """Figures of one convergence phase."""

    name: str
    objects: int = 0  # the objects this phase waited for (its progress bar's total)
    seconds: float = 0.0
    requests: Counter[str] = field(default_factory=Counter)
    reconciles: int = 0
    errors: int = 0


class Demo:
    """One demo run; ``await run()`` returns the process exit code."""

    def __init__(
        self,
        objects: int = 200,
        keep: bool = False,
        timeout: float = 120.0,
        console: Console | None = None,
    ) -> None:
        self.objects = objects
        self.keep = keep
        self.timeout = timeout
        self.console = console or Console()
        self.server = APIServer()
        self.phases: list[Phase] = []

    # --- the expected state, read from the server's storage --------------------------------

    def _store(self) -> Any:
        return self.server.cluster.store

    def _generator_pending(self, gen: Obj) -> str | None:
        meta, status = gen["metadata"], gen.get("status") or {}
        ready = {c["type"]: c for c in status.get("conditions") or []}.get("Ready") or {}
        if ready.get("status") != "True" or status.get("observedGeneration") != meta["generation"]:
            return (
                f"ConfigMapGenerator {meta['name']}: not Ready for generation {meta['generation']}"
            )
        configmap = self._store().get("/configmaps", meta["namespace"], meta["name"])
        content = (gen.get("spec") or {}).get("content") or {}
        if configmap is None or (configmap.get("data") or {}) != content:
            return f"ConfigMap {meta['name']}: does not match its generator"
        return None

    def _pool_pending(self, pool: Obj) -> str | None:
        meta, status = pool["metadata"], pool.get("status") or {}
        pods = {
            p["metadata"]["name"]
            for p in self._store().items("/pods", meta["namespace"])
            if (p["metadata"].get("annotations") or {}).get(f"{GROUP}/pool") == meta["name"]
        }
        holders = {a.get("pod") for a in (status.get("allocations") or {}).values()}
        if holders != pods:
            return f"IPPool {meta['name']}: allocations {sorted(holders)} != pods {sorted(pods)}"
        return None

    def pending(self) -> list[str]:
        """What has not converged yet (empty when everything has)."""
        store = self._store()
        problems = [p for g in store.items(GENERATORS) if (p := self._generator_pending(g))]
        problems += [p for pool in store.items(POOLS) if (p := self._pool_pending(pool))]
        names = {g["metadata"]["name"] for g in store.items(GENERATORS)}
        owned = [
            c["metadata"]["name"]
            for c in store.items("/configmaps")
            if (c["metadata"].get("labels") or {}).get(f"{GROUP}/generator")
        ]
        problems += [f"ConfigMap {n}: its generator is gone" for n in owned if n not in names]
        return problems

    def converged_count(self) -> int:
        """How many generators and pools are converged in the server's store now."""
        store = self._store()
        done = sum(1 for g in store.items(GENERATORS) if self._generator_pending(g) is None)
        return done + sum(1 for p in store.items(POOLS) if self._pool_pending(p) is None)

    # --- running ---------------------------------------------------------------------------

    async def run(self) -> int:
        """Run the demo: the embedded API server, the example operators in a manager, the
        sample objects; returns the exit status (0: everything converged and checked)."""
        examples = load_examples()
        async with self.server:
            api = await self.server.api()
            manager = examples.build_manager(health_port=None, metrics_port=None)
            manager.api = api
            await examples.install_crds(api)
            total = await self._create_samples(api, examples)
            task = asyncio.create_task(manager.run())
            try:
                ok = await self._phase("converge", total, manager, task)
                ok = ok and await self._changes(api, manager, task)
                self._summary()
                if not ok:
                    self._report_failure()
                    return 1
                self.console.print("[bold green]everything is Ready[/]")
                if self.keep:
                    await self._keep()
                return 0
            finally:
                manager.stop()
                await asyncio.gather(task, return_exceptions=True)

    async def _create_samples(self, api: Any, examples: Any) -> int:
        from ..runtime.resources import resolve_kind

        generators = [d for d in yaml.safe_load_all(examples.SAMPLE_PATHS[0].read_text()) if d]
        others = [d for d in yaml.safe_load_all(examples.SAMPLE_PATHS[1].read_text()) if d]
        docs = []
        for i in range(self.objects):
            doc = yaml.safe_load(yaml.safe_dump(generators[i % len(generators)]))
            doc["metadata"]["name"] = f"{doc['metadata']['name']}-{i:04d}"
            docs.append(doc)
        for doc in docs + others:
            info = await resolve_kind(
                api,
                f"{doc['kind']}.{doc['apiVersion']}" if "/" in doc["apiVersion"] else doc["kind"],
            )
            await info.cls(
                {**doc, "metadata": {"namespace": "default", **doc["metadata"]}}, api=api
            ).create()
        self.console.print(
            f"created {len(docs)} ConfigMapGenerators, "
            f"{sum(d['kind'] == 'IPPool' for d in others)} IPPool and "
            f"{sum(d['kind'] == 'Pod' for d in others)} Pods"
        )
        pools = sum(1 for d in others if d["kind"] == "IPPool")
        return len(docs) + pools

    async def _phase(self, name: str, total: int, manager: Any, task: asyncio.Task[None]) -> bool:
        phase = Phase(name, objects=total)
        self.server.requests.clear()
        before = self._stats(manager)
        started = time.monotonic()
        ok = await self._watch_progress(name, total, task)
        phase.seconds = time.monotonic() - started
        phase.requests = Counter(r.verb or "discovery" for r in self.server.requests)
        after = self._stats(manager)
        phase.reconciles, phase.errors = after[0] - before[0], after[1] - before[1]
        self.phases.append(phase)
        return ok

    @staticmethod
    def _stats(manager: Any) -> tuple[int, int]:
        return (
            sum(c.stats.reconciles for c in manager.controllers),
            sum(c.stats.errors for c in manager.controllers),
        )

    async def _watch_progress(self, name: str, total: int, task: asyncio.Task[None]) -> bool:
        columns = (
            TextColumn(f"[bold]{name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        deadline = time.monotonic() + self.timeout
        with Progress(*columns, console=self.console, transient=False) as progress:
            bar = progress.add_task(name, total=total)
            while True:
                progress.update(bar, completed=min(self.converged_count(), total))
                if not self.pending():
                    progress.update(bar, completed=total)
                    return True
                if task.done() or time.monotonic() > deadline:
                    return False
                await asyncio.sleep(0.1)

    async def _changes(self, api: Any, manager: Any, task: asyncio.Task[None]) -> bool:
        """Change three generators, delete three, delete a pod; wait for the reactions."""
        from ..testing.apiserver.cluster import WriteOptions

        store, cluster = self._store(), self.server.cluster
        names = [g["metadata"]["name"] for g in store.items(GENERATORS)]
        rt = cluster.registry.storage_type(GENERATORS)
        assert rt is not None
        changed, deleted = names[:3], names[3:6]
        for name in changed:
            cluster.patch(
                rt,
                "default",
                name,
                MERGE_PATCH,
                {"spec": {"content": {"changed-by": "demo"}}},
                WriteOptions(),
            )
        for name in deleted:
            cluster.delete(rt, "default", name, {}, WriteOptions())
        pods = [p["metadata"]["name"] for p in store.items("/pods", "default")]
        pod_rt = cluster.registry.storage_type("/pods")
        assert pod_rt is not None
        gone_pods = pods[:1]
        for pod in gone_pods:
            cluster.delete(pod_rt, "default", pod, {}, WriteOptions())
        self.console.print(
            f"changed {', '.join(changed)}; deleted {', '.join(deleted)} "
            f"and pod {', '.join(gone_pods)}"
        )
        return await self._phase("react", len(changed) + len(deleted) + 1, manager, task)

    def _summary(self) -> None:
        table = Table(title="reconcile-kit demo")
        for column in ("phase", "objects", "reconciles", "requests by verb", "errors", "seconds"):
            table.add_column(column)
        for phase in self.phases:
            verbs = ", ".join(f"{v} {n}" for v, n in sorted(phase.requests.items()))
            table.add_row(
                phase.name,
                str(phase.objects),
                str(phase.reconciles),
                verbs,
                str(phase.errors),
                f"{phase.seconds:.2f}",
            )
        self.console.print(table)

    def _report_failure(self) -> None:
        problems = self.pending()
        self.console.print(f"[bold red]{len(problems)} object(s) did not converge:[/]")
        for problem in problems[:20]:
            self.console.print(f"  {problem}")

    async def _keep(self) -> None:
        # commands to copy: never wrapped at the console's width (80 when not a terminal)
        self.console.print(f"kubeconfig: {self.server.kubeconfig}", soft_wrap=True)
        self.console.print(
            f"try: KUBECONFIG={self.server.kubeconfig} kubectl get "
            "configmapgenerators,ippools,configmaps",
            soft_wrap=True,
        )
        self.console.print("press Ctrl-C to stop")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        import signal

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()


def run_demo(objects: int = 200, keep: bool = False, timeout: float = 120.0) -> int:
    """Run the demo; returns the exit code (0: everything converged)."""
    code: int = asyncio.run(Demo(objects, keep, timeout).run())
    return code
