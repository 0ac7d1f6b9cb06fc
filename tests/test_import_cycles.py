"""No import cycles inside reconcile_kit (issue 30).

The graph is grimp's (import-linter's engine): every ``import`` of a module, at module level
or inside a function, each an edge; a cycle is a strongly connected component of more than
one module (Tarjan). Imports under ``if TYPE_CHECKING:`` (annotations only: nothing is
imported when the program runs) are left out; ``TYPE_CHECKING_CYCLES`` lists the cycles
they still close, so that one more fails this test too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import grimp
import pytest

TYPE_CHECKING_CYCLES: list[list[str]] = []


def cycles(modules: Iterable[str], imports: Callable[[str], Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), each sorted, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(imports(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(imports(target)))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def graph_cycles(*, type_checking: bool) -> list[list[str]]:
    graph = grimp.build_graph(
        "reconcile_kit", exclude_type_checking_imports=not type_checking, cache_dir=None
    )
    return cycles(graph.modules, graph.find_modules_directly_imported_by)


def test_the_cycle_finder_finds_cycles() -> None:
    edges = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": ["e"], "e": ["d"], "f": ["a"]}
    assert cycles(edges, lambda m: edges.get(m, [])) == [["a", "b", "c"], ["d", "e"]]
    assert cycles(edges, lambda m: [t for t in edges[m] if t != "a"]) == [["d", "e"]]


@pytest.fixture(scope="module")
def runtime_cycles() -> list[list[str]]:
    return graph_cycles(type_checking=False)


def test_no_module_of_reconcile_kit_imports_itself_back(runtime_cycles: list[list[str]]) -> None:
    assert runtime_cycles == []


def test_annotations_close_no_other_cycle() -> None:
    assert graph_cycles(type_checking=True) == sorted(TYPE_CHECKING_CYCLES)
