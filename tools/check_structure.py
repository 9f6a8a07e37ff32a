#!/usr/bin/env python3
"""Checks three rules of the source layout (CTest: structure).

1. Nothing outside the kernel families' own files and the registry names a
   specific family: shim/, dispatch/, compat/ and include/ reach kernels
   through dispatch/gs_registry.h. Checked in code (comments removed): no
   identifier of a family's own API (gs_<family>_..., GS_<FAMILY>_...), no
   string literal that is a family's or configuration's name. The built-in
   routing table (dispatch/gs_table_data.h) is data that names families and
   configurations as text, resolved through the registry when it is parsed
   (an unknown name there fails test_table), so it is not code here.
   A family's own files are its folder, kernels/<family>/, which holds its
   table kernels/<family>/<family>_family.c; no other file lies loose in
   kernels/. A family's folder names no other family, and kernels/common/
   (the pieces the families share) names none, except the families' C
   launch API header (FAMILY_API).

2. Lower layers include nothing from upper ones. Layers, bottom up:
   dispatch/ (the problem descriptor, the family interface, the registry,
   configuration, route choice, the routing table: pure C), kernels/ (the
   kernels and the families' tables, which implement dispatch's interface;
   the registry refers to them by symbol, never by header), compat/, shim/;
   include/ is the public header. A file may include headers of its
   own layer or lower ones. KNOWN_UP lists the inclusions that still go up,
   each with why; a new one fails the check, and one that is gone must be
   taken off the list (so the list stays true).

3. No include cycles among the headers of shim/, dispatch/, compat/,
   kernels/ and include/ (a header that, through the headers it includes,
   includes itself): each header's dependencies stay a tree a reader can
   follow from the bottom.

4. shim/ by role: every file of shim/ lies in one of its folders
   (SHIM_FOLDERS, top down: face, serve, tune, observe, plugins, base), and
   a folder includes headers of its own or lower folders only.
   KNOWN_SHIM_UP lists the inclusions that go up, each with why; as for
   rule 2, a new one fails and one that is gone must be taken off. Calls
   that reach a folder above through a table of function pointers (the
   real cuBLAS's entry points, which the application's calls come in
   through at face/) are not inclusions: that is the way down.

usage: tools/check_structure.py [SOURCE_DIR]      exit 0 clean, 1 violations
"""
import os
import re
import sys

LAYERS = {"dispatch": 1, "kernels": 2, "compat": 3, "shim": 4}
SCANNED = ("shim", "dispatch", "compat", "include")
NOT_CODE = {"dispatch/gs_registry.c", "dispatch/gs_table_data.h"}
COMMON = "kernels/common"
# Declares every family's extern "C" launch API (the family tables call it).
FAMILY_API = {"kernels/common/gs_kernels.h"}
SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".in")

# (including file, included header): why it still goes up a layer
# (none today: compat/ takes the real libraries' getters as function pointers
# from shim/, and the call descriptor and cuBLAS's types live in compat/)
KNOWN_UP = {}

# shim/'s folders, top down (docs/DESIGN.md, "The shim by role"): the
# cuBLAS face, serving, tuning, observing, plugins, and the base they all use.
SHIM_FOLDERS = ("face", "serve", "tune", "observe", "plugins", "base")
# (including file, included header): why it still goes up a folder
KNOWN_SHIM_UP = {
    ("shim/base/gs_state.c", "gs_lt_algos.h"):
        "the lazy start-up (first call, pthread_once) registers the cuBLASLt "
        "family before GEMMSHIM_KERNELS is parsed against the registry",
    ("shim/base/gs_state.c", "gs_plugin.h"):
        "the start-up loads plugins before GEMMSHIM_KERNELS is parsed (their "
        "names are in the registry it is read against) and reports them",
    ("shim/base/gs_state.c", "gs_log.h"):
        "the start-up opens the log and registers its summary at exit",
    ("shim/base/gs_state.c", "gs_timing.h"):
        "the summary at exit first collects the GPU times still pending",
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


def family_tables(root):
    """{family folder: its table's path relative to root}, and the problems
    of tables outside kernels/<family>/<family>_family.c."""
    tables, problems = {}, []
    for rel, _ in sources(root, ["kernels"]):
        if not rel.endswith("_family.c"):
            continue
        parts = rel.split("/")
        if len(parts) != 3 or parts[2] != parts[1] + "_family.c" or rel.startswith(COMMON + "/"):
            problems.append(f"{rel}: a family's table belongs in its folder, "
                            "kernels/<family>/<family>_family.c")
            continue
        tables[parts[1]] = rel
    return tables, problems


def family_names_by_folder(root):
    """{family folder: (names, prefixes)}: the family's and its
    configurations' names (its table's .name, the configuration names its
    files return) and its API's identifier prefixes (gs_pingpong)."""
    tables, _ = family_tables(root)
    out = {}
    for folder, rel in tables.items():
        names, prefixes = set(), set()
        text = open(os.path.join(root, rel)).read()
        for m in re.finditer(r'\.name\s*=\s*"([a-z0-9_]+)"', text):
            names.add(m.group(1))
        for m in re.finditer(r"\b(gs_[a-z0-9]+(?:_[a-z0-9]+)*?)_(?:can_implement|run|name|kernel_name|workspace_bytes)\b", text):
            prefixes.add(m.group(1))
        for _, path in sources(root, ["kernels/" + folder]):
            # configuration names the kernels return ("pingpong_128x128x64")
            for m in re.finditer(r'"((?:%s)_[a-z0-9_]+x[0-9]+)"' % "|".join(sorted(names) or ["-"]),
                                 open(path, errors="replace").read()):
                names.add(m.group(1))
        out[folder] = (names, prefixes)
    return out


def family_names(root):
    """Families' and configurations' names, and the API prefixes, of all."""
    names, prefixes = set(), set()
    for n, p in family_names_by_folder(root).values():
        names |= n
        prefixes |= p
    return names, prefixes


def namers(names, prefixes):
    """Regexes that find a name of these in code."""
    if not names:
        return []
    ident = re.compile(r"\b(%s)\w*" % "|".join(re.escape(p) for p in sorted(prefixes))) \
        if prefixes else None
    upper = re.compile(r"\bGS_(%s)_\w*" % "|".join(re.escape(n.upper()) for n in sorted(names)))
    literal = re.compile(r'"(%s)"' % "|".join(re.escape(n) for n in sorted(names)))
    return [rx for rx in (ident, upper, literal) if rx]


def find_names(root, rel_paths, rxs, what):
    problems = []
    for rel, path in rel_paths:
        code = strip_comments(open(path, errors="replace").read())
        for lineno, line in enumerate(code.split("\n"), 1):
            for rx in rxs:
                m = rx.search(line)
                if m:
                    problems.append(f"{rel}:{lineno}: names {what}: {m.group(0)}")
    return problems


def check_families(root):
    tables, problems = family_tables(root)
    by_folder = family_names_by_folder(root)
    names, prefixes = family_names(root)
    if not names:
        return problems + ["no family found in kernels/<family>/<family>_family.c "
                           "(the check reads their .name)"]
    every = namers(names, prefixes)
    problems += find_names(root, [(rel, path) for rel, path in sources(root, SCANNED)
                                  if rel not in NOT_CODE], every, "a kernel family")
    # kernels/: family folders and common/ only
    for rel, _ in sources(root, ["kernels"]):
        parts = rel.split("/")
        if len(parts) < 3 or (parts[1] not in tables and rel.split("/", 2)[:2] != COMMON.split("/")):
            problems.append(f"{rel}: kernels/ holds family folders (kernels/<family>/, with "
                            "<family>_family.c) and kernels/common/ only")
    problems += find_names(root, [(rel, path) for rel, path in sources(root, [COMMON])
                                  if rel not in FAMILY_API], every, "a kernel family")
    for folder in tables:
        others_n, others_p = set(), set()
        for other, (n, p) in by_folder.items():
            if other != folder:
                others_n |= n
                others_p |= p
        problems += find_names(root, list(sources(root, ["kernels/" + folder])),
                               namers(others_n, others_p), "another kernel family")
    return problems


def layer_of(rel):
    top = rel.split("/", 1)[0]
    return LAYERS.get(top)


def check_upward(root, files, where, level_of, known, what):
    """Problems of the files that include a header of a higher level
    (level_of: 0 at the top for shim/'s folders, higher up for the layers,
    as `what` says through its `above(mine, theirs)`), less the known ones
    (listed with why), and known ones that are gone."""
    problems, seen_up = [], set()
    for rel, path in files:
        mine = level_of(rel)
        if mine is None:
            continue
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(path, errors="replace").read(),
                             re.M):
            inc = os.path.basename(m.group(1))
            target = where.get(inc)
            theirs = level_of(target) if target else None
            if theirs is None or not what["above"](mine, theirs):
                continue
            if (rel, inc) in known:
                seen_up.add((rel, inc))
                continue
            problems.append(what["problem"](rel, target))
    for key in sorted(set(known) - seen_up):
        problems.append(f"{key[0]} no longer includes {key[1]}: take it off {what['list']} "
                        "in tools/check_structure.py")
    return problems


def check_layers(root):
    where = {}  # header name -> its layer folder
    for rel, _ in sources(root, list(LAYERS) + ["include"]):
        if rel.endswith((".h", ".cuh")):
            where.setdefault(os.path.basename(rel), rel)
    return check_upward(root, sources(root, list(LAYERS)), where, layer_of, KNOWN_UP, {
        "above": lambda mine, theirs: theirs > mine,
        "problem": lambda rel, target: (f"{rel}: includes {target}, a layer above it "
                                        f"({rel.split('/')[0]}/ is below {target.split('/')[0]}/)"),
        "list": "KNOWN_UP"})


def shim_folder_of(rel):
    """Index of rel's shim folder in SHIM_FOLDERS (0 = top), or None."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] == "shim" and parts[1] in SHIM_FOLDERS:
        return SHIM_FOLDERS.index(parts[1])
    return None


def check_shim_folders(root):
    problems, where = [], {}
    for rel, _ in sources(root, ["shim"]):
        if shim_folder_of(rel) is None:
            problems.append(f"{rel}: shim/ files lie in its role folders "
                            f"({', '.join(SHIM_FOLDERS)}), not at its root or elsewhere")
        elif rel.endswith(".h"):
            name = os.path.basename(rel)
            if name in where:
                problems.append(f"{rel}: a second {name} in shim/ ({where[name]}): header "
                                "names are unique (the include path holds every folder)")
            where.setdefault(name, rel)
    return problems + check_upward(root, sources(root, ["shim"]), where, shim_folder_of,
                                   KNOWN_SHIM_UP, {
        "above": lambda mine, theirs: theirs < mine,
        "problem": lambda rel, target: (f"{rel}: includes {target}, a folder above it (shim/ "
                                        f"top down: {', '.join(SHIM_FOLDERS)})"),
        "list": "KNOWN_SHIM_UP"})


def header_graph(root):
    """{header path: [header paths it includes]}, quoted includes resolved by
    file name as the build's include directories resolve them."""
    where, graph = {}, {}
    folders = list(LAYERS) + ["include"]
    for rel, _ in sources(root, folders):
        if rel.endswith((".h", ".cuh")):
            where.setdefault(os.path.basename(rel), rel)
    for rel, path in sources(root, folders):
        if not rel.endswith((".h", ".cuh")):
            continue
        code = strip_comments(open(path, errors="replace").read())
        graph[rel] = [where[os.path.basename(m.group(1))]
                      for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', code, re.M)
                      if os.path.basename(m.group(1)) in where]
    return graph


def check_cycles(root):
    graph = header_graph(root)
    problems, state, stack = [], {}, []  # state: 1 on the stack, 2 done

    def visit(h):
        state[h] = 1
        stack.append(h)
        for inc in graph.get(h, []):
            if state.get(inc) == 1:
                cycle = stack[stack.index(inc):] + [inc]
                problems.append("include cycle: " + " -> ".join(cycle))
            elif inc not in state:
                visit(inc)
        stack.pop()
        state[h] = 2

    for h in sorted(graph):
        if h not in state:
            visit(h)
    return problems


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = (check_families(root) + check_layers(root) + check_cycles(root) +
                check_shim_folders(root))
    for p in problems:
        print(p)
    names, _ = family_names(root)
    print(f"check_structure: {len(problems)} problems ({len(names)} family and configuration "
          f"names; {len(KNOWN_UP)} known inclusions that go up a layer, "
          f"{len(KNOWN_SHIM_UP)} up a shim/ folder)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
