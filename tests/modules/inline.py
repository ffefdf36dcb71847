#!/usr/bin/env python3
"""Prints the "uses" edges that inline paths make, which cargo-modules does not report.

cargo-modules resolves `use` declarations, but a path written where it is used
(`field: Option<super::buffer::BufferSettings>`, `crate::config::model::guard::Level::High`) is
no edge in its graph, so two modules can import each other through one `use` and one inline path
without its graph showing a cycle. This script reads the library's sources (`src/`, from
`lib.rs`; modules compiled only under `#[cfg(test)]` are left out, as `cargo modules --lib`
leaves them out), finds every path that starts with `crate::`, `super::` or `self::` outside a
`use` declaration, a comment or a string, and resolves it to the module that defines the item:
module by module down the path, then through the `use` declarations (re-exports included) of the
module the path stops in. It prints one edge per pair of modules in cargo-modules' DOT syntax,
with where the path was written, for acyclic.py to read together with cargo-modules' graph.

Usage: inline.py [SRC_DIR]   (default: src)
"""
import os
import re
import sys

CRATE = "warrant"
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PATH = re.compile(r"(?<![A-Za-z0-9_:])((?:crate|super|self)(?:::" + IDENT + r")+)")
MOD_DECL = re.compile(r"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(" + IDENT + r")\s*;")


def strip(text):
    """The source with comments, strings and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'(?<![A-Za-z0-9_])b?r#*"', text[i:i + 40]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def item_end(code, i):
    """The end of the item starting at `i`: after its matching `}` or its `;`."""
    depth = 0
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return i


def without_test_items(code):
    """The code with every item under `#[cfg(test)]` blanked."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]", code)
        if not m:
            return code
        end = item_end(code, m.end())
        code = code[:m.start()] + re.sub(r"[^\n]", " ", code[m.start():end]) + code[end:]


def module_files(src):
    """{module path: file} for the library, following `mod name;` declarations from lib.rs and
    leaving out those under `#[cfg(test)]`."""
    files = {}

    def visit(module, path, directory):
        files[module] = path
        code = strip(open(path, encoding="utf-8").read())
        for m in MOD_DECL.finditer(code):
            if "cfg(test)" in m.group(1):
                continue
            name = m.group(2)
            for candidate in (os.path.join(directory, name + ".rs"), os.path.join(directory, name, "mod.rs")):
                if os.path.exists(candidate):
                    visit(module + "::" + name, candidate, os.path.join(directory, name))
                    break

    visit(CRATE, os.path.join(src, "lib.rs"), src)
    return files


def use_trees(code):
    """(start, end, tree) of every `use` declaration."""
    for m in re.finditer(r"(?<![A-Za-z0-9_])(?:pub(?:\([^)]*\))?\s+)?use\s+", code):
        end = code.find(";", m.end())
        yield m.start(), end + 1, re.sub(r"\s+", "", code[m.end():end])


def expand(tree, prefix=()):
    """(name bound, path) for each leaf of a use tree; `*` leaves are skipped."""
    depth, parts, cur = 0, [], ""
    for c in tree:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    for part in filter(None, parts):
        if "{" in part:
            head, _, rest = part.partition("{")
            head = [s for s in head.split("::") if s]
            yield from expand(rest[:-1], prefix + tuple(head))
            continue
        alias = None
        if "as" in part and re.search(r"[A-Za-z0-9_]as[A-Za-z_]", part):
            part, alias = re.split(r"(?<=[A-Za-z0-9_])as(?=[A-Za-z_])", part, maxsplit=1)
        segs = prefix + tuple(s for s in part.split("::") if s)
        if not segs or segs[-1] == "*":
            continue
        if segs[-1] == "self":
            segs = segs[:-1]
        if alias != "_" and segs:
            yield alias or segs[-1], segs


def absolute(module, segs, modules):
    """The path `segs`, written in `module`, from the crate root; None outside the crate."""
    parts = module.split("::")
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        base, rest = [CRATE], segs[1:]
    elif head in ("super", "self"):
        base, rest = parts[:], list(segs)
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    elif "::".join(parts + [head]) in modules:
        base, rest = parts, segs
    else:
        return None
    return base + list(rest)


class Resolver:
    def __init__(self, files):
        self.modules = set(files)
        self.imports = {}
        for module, path in files.items():
            code = without_test_items(strip(open(path, encoding="utf-8").read()))
            names = {}
            for _, _, tree in use_trees(code):
                for name, segs in expand(tree):
                    full = absolute(module, segs, self.modules)
                    if full:
                        names[name] = full
            self.imports[module] = names

    def resolve(self, full, depth=0):
        """The module defining the item at absolute path `full`."""
        cur = full[0]
        for i, seg in enumerate(full[1:], start=1):
            if cur + "::" + seg in self.modules:
                cur = cur + "::" + seg
                continue
            target = self.imports.get(cur, {}).get(seg)
            if target and depth < 16:
                return self.resolve(target + full[i + 1:], depth + 1)
            return cur
        return cur


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    files = module_files(src)
    resolver = Resolver(files)
    edges = {}
    for module, path in sorted(files.items()):
        code = without_test_items(strip(open(path, encoding="utf-8").read()))
        for start, end, _ in use_trees(code):
            code = code[:start] + re.sub(r"[^\n]", " ", code[start:end]) + code[end:]
        for m in PATH.finditer(code):
            full = absolute(module, m.group(1).split("::"), resolver.modules)
            if not full:
                continue
            target = resolver.resolve(full)
            if target in (module, CRATE):
                continue
            line = code.count("\n", 0, m.start()) + 1
            edges.setdefault((module, target), f"{path}:{line}")
    for (src_mod, dst_mod), where in sorted(edges.items()):
        print(f'    "{src_mod}" -> "{dst_mod}" [label="uses"]; // inline path at {where}')
    return 0


if __name__ == "__main__":
    sys.exit(main())
