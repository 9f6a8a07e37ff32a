#!/usr/bin/env python3
"""Checks two rules of the source layout (CTest: structure).

1. Nothing outside the kernel families' own files and the registry names a
   specific family: shim/, dispatch/, compat/ and include/ reach kernels
   through dispatch/gs_registry.h. Checked in code (comments removed): no
   identifier of a family's own API (gs_<family>_..., GS_<FAMILY>_...), no
   string literal that is a family's or configuration's name. The built-in
   routing table (dispatch/gs_table_data.h) is data that names families and
   configurations as text, resolved through the registry when it is parsed
   (an unknown name there fails test_table), so it is not code here.

2. Lower layers include nothing from upper ones. Layers, bottom up:
   dispatch/ (the problem descriptor, the family interface, the registry,
   configuration, route choice, the routing table: pure C), kernels/ (the
   kernels and the families' tables, which implement dispatch's interface;
   the registry refers to them by symbol, never by header), compat/, shim/;
   include/ is the public header. A file may include headers of its
   own layer or lower ones. KNOWN_UP lists the inclusions that still go up,
   each with why; a new one fails the check, and one that is gone must be
   taken off the list (so the list stays true).

usage: tools/check_structure.py [SOURCE_DIR]      exit 0 clean, 1 violations
"""
import os
import re
import sys

LAYERS = {"dispatch": 1, "kernels": 2, "compat": 3, "shim": 4}
SCANNED = ("shim", "dispatch", "compat", "include")
NOT_CODE = {"dispatch/gs_registry.c", "dispatch/gs_table_data.h"}
SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".in")

# (including file, included header): why it still goes up a layer
KNOWN_UP = {
    ("compat/gs_compat.h", "gs_cublas.h"): "cuBLAS's headers as the shim includes them",
    ("compat/gs_handle.c", "gs_real.h"): "the real cuBLAS's table is found by shim/gs_real.c",
    ("compat/gs_lt.c", "gs_real.h"): "the real cuBLAS's table (as above)",
    ("compat/gs_lt.h", "gs_call.h"): "the intercepted call's descriptor lives in shim/",
}


def strip_comments(text):
    """C/C++ text without comments (string literals kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(root, folders):
    for folder in folders:
        base = os.path.join(root, folder)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if f.endswith(SOURCE_EXT):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, root), path


def family_names(root):
    """Families' and configurations' names: from the families' tables
    (kernels/*_family.c) and the configurations they name."""
    names, prefixes = set(), set()
    for rel, path in sources(root, ["kernels"]):
        if not rel.endswith("_family.c"):
            continue
        text = open(path).read()
        for m in re.finditer(r'\.name\s*=\s*"([a-z0-9_]+)"', text):
            names.add(m.group(1))
        for m in re.finditer(r"\b(gs_[a-z0-9]+(?:_[a-z0-9]+)*?)_(?:can_implement|run|name|kernel_name|workspace_bytes)\b", text):
            prefixes.add(m.group(1))
    for rel, path in sources(root, ["kernels"]):
        # configuration names the kernels return ("pingpong_128x128x64")
        for m in re.finditer(r'"((?:%s)_[a-z0-9_]+x[0-9]+)"' % "|".join(sorted(names) or ["-"]),
                             open(path, errors="replace").read()):
            names.add(m.group(1))
    return names, prefixes


def check_families(root):
    names, prefixes = family_names(root)
    problems = []
    if not names:
        return ["no family found in kernels/*_family.c (the check reads their .name)"]
    ident = re.compile(r"\b(%s)\w*" % "|".join(re.escape(p) for p in sorted(prefixes))) \
        if prefixes else None
    upper = re.compile(r"\bGS_(%s)_\w*" % "|".join(re.escape(n.upper()) for n in sorted(names)))
    literal = re.compile(r'"(%s)"' % "|".join(re.escape(n) for n in sorted(names)))
    for rel, path in sources(root, SCANNED):
        if rel in NOT_CODE:
            continue
        code = strip_comments(open(path, errors="replace").read())
        for lineno, line in enumerate(code.split("\n"), 1):
            for rx in filter(None, (ident, upper, literal)):
                m = rx.search(line)
                if m:
                    problems.append(f"{rel}:{lineno}: names a kernel family: {m.group(0)}")
    return problems


def layer_of(rel):
    top = rel.split("/", 1)[0]
    return LAYERS.get(top)


def check_layers(root):
    where = {}  # header name -> its layer folder
    for rel, _ in sources(root, list(LAYERS) + ["include"]):
        if rel.endswith((".h", ".cuh")):
            where.setdefault(os.path.basename(rel), rel)
    problems, seen_up = [], set()
    for rel, path in sources(root, list(LAYERS)):
        mine = layer_of(rel)
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(path, errors="replace").read(),
                             re.M):
            inc = os.path.basename(m.group(1))
            target = where.get(inc)
            if not target:
                continue
            theirs = layer_of(target)
            if theirs is None or theirs <= mine:
                continue
            if (rel, inc) in KNOWN_UP:
                seen_up.add((rel, inc))
                continue
            problems.append(f"{rel}: includes {target}, a layer above it "
                            f"({rel.split('/')[0]}/ is below {target.split('/')[0]}/)")
    for key in sorted(set(KNOWN_UP) - seen_up):
        problems.append(f"{key[0]} no longer includes {key[1]}: take it off KNOWN_UP "
                        "in tools/check_structure.py")
    return problems


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = check_families(root) + check_layers(root)
    for p in problems:
        print(p)
    names, _ = family_names(root)
    print(f"check_structure: {len(problems)} problems ({len(names)} family and configuration "
          f"names; {len(KNOWN_UP)} known inclusions that go up a layer)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
