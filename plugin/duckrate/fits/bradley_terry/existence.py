"""When does the plain maximum-likelihood Bradley-Terry fit exist?

Zermelo (1929) / Ford (1957): the MLE is finite exactly when the "beat" graph (an edge i -> j when i
scored anything against j; a draw gives edges both ways) is strongly connected. Otherwise some group of
players never lost to anyone outside it (their ratings run off to +inf relative to the rest) or never
beat anyone outside it (-inf). This module finds the strongly connected components (Tarjan, iterative)
and names the groups at the top and the bottom of the component order, so the error can say which
players break the fit and suggest a prior.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import kernel
from duckrate.fits.bradley_terry.pairs import Pairs


@kernel
def _strong_components(n, a, b, wins, losses):
    """Component index of every player (Tarjan's algorithm without recursion) and the number of components."""
    degree = np.zeros(n + 1, dtype=np.int64)
    for p in range(a.shape[0]):
        if wins[p] > 0.0:
            degree[a[p] + 1] += 1
        if losses[p] > 0.0:
            degree[b[p] + 1] += 1
    for i in range(n):
        degree[i + 1] += degree[i]
    targets = np.empty(degree[n], dtype=np.int64)
    fill = degree[:-1].copy()
    for p in range(a.shape[0]):
        if wins[p] > 0.0:
            targets[fill[a[p]]] = b[p]
            fill[a[p]] += 1
        if losses[p] > 0.0:
            targets[fill[b[p]]] = a[p]
            fill[b[p]] += 1
    index = np.full(n, -1, dtype=np.int64)
    low = np.zeros(n, dtype=np.int64)
    on_stack = np.zeros(n, dtype=np.bool_)
    component = np.full(n, -1, dtype=np.int64)
    stack = np.empty(n, dtype=np.int64)
    call_node = np.empty(n, dtype=np.int64)
    call_edge = np.empty(n, dtype=np.int64)
    stack_top = 0
    counter = 0
    n_components = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        depth = 0
        call_node[0] = root
        call_edge[0] = degree[root]
        index[root] = counter
        low[root] = counter
        counter += 1
        stack[stack_top] = root
        stack_top += 1
        on_stack[root] = True
        while depth >= 0:
            v = call_node[depth]
            if call_edge[depth] < degree[v + 1]:
                w = targets[call_edge[depth]]
                call_edge[depth] += 1
                if index[w] < 0:
                    index[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[stack_top] = w
                    stack_top += 1
                    on_stack[w] = True
                    depth += 1
                    call_node[depth] = w
                    call_edge[depth] = degree[w]
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                if low[v] == index[v]:
                    while True:
                        stack_top -= 1
                        w = stack[stack_top]
                        on_stack[w] = False
                        component[w] = n_components
                        if w == v:
                            break
                    n_components += 1
                depth -= 1
                if depth >= 0:
                    parent = call_node[depth]
                    if low[v] < low[parent]:
                        low[parent] = low[v]
    return component, n_components


@dataclass(frozen=True)
class Existence:
    """Result of the check: ``exists``; otherwise the player codes of the groups that never lost to an
    outsider (``unbeaten``), never beat one (``winless``), or never played one (``isolated``)."""

    exists: bool
    n_components: int
    unbeaten: list[np.ndarray]
    winless: list[np.ndarray]
    isolated: list[np.ndarray]


def check_existence(pairs: Pairs) -> Existence:
    """Strong connectivity of the beat graph of ``pairs`` (Zermelo's condition for a finite MLE)."""
    component, count = _strong_components(pairs.n_players, pairs.a, pairs.b, pairs.wins, pairs.losses)
    if count <= 1:
        return Existence(True, int(count), [], [], [])
    beaten_from_outside = np.zeros(count, dtype=np.bool_)  # some outsider scored against the group
    beats_outside = np.zeros(count, dtype=np.bool_)
    ca, cb = component[pairs.a], component[pairs.b]
    cross = ca != cb
    won = cross & (pairs.wins > 0)
    lost = cross & (pairs.losses > 0)
    beats_outside[ca[won]] = True
    beaten_from_outside[cb[won]] = True
    beats_outside[cb[lost]] = True
    beaten_from_outside[ca[lost]] = True
    order = np.argsort(component, kind="stable")
    bounds = np.searchsorted(component[order], np.arange(count + 1))
    members = [order[bounds[c] : bounds[c + 1]] for c in range(count)]
    isolated = [members[c] for c in range(count) if not beaten_from_outside[c] and not beats_outside[c]]
    unbeaten = [members[c] for c in range(count) if not beaten_from_outside[c] and beats_outside[c]]
    winless = [members[c] for c in range(count) if beaten_from_outside[c] and not beats_outside[c]]
    return Existence(False, int(count), unbeaten, winless, isolated)


def _names(groups: list[np.ndarray], name_of, limit: int = 8) -> str:
    groups = sorted(groups, key=lambda g: (len(g), min(name_of(int(i)) for i in g)))
    shown = []
    for group in groups[:limit]:
        names = sorted(name_of(int(i)) for i in group)
        text = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        shown.append(text if len(names) == 1 else f"{{{text}}}")
    more = f" (and {len(groups) - limit} more groups)" if len(groups) > limit else ""
    return "; ".join(shown) + more


def describe(existence: Existence, name_of, where: str) -> str:
    """The error message for a failed check; ``name_of(code)`` gives a player's name."""
    parts = [
        f"{where}: no finite maximum-likelihood Bradley-Terry ratings exist (the players split into "
        f"{existence.n_components} groups that are not linked by wins both ways)"
    ]
    if existence.unbeaten:
        parts.append(
            f"never lost to anyone outside their group (rating would run to +infinity): {_names(existence.unbeaten, name_of)}"
        )
    if existence.winless:
        parts.append(
            f"never beat anyone outside their group (rating would run to -infinity): {_names(existence.winless, name_of)}"
        )
    if existence.isolated:
        parts.append(f"never played anyone outside their group: {_names(existence.isolated, name_of)}")
    parts.append(
        "set prior_sd (e.g. prior_sd := 300, a Gaussian prior in rating points) for a MAP fit, or drop these players"
    )
    return "; ".join(parts)
