#!/usr/bin/env python3
"""Builds the Dockerfile's build stage without a Docker engine, from exactly its build context.

What `docker build .` would do, step by step, for the stage the runtime image copies from:
  - the build context is the repository less what .dockerignore excludes (moby's rules: the last
    matching pattern wins, `!` re-includes, a pattern matching a directory covers what is in it,
    `*` stays within one path element, `**` crosses any number);
  - WORKDIR is a scratch folder; each COPY copies from that context only (a source the context
    lacks fails as Docker's "not found" does); each RUN runs with `sh -c` in the scratch folder,
    offline (CARGO_NET_OFFLINE), with `target/` linked to the cargo build cache so a second run
    reuses it;
  - every COPY of the other stages that reads the context is checked against it, and every
    `COPY --from=<stage>` path must exist once the stage has run.
Layers are cached as Docker caches them: a step whose instruction, copied files and every step
before it are unchanged since the last successful run is not run again (the cache key chain is
kept beside the cargo build cache, and only the last run's chain is kept). As a Docker layer
does, a cached RUN brings back what it wrote to the working folder (the stand-ins of the
dependency layer, say): each RUN's folder, less `target/`, is kept as a tar archive under its
key, and a key without its archive is run again.

Usage: check.py REPO SCRATCH CARGO_TARGET_DIR   (exit 0: the build stage built and ran)
"""

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile


def fail(msg):
    print("docker-context: " + msg, file=sys.stderr)
    sys.exit(1)


def instructions(path):
    """The Dockerfile's instructions as (keyword, argument text), continuation lines joined."""
    out, cur = [], ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if cur and line.lstrip().startswith("#"):
                continue  # a comment inside a continued instruction is dropped, as Docker does
            if line.endswith("\\"):
                cur += line[:-1] + " "
                continue
            cur += line
            kw, _, rest = cur.strip().partition(" ")
            out.append((kw.upper(), rest.strip()))
            cur = ""
    if cur:
        kw, _, rest = cur.strip().partition(" ")
        out.append((kw.upper(), rest.strip()))
    return out


def pattern_regex(pattern):
    """A .dockerignore pattern as a regex over slash-separated relative paths."""
    i, out = 0, ""
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):
                i += 1
                out += "(?:.*/)?"
            else:
                out += ".*"
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = pattern.find("]", i)
            if j < 0:
                out += re.escape(c)
            else:
                out += pattern[i : j + 1]
                i = j
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out += re.escape(pattern[i])
        else:
            out += re.escape(c)
        i += 1
    return re.compile("^" + out + "$")


def ignore_rules(repo):
    rules = []
    path = os.path.join(repo, ".dockerignore")
    if not os.path.exists(path):
        return rules
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:].strip()
            line = os.path.normpath(line).lstrip("/")
            rules.append((negate, pattern_regex(line)))
    return rules


def excluded(rel, rules):
    """moby's patternmatcher.MatchesOrParentMatches: the last rule matching the path or one of
    its parents decides."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    result = False
    for negate, rx in rules:
        if any(rx.match(p) for p in prefixes):
            result = not negate
    return result


def context_files(repo):
    rules = ignore_rules(repo)
    files = set()
    for root, dirs, names in os.walk(repo):
        rel_root = os.path.relpath(root, repo)
        if rel_root == ".":
            rel_root = ""
        dirs[:] = [d for d in dirs if not (rel_root == "" and d == ".git")]
        for n in names:
            rel = (rel_root + "/" + n).lstrip("/")
            if not excluded(rel, rules):
                files.add(rel)
    return files


def copy_args(text):
    words = shlex.split(text)
    flags = [w for w in words if w.startswith("--")]
    rest = [w for w in words if not w.startswith("--")]
    if len(rest) < 2:
        fail("COPY needs a source and a destination: COPY " + text)
    src_from = None
    for fl in flags:
        if fl.startswith("--from="):
            src_from = fl[len("--from=") :]
    return src_from, rest[:-1], rest[-1]


def sources_in_context(srcs, files):
    """The context files each COPY source names (a file, or a directory's files)."""
    picked = []
    for s in srcs:
        s = os.path.normpath(s).lstrip("/")
        if s == ".":
            picked.append((s, sorted(files)))
            continue
        if s in files:
            picked.append((s, [s]))
            continue
        under = sorted(f for f in files if f.startswith(s + "/"))
        if not under:
            fail(f'COPY {s}: "/{s}": not found in the build context (.dockerignore or a missing path)')
        picked.append((s, under))
    return picked


def save_layer(scratch, path):
    """The working folder after a RUN, less the build cache (`target/`), as a tar archive."""
    with tarfile.open(path, "w") as tar:
        for name in sorted(os.listdir(scratch)):
            if name != "target":
                tar.add(os.path.join(scratch, name), arcname=name)


def restore_layer(scratch, path):
    """A cached RUN's working folder back in place (its files and their modification times)."""
    for name in os.listdir(scratch):
        if name != "target":
            full = os.path.join(scratch, name)
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.remove(full)
    with tarfile.open(path) as tar:
        tar.extractall(scratch, filter="tar")


def main():
    repo, scratch, target = (os.path.abspath(a) for a in sys.argv[1:4])
    steps = instructions(os.path.join(repo, "Dockerfile"))
    files = context_files(repo)
    # The context is read once, before the first step, as Docker sends it: a file changed while
    # the build runs does not reach a later COPY.
    snapshot = scratch + ".context"
    shutil.rmtree(snapshot, ignore_errors=True)
    for f in files:
        os.makedirs(os.path.dirname(os.path.join(snapshot, f)), exist_ok=True)
        shutil.copy2(os.path.join(repo, f), os.path.join(snapshot, f))
    repo = snapshot

    stages, cur = {}, None
    for kw, arg in steps:
        if kw == "FROM":
            words = arg.split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(stages))
            cur = stages.setdefault(name, [])
            continue
        if cur is not None:
            cur.append((kw, arg))

    # The stage the last stage copies from is the build; every stage's context COPYs are checked.
    froms = {}
    for name, body in stages.items():
        for kw, arg in body:
            if kw == "COPY":
                src_from, srcs, _ = copy_args(arg)
                if src_from is None:
                    sources_in_context(srcs, files)
                else:
                    froms.setdefault(src_from, []).extend(srcs)
    if not froms:
        fail("no stage copies from a build stage (COPY --from=...)")

    layers = os.path.join(target, "docker-context-layers")
    os.makedirs(layers, exist_ok=True)
    # This run's archives, moved into `layers` once the stage has built.
    pending = os.path.join(target, "docker-context-pending")
    shutil.rmtree(pending, ignore_errors=True)
    os.makedirs(pending)
    last_chain = set(os.listdir(layers))
    for build, wanted in froms.items():
        if build not in stages:
            fail(f"COPY --from={build}: no such stage")
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(scratch)
        # target/ is the cargo build cache, where the cached layers' outputs stay.
        os.symlink(target, os.path.join(scratch, "target"))
        workdir = None
        key = hashlib.sha256(b"docker-context").hexdigest()
        chain, cached = [], True
        for kw, arg in stages[build]:
            h = hashlib.sha256((key + kw + " " + arg).encode())
            if kw == "WORKDIR":
                workdir = arg
            elif kw == "COPY":
                src_from, srcs, dest = copy_args(arg)
                if src_from is not None:
                    fail("COPY --from inside the build stage is not supported by this check")
                base = scratch  # WORKDIR is the scratch root
                dest_rel = dest if not dest.startswith("/") else os.path.relpath(dest, workdir or "/")
                picked = sources_in_context(srcs, files)
                for s, under in picked:
                    for f in under:
                        if len(srcs) == 1 and s in files and not dest.endswith("/"):
                            out = os.path.join(base, dest_rel)
                        elif s in files:
                            out = os.path.join(base, dest_rel, os.path.basename(f))
                        else:
                            out = os.path.join(base, dest_rel, os.path.relpath(f, s) if s != "." else f)
                        os.makedirs(os.path.dirname(os.path.normpath(out)), exist_ok=True)
                        shutil.copy2(os.path.join(repo, f), out)  # keeps mtimes, as Docker does
                        with open(os.path.join(repo, f), "rb") as fh:
                            h.update(f.encode() + b"\0" + hashlib.sha256(fh.read()).digest())
            elif kw == "RUN":
                pass
            elif kw in ("ARG", "ENV", "LABEL", "USER", "EXPOSE", "SHELL"):
                if kw in ("USER", "SHELL"):
                    fail(f"{kw} in the build stage is not supported by this check")
            else:
                fail(f"{kw} in the build stage is not supported by this check")
            key = h.hexdigest()
            chain.append(key)
            if kw != "RUN":
                continue
            saved = os.path.join(layers, key)
            if cached and key in last_chain and os.path.getsize(saved) > 0:
                print(f"docker-context: CACHED RUN {arg[:100]}")
                restore_layer(scratch, saved)
                continue
            if cached:
                # The target is about to change: no earlier chain holds any more.
                # (The archives of this chain's steps so far stay: they are what it restored.)
                for old in os.listdir(layers):
                    if old not in chain:
                        os.remove(os.path.join(layers, old))
                cached = False
            env = {k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR",)}
            env["CARGO_NET_OFFLINE"] = "true"
            print(f"docker-context: RUN {arg}", flush=True)
            r = subprocess.run(["sh", "-c", arg], cwd=scratch, env=env)
            if r.returncode != 0:
                fail(f"RUN exited {r.returncode}: {arg}")
            save_layer(scratch, os.path.join(pending, key))
        if workdir is None:
            fail(f"stage {build} has no WORKDIR")
        for w in wanted:
            local = os.path.join(scratch, os.path.relpath(w, workdir))
            if not os.path.exists(local):
                fail(f"COPY --from={build} {w}: not produced by the stage")
            print(f"docker-context: {w} built ({os.path.getsize(local)} bytes)")
            if os.access(local, os.X_OK):
                # The real binary, not an empty stand-in left by a stale layer.
                out = subprocess.run([local, "--version"], capture_output=True, text=True)
                if out.returncode != 0 or not out.stdout.startswith("warrant "):
                    fail(f"{w} --version printed {out.stdout!r} (exit {out.returncode}), not warrant's version")
                print(f"docker-context: {w} --version: {out.stdout.strip()}")
        # Only this run's chain is kept: a step is skipped next time only if the target holds
        # its output now.
        kept = os.path.join(target, "docker-context-kept")
        shutil.rmtree(kept, ignore_errors=True)
        os.makedirs(kept)
        for k in chain:
            # A RUN's archive: this run's, or the cached one it restored; other steps: a marker.
            for src in (os.path.join(pending, k), os.path.join(layers, k)):
                if os.path.exists(src):
                    shutil.move(src, os.path.join(kept, k))
                    break
            else:
                open(os.path.join(kept, k), "w").close()
        shutil.rmtree(layers)
        os.rename(kept, layers)
        shutil.rmtree(pending, ignore_errors=True)
    print("docker-context: the build stage built from the Docker build context")


if __name__ == "__main__":
    main()
