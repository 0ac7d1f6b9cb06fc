"""Where a reconcile's CPU goes beyond the raw loop's: Python bytecodes per function.

benchmarks/instructions.py counts the instructions of the converge workload and of the raw
aiohttp loop (issue 31); this script says which Python code makes the difference. It runs
the same four children (converge, raw, and each one's run that only imports and reads its
kubeconfig) under a tracer counting every bytecode executed and every call per function
(``sys.settrace`` with ``f_trace_opcodes``), subtracts each baseline and prints, per
reconcile: bytecodes by package or reconcile_kit module (ours, the raw loop's, the
difference) and the functions that differ most, with their calls. A call of a coroutine
counts once per resumption. Bytecodes are exact and do not depend on the machine's load;
what a bytecode costs does (an opcode runs ~30 instructions in CPython 3.11's eval loop,
plus the C work it calls: orjson, dict operations), so use this to find code to cut and
instructions.py to measure the cut. The tracer slows the client ~10x, so a write's answer
and its watch event arrive in another order than in a normal run.

    python benchmarks/bytecodes.py [--objects 1000] [--pythonpath DIR] [--top 40]

Needs scripts/build-control-plane's kube-apiserver; ~1 minute.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import collections
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
MODES = ("converge", "converge-imports", "raw", "raw-imports")
Counts = collections.Counter[tuple[str, int, str]]


def child(mode: str, kubeconfig: str, objects: int, output: str) -> None:
    """Run instructions.py's ``mode`` child under the counting tracer; write its counts
    (``[[file, line, function], bytecodes, calls]`` rows) to ``output`` at exit."""
    sys.path.insert(0, str(HERE))
    import instructions

    codes: Counts = collections.Counter()
    calls: Counts = collections.Counter()

    def tracer(frame: FrameType, event: str, arg: object) -> Callable[..., Any]:
        frame.f_trace_opcodes = True
        code = frame.f_code
        key = (code.co_filename, code.co_firstlineno, code.co_name)
        calls[key] += 1

        def local(frame: FrameType, event: str, arg: object) -> Callable[..., Any]:
            if event == "opcode":
                codes[key] += 1
            return local

        return local

    def dump() -> None:
        sys.settrace(None)
        rows = [[list(key), count, calls[key]] for key, count in codes.items()]
        Path(output).write_text(json.dumps(rows))

    atexit.register(dump)
    sys.settrace(tracer)
    instructions.child(mode, kubeconfig, objects)


def where(filename: str) -> str:
    """A function's file as reported: ``reconcile_kit/<package>/<module>.py`` for the
    toolkit, else the first part of its path under site-packages or the stdlib."""
    if "reconcile_kit/" in filename:
        return "reconcile_kit/" + filename.rsplit("reconcile_kit/", 1)[1]
    for marker in ("site-packages/", "/python3.11/", "/lib/python3"):
        if marker in filename:
            return filename.rsplit(marker, 1)[1].split("/")[0]
    return filename


def load(path: Path) -> tuple[Counts, Counts]:
    codes: Counts = collections.Counter()
    calls: Counts = collections.Counter()
    for (filename, line, name), count, called in json.loads(path.read_text()):
        key = (filename, line, name)
        codes[key] += count
        calls[key] += called
    return codes, calls


def per_reconcile(found: dict[str, tuple[Counts, Counts]], mode: str, objects: int) -> Any:
    """``mode``'s bytecodes and calls minus its imports baseline's, per object."""
    codes, calls = found[mode]
    base_codes, base_calls = found[f"{mode}-imports"]
    return (
        {k: (v - base_codes[k]) / objects for k, v in codes.items()},
        {k: (v - base_calls[k]) / objects for k, v in calls.items()},
    )


def report(found: dict[str, tuple[Counts, Counts]], objects: int, top: int) -> None:
    ours, our_calls = per_reconcile(found, "converge", objects)
    raw, _ = per_reconcile(found, "raw", objects)
    print(f"bytecodes per reconcile: reconcile_kit {sum(ours.values()):,.0f}", end="")
    print(f", raw aiohttp loop {sum(raw.values()):,.0f}")
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for side, counts in enumerate((ours, raw)):
        for key, count in counts.items():
            modules[where(key[0])][side] += count
    print(f"\n{'ours':>8} {'raw':>8} {'diff':>8}  where")
    for name, (mine, theirs) in sorted(modules.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        if abs(mine - theirs) >= 1:
            print(f"{mine:8.0f} {theirs:8.0f} {mine - theirs:8.0f}  {name}")
    print(f"\n{'ours':>8} {'raw':>8} {'calls':>8}  the functions differing most")
    keys = sorted(set(ours) | set(raw), key=lambda k: raw.get(k, 0) - ours.get(k, 0))
    for key in keys[:top]:
        mine, theirs = ours.get(key, 0.0), raw.get(key, 0.0)
        calls = our_calls.get(key, 0.0)
        print(f"{mine:8.0f} {theirs:8.0f} {calls:8.1f}  {where(key[0])}:{key[1]} {key[2]}")


async def measure(objects: int, pythonpath: str | None, top: int) -> None:
    sys.path.insert(0, str(HERE))
    from instructions import reset
    from targets import Connection, populate

    from reconcile_kit.testing import ControlPlane

    env = dict(os.environ, PYTHONPATH=pythonpath or str(HERE.parent))
    found: dict[str, tuple[Counts, Counts]] = {}
    async with ControlPlane() as plane:
        kubeconfig = str(plane.kubeconfig)
        await populate(Connection.from_kubeconfig(kubeconfig), objects)
        with tempfile.TemporaryDirectory() as tmp:
            for mode in MODES:
                if mode in ("converge", "raw"):
                    await reset(kubeconfig, objects)
                output = Path(tmp) / f"{mode}.json"
                command = [sys.executable, __file__, "--child", mode, "--kubeconfig", kubeconfig]
                command += ["--objects", str(objects), "--output", str(output)]
                done = await asyncio.to_thread(
                    subprocess.run, command, env=env, cwd=tmp, capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise RuntimeError(f"{mode} failed:\n{done.stderr[-2000:]}")
                found[mode] = load(output)
    report(found, objects, top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--pythonpath", help="measure the reconcile_kit of this directory")
    parser.add_argument("--top", type=int, default=40, help="functions to list")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.kubeconfig, args.objects, args.output)
        return
    asyncio.run(measure(args.objects, args.pythonpath, args.top))


if __name__ == "__main__":
    main()
