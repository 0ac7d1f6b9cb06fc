"""``reconcile-kit demo``'s summary counts what each phase waited for, as its progress bar
does: the objects created for the converge phase, the objects changed or deleted for the
react phase (a newcomer's first run used to report 198 of the 200 it created)."""

from __future__ import annotations

import asyncio

from rich.console import Console

from reconcile_kit.cli.demo import Demo


def summary_rows(text: str) -> dict[str, list[str]]:
    """The summary table's rows by phase: their cells, stripped."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if cells and cells[0] in ("converge", "react"):
            rows[cells[0]] = cells
    return rows


async def test_the_summary_counts_each_phases_objects() -> None:
    console = Console(record=True, width=200, force_terminal=False)
    code = await asyncio.wait_for(Demo(objects=6, console=console).run(), 120)
    text = console.export_text()
    assert code == 0, text
    assert "created 6 ConfigMapGenerators, 1 IPPool and 5 Pods" in text
    rows = summary_rows(text)
    # 6 generators and the pool; then 3 generators changed, 3 deleted and a pod deleted
    assert rows["converge"][1] == "7", text
    assert rows["react"][1] == "7", text
    assert int(rows["converge"][2]) >= 7, text  # every object reconciled at least once
