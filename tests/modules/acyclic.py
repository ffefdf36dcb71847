#!/usr/bin/env python3
"""Fails when the crate's module graph has a cycle.

Reads the DOT graph that `cargo modules dependencies --lib --no-fns --no-traits --no-types
--no-externs --no-sysroot --no-owns` prints: one node per module, one "uses" edge from a module to
every module whose items it names (rust-analyzer resolves re-exports to the defining module, and a
`pub use` in a facade is an edge to the module it re-exports), followed by the edges inline.py
prints for paths written inline, which cargo-modules does not see. cargo-modules' own `--acyclic`
cannot be used for this: it keeps methods as nodes even with `--no-fns`, so every type and its own
method make a "cycle". This script finds the strongly connected components of the module graph
and prints each one (with one concrete cycle through it); any component of two or more modules,
or a module that uses itself, is a failure. It then checks the same at the level of the crate's
top-level modules (`config`, `authorizer`, `telemetry`, ...: each with everything inside it as
one node), where a cycle is a layering fault even if no two files import each other.

Usage: acyclic.py GRAPH.dot
"""
import re
import sys
from collections import defaultdict

EDGE = re.compile(r'^\s*"([^"]+)"\s*->\s*"([^"]+)"\s*\[label="uses"')


def read_edges(path):
    graph = defaultdict(set)
    count = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = EDGE.match(line)
            if m:
                src, dst = m.groups()
                graph[src].add(dst)
                graph.setdefault(dst, set())
                count += 1
    return graph, count


def components(graph):
    """Tarjan's algorithm, iterative: the strongly connected components of `graph`."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                out.append(sorted(comp))
    return out


def one_cycle(graph, comp):
    """A shortest cycle through the first module of a component, by breadth-first search."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node]):
            if nxt == start:
                path = [node]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if nxt in members and nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return comp


def top_level(graph):
    """The graph with every module folded into its top-level module (`warrant::a::b` -> `warrant::a`)."""
    fold = lambda m: "::".join(m.split("::")[:2])
    out = defaultdict(set)
    for src, dsts in graph.items():
        out[fold(src)]
        for dst in dsts:
            if fold(dst) != fold(src):
                out[fold(src)].add(fold(dst))
                out[fold(dst)]
    return out


def report(level, graph):
    """Prints the cycles of `graph`; how many there are."""
    bad = [c for c in components(graph) if len(c) > 1 or c[0] in graph[c[0]]]
    edges = sum(len(d) for d in graph.values())
    print(f"{level}: {len(graph)} modules, {edges} uses edges, {len(bad)} cycle(s)")
    for comp in bad:
        print(f"  cycle among {len(comp)} modules: {', '.join(comp)}")
        print("    e.g. " + " -> ".join(one_cycle(graph, comp)))
    return len(bad)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    graph, count = read_edges(sys.argv[1])
    if count == 0:
        print("no 'uses' edges found: is the input cargo-modules' DOT output?", file=sys.stderr)
        return 2
    bad = report("every module", graph) + report("top-level modules", top_level(graph))
    if bad:
        print("import cycles found: no module may import a module that imports it back")
        return 1
    print("no import cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
