#!/usr/bin/env python3
"""No import circle inside any crate: each library file's `crate::`,
`super::` and `self::` paths (in `use` trees and inline) are resolved to
the file of the module they name, and the file graph of every crate must
have no strongly connected component of two or more files.

Rules (ARCHITECTURE.md, Invariants): a parent's `mod` and `pub use` of
its own descendants is its facade, not an edge; a name the crate root or
a parent re-exports (`pub use child::Name`) counts as an edge to the file
that defines it; inline test modules (from the first column-0
`#[cfg(test)]`), `tests/`, `examples/`, `benches/` and `src/bin/` are left
out. Prints each circle with the names that tie it; exit 1 when any.

    python3 ops/ci/check-cycles.py [CRATE_DIR...]   (default: every crate)
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def crate_dirs():
    out = []
    for group in ("crates", "pipelines", "converters"):
        base = os.path.join(ROOT, group)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            d = os.path.join(base, name)
            if os.path.isfile(os.path.join(d, "src", "lib.rs")) or os.path.isfile(os.path.join(d, "src", "main.rs")):
                out.append(d)
    return out


def module_files(crate):
    """module path (tuple) -> file, for every file of the crate's src/."""
    src = os.path.join(crate, "src")
    mods = {}
    for d, dirs, files in os.walk(src):
        rel_dir = os.path.relpath(d, src)
        if rel_dir.split(os.sep)[0] == "bin":
            continue
        for f in files:
            if not f.endswith(".rs"):
                continue
            parts = [] if rel_dir == "." else rel_dir.split(os.sep)
            stem = f[:-3]
            if stem in ("lib", "main") and not parts:
                path = ()
            elif stem == "mod":
                path = tuple(parts)
            else:
                path = tuple(parts + [stem])
            mods[path] = os.path.join(d, f)
    return mods


COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'r(#*)".*?"\1|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'', re.S)


def code_of(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    m = re.search(r"^#\[cfg\(test\)\]", text, re.M)
    if m:
        text = text[: m.start()]
    text = STRING.sub('""', text)
    return COMMENT.sub("", text)


def expand_tree(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        return [tree]
    prefix = tree[:i]
    inner = tree[i + 1 : tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            out.extend(prefix + q for q in expand_tree(p))
    return out


USE = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
INLINE = re.compile(r"\b(crate|super|self)((?:\s*::\s*\w+)+)")
MOD = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;")


def absolute(here, path):
    """Segments of `path` (`crate::a::b`, `super::x`, `self::y`) from module `here`."""
    segs = [s.strip() for s in path.split("::") if s.strip()]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] in ("super", "self"):
        base = list(here)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                if not base:
                    return None
                base.pop()
            segs = segs[1:]
    else:
        return None
    segs = [s.split(" as ")[0].strip() for s in segs]
    return base + [s for s in segs if s and s != "self"]


def main(argv):
    crates = [os.path.abspath(a) for a in argv] or crate_dirs()
    circles = 0
    for crate in crates:
        mods = module_files(crate)
        codes = {m: code_of(f) for m, f in mods.items()}
        # (module, name) -> module that defines it, from `pub use` facades.
        reexport = {}
        for m, code in codes.items():
            for u in USE.finditer(code):
                if not u.group(1):
                    continue
                for p in expand_tree(u.group(2)):
                    segs = absolute(m, p) if p.split("::")[0].strip() in ("crate", "super", "self") else list(m) + [
                        s.strip() for s in p.split("::")
                    ]
                    if not segs:
                        continue
                    name = p.split("::")[-1].split(" as ")[-1].strip()
                    reexport[(m, name)] = tuple(segs)

        def resolve(segs, depth=0):
            segs = tuple(segs)
            for n in range(len(segs), -1, -1):
                if segs[:n] in mods:
                    mod, rest = segs[:n], segs[n:]
                    if rest and (mod, rest[0]) in reexport and depth < 8:
                        target = reexport[(mod, rest[0])]
                        if target != segs[: n + 1]:
                            return resolve(target + rest[1:], depth + 1)
                    return mod, (rest[0] if rest else "")
            return None, ""

        edges = {m: {} for m in mods}
        for m, code in codes.items():
            paths = []
            for u in USE.finditer(code):
                facade = bool(u.group(1))
                for p in expand_tree(u.group(2)):
                    paths.append((p, facade))
            rest = USE.sub(" ", MOD.sub(" ", code))
            for i in INLINE.finditer(rest):
                paths.append((i.group(1) + i.group(2).replace(" ", ""), False))
            for p, facade in paths:
                if p.split("::")[0].strip() not in ("crate", "super", "self"):
                    continue
                segs = absolute(m, p)
                if segs is None:
                    continue
                target, name = resolve(segs)
                if target is None or target == m:
                    continue
                if facade and target[: len(m)] == m:
                    continue  # a parent's facade over its own child
                edges[m].setdefault(target, set()).add(name or "*")
        # Tarjan's strongly connected components.
        index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

        def strong(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in edges[v]:
                if w not in index:
                    strong(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(comp)

        sys.setrecursionlimit(10000)
        for v in sorted(mods):
            if v not in index:
                strong(v)
        for comp in sccs:
            circles += 1
            files = sorted(os.path.relpath(mods[v], ROOT) for v in comp)
            print(f"check-cycles: import circle in {os.path.relpath(crate, ROOT)}: {', '.join(files)}", file=sys.stderr)
            for v in sorted(comp):
                for w, names in sorted(edges[v].items()):
                    if w in comp:
                        print(
                            f"  {os.path.relpath(mods[v], ROOT)} -> {os.path.relpath(mods[w], ROOT)}: "
                            + ", ".join(sorted(names)),
                            file=sys.stderr,
                        )
    if circles:
        return 1
    print(f"check-cycles: no import circle in {len(crates)} crates")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
