#!/usr/bin/env python3
"""Prints charts/warrant/README.md: the chart's values table, generated from the `# --`
comments of values.yaml (a comment may continue on the following `#` lines). Every key that
has children is a section; every leaf and every documented key gets a row.
Usage: values-table.py VALUES_YAML README_HEAD"""
import json
import sys

import yaml

values_path, head_path = sys.argv[1], sys.argv[2]
lines = open(values_path, encoding="utf-8").read().split("\n")
values = yaml.safe_load("\n".join(lines))

docs, pending, stack = {}, None, []
for line in lines:
    stripped = line.strip()
    if stripped.startswith("# --"):
        pending = stripped[4:].strip()
        continue
    if stripped.startswith("#") and pending is not None:
        pending += " " + stripped[1:].strip()
        continue
    if not stripped or stripped.startswith("-") or ":" not in stripped or stripped.startswith("#"):
        if not stripped.startswith("#"):
            pending = None if not stripped else pending
        continue
    indent = len(line) - len(line.lstrip())
    key = stripped.split(":", 1)[0].strip().strip('"')
    while stack and stack[-1][0] >= indent:
        stack.pop()
    path = ".".join([k for _, k in stack] + [key])
    stack.append((indent, key))
    if pending is not None:
        docs[path] = pending
        pending = None


def lookup(path):
    v = values
    for k in path.split("."):
        v = v[k]
    return v


rows = []
for path, desc in docs.items():
    v = lookup(path)
    default = json.dumps(v) if not isinstance(v, str) else json.dumps(v)
    if isinstance(v, (dict, list)) and len(default) > 60:
        default = "see values.yaml"
    rows.append(f"| `{path}` | `{default}` | {desc} |")

missing = []
def leaves(v, prefix):
    if isinstance(v, dict) and v and not any(p.startswith(prefix) and p != prefix for p in []) :
        for k, sub in v.items():
            p = f"{prefix}.{k}" if prefix else k
            if p in docs:
                continue
            leaves(sub, p)
    elif prefix not in docs:
        missing.append(prefix)
leaves(values, "")
if missing:
    sys.exit("values without a `# --` comment: " + ", ".join(missing))

sys.stdout.write(open(head_path, encoding="utf-8").read())
sys.stdout.write("| key | default | description |\n|---|---|---|\n")
sys.stdout.write("\n".join(rows) + "\n")
