"""Graph encodings for GES: DAGs, PDAGs and CPDAGs as 0/1 adjacency matrices.

``g[i, j] = 1, g[j, i] = 0`` is the directed edge i -> j; ``g[i, j] = g[j, i] = 1`` is the undirected edge i - j.
A CPDAG (completed partially directed acyclic graph) represents a Markov equivalence class: the skeleton, the
v-structures and every edge the Meek rules compel (Chickering, 2002; Meek, 1995).
"""

from __future__ import annotations

import numpy as np


def undirected(g: np.ndarray) -> np.ndarray:
    """Boolean matrix of the undirected edges."""
    g = np.asarray(g) != 0
    return g & g.T


def directed(g: np.ndarray) -> np.ndarray:
    """Boolean matrix of the directed edges (``[i, j]`` true for i -> j)."""
    g = np.asarray(g) != 0
    return g & ~g.T


def skeleton(g: np.ndarray) -> np.ndarray:
    """Boolean symmetric adjacency of the skeleton."""
    g = np.asarray(g) != 0
    return g | g.T


def is_dag(g: np.ndarray) -> bool:
    """True when ``g`` has only directed edges and no directed cycle."""
    g = np.asarray(g) != 0
    if undirected(g).any():
        return False
    remaining = list(range(len(g)))
    while remaining:
        sinks = [v for v in remaining if not g[v, remaining].any()]
        if not sinks:
            return False
        remaining = [v for v in remaining if v not in sinks]
    return True


def dag_to_cpdag(dag: np.ndarray) -> np.ndarray:
    """The CPDAG of a DAG: keep the v-structures directed, undirect the rest, close under Meek rules R1-R3."""
    dag = np.asarray(dag) != 0
    if not is_dag(dag):
        raise ValueError("dag_to_cpdag needs a DAG (directed edges only, no cycle)")
    d = len(dag)
    adj = dag | dag.T
    compelled = np.zeros_like(dag)
    for j in range(d):
        parents = np.flatnonzero(dag[:, j])
        for a in parents:
            for b in parents:
                if a < b and not adj[a, b]:  # a -> j <- b with a, b not adjacent: a v-structure
                    compelled[a, j] = compelled[b, j] = True
    cpdag = adj.astype(int)
    cpdag[compelled.T] = 0  # orient the compelled edges
    return meek_closure(cpdag)


def meek_closure(pdag: np.ndarray) -> np.ndarray:
    """Apply Meek's rules R1-R3 until nothing changes (enough when only v-structures start directed)."""
    g = (np.asarray(pdag) != 0).astype(int)
    d = len(g)
    changed = True
    while changed:
        changed = False
        und, dirs, adj = undirected(g), directed(g), skeleton(g)
        for a in range(d):
            for b in range(d):
                if not und[a, b]:
                    continue
                # R1: c -> a - b with c, b not adjacent  =>  a -> b
                r1 = any(dirs[c, a] and not adj[c, b] for c in range(d) if c != b)
                # R2: a -> c -> b and a - b  =>  a -> b
                r2 = any(dirs[a, c] and dirs[c, b] for c in range(d))
                # R3: a - c -> b, a - e -> b, c and e not adjacent  =>  a -> b
                cs = [c for c in range(d) if und[a, c] and dirs[c, b]]
                r3 = any(not adj[c, e] for c in cs for e in cs if c < e)
                if r1 or r2 or r3:
                    g[b, a] = 0
                    und, dirs = undirected(g), directed(g)
                    changed = True
    return g


def pdag_to_dag(pdag: np.ndarray) -> np.ndarray:
    """A consistent DAG extension of a PDAG (Dor & Tarsi, 1992); ValueError if none exists."""
    g = (np.asarray(pdag) != 0).astype(int)
    dag = directed(g).astype(int)
    remaining = set(range(len(g)))
    while remaining:
        for x in sorted(remaining):
            rest = sorted(remaining - {x})
            if any(g[x, y] and not g[y, x] for y in rest):  # x must be a sink among the remaining nodes
                continue
            nbrs = [y for y in rest if g[x, y] and g[y, x]]
            adjacent = [y for y in rest if g[x, y] or g[y, x]]
            if all(all(g[y, z] or g[z, y] for z in adjacent if z != y) for y in nbrs):
                for y in nbrs:
                    dag[y, x] = 1  # orient every undirected edge into the sink
                remaining.discard(x)
                g[x, :] = 0
                g[:, x] = 0
                break
        else:
            raise ValueError("this PDAG has no consistent DAG extension")
    return dag


def from_causallearn(graph: np.ndarray) -> np.ndarray:
    """Convert causal-learn's encoding (``G[j, i] = 1, G[i, j] = -1`` for i -> j; -1/-1 undirected) to ours."""
    graph = np.asarray(graph)
    out = np.zeros(graph.shape, dtype=int)
    d = len(graph)
    for i in range(d):
        for j in range(d):
            if graph[i, j] == -1 and graph[j, i] == 1:
                out[i, j] = 1
            elif graph[i, j] == -1 and graph[j, i] == -1:
                out[i, j] = out[j, i] = 1
    return out
