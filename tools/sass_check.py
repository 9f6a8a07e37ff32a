#!/usr/bin/env python3
"""SASS and resource-usage check for the gemmshim kernels (no GPU needed).

Disassembles every kernel of the library's CUDA objects (CMake targets
gs_kernels_*) for every architecture in their fatbins, normalises the SASS so
that it depends on the code only (not on the build path, the source file's
name or the layout of the object), and records one line per kernel:

  ARCH FILE KERNEL regs=R smem=S stack=K local=L spill_st=A spill_ld=B
       sass_sha256=H enc_sha256=E instr=N            (one line in the file)

  KERNEL      demangled name: "void " dropped, ", " written ",", and the
              anonymous namespace (file-specific when mangled) written {anon}.
              (ARCH, KERNEL) is the key; FILE (object's source file name,
              no directory) is informative only, so moving or splitting
              files changes nothing.
  regs, smem, stack, local
              cuobjdump -res-usage: REG, SHARED, STACK (frame), LOCAL.
  spill_st, spill_ld
              bytes of local-memory stores / loads in the SASS (STL / LDL
              instructions, weighted by width, counted statically): spills
              and local arrays, counted as ptxas counts spill bytes.
  sass_sha256 SHA-256 of the instruction text, one instruction a line, with
              the address column and encoding comments removed and symbol
              names normalised. Branch targets are offsets from the kernel's
              start (each kernel is its own section), so layout-independent.
  enc_sha256  SHA-256 of the instruction encodings (the 128-bit words,
              control bits included: stall counts, yields, barriers, reuse).
              It catches a scheduling change that the text does not show,
              and it does not depend on the disassembler's version.
  instr       number of instructions.

Commands:
  dump BUILD_DIR OUT.txt       write the lines (sorted, with a header)
  compare REFERENCE CURRENT    report kernels added, removed or changed; exit 1
                               on any, 0 ("N kernels identical") otherwise, 77
                               (a line "SKIP: ...") when not comparable
  check BUILD_DIR REFERENCE    dump + compare (the CTest test sass_unchanged)
  diff BUILD_A BUILD_B [--kernel REGEX]
                               unified diff of the normalised SASS of the
                               kernels that differ
  tools BUILD_DIR              print the cuobjdump and nvdisasm used

cuobjdump (and the nvdisasm it runs for -sass) is found, first hit wins:
$GEMMSHIM_CUOBJDUMP (and $GEMMSHIM_NVDISASM or $NVDISASM_PATH); one on PATH or
in the CUDA toolkit (--toolkit-bin, the build's CUDAToolkit_BIN_DIR, nvcc's
directory) of the reference's version; one downloaded before into
BUILD_DIR/sass-tools of that version; one on PATH or in the toolkit of another
version that reads the cubins; any downloaded before; else the PyPI wheels
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm, fetched with
"pip download --no-deps" into BUILD_DIR/sass-tools and unzipped there (never
installed). No cuobjdump to be had: exit 77 with a line "SKIP: ...".

Python 3 standard library only; c++filt (binutils) demangles.
"""

import argparse
import concurrent.futures
import difflib
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
import zlib

SKIP = 77
# The wheel version fetched when the reference names none (or names one that
# PyPI does not have): the oldest CUDA 13 one there; it reads CUDA 13.0 cubins
# for sm_80, sm_90 and sm_90a.
PINNED_TOOLS_VERSION = "13.2.51"
FIELDS = ("regs", "smem", "stack", "local", "spill_st", "spill_ld",
          "sass_sha256", "enc_sha256", "instr")
# Fields whose value may depend on the disassembler rather than on the code.
DISASSEMBLER_FIELDS = ("sass_sha256",)
HEADER_KEYS = ("nvcc", "cuobjdump", "build_type", "cuda_flags")
UPDATE_HINT = ("if the change is intended, measure it on the GPU, then update the "
               "reference: cmake --build BUILD --target sass_reference "
               "(see tests/sass/README.md)")


class Skip(Exception):
    """Not checkable here (no cuobjdump, not comparable): exit 77."""


class Fail(Exception):
    """A usage or build error: exit 2."""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, env=None, timeout=900, input_text=None):
    try:
        p = subprocess.run(cmd, env=env, input=input_text, capture_output=True,
                           text=True, timeout=timeout)
    except OSError as e:
        raise Fail(f"cannot run {cmd[0]}: {e}")
    except subprocess.TimeoutExpired:
        raise Fail(f"{' '.join(cmd[:2])}... took over {timeout} s")
    if p.returncode != 0:
        raise Fail(f"{' '.join(cmd[:3])}... exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout


# ---------------------------------------------------------------- build info

def cmake_cache(build_dir):
    cache = {}
    path = os.path.join(build_dir, "CMakeCache.txt")
    if os.path.isfile(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    cache[m.group(1)] = m.group(2)
    return cache


def tool_version(path):
    """'13.0.88' from `path --version` (nvcc, cuobjdump, nvdisasm)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else None


def build_info(build_dir, nvcc=None):
    """Header values of a build: nvcc version, build type, CUDA flags."""
    cache = cmake_cache(build_dir)
    info = {}
    candidates = [nvcc, cache.get("CMAKE_CUDA_COMPILER"), shutil.which("nvcc"),
                  "/usr/local/cuda/bin/nvcc"]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            v = tool_version(c)
            if v:
                info["nvcc"] = v
                break
    if "nvcc" not in info:
        for f in glob.glob(os.path.join(build_dir, "CMakeFiles", "*", "CMakeCUDACompiler.cmake")):
            with open(f, encoding="utf-8", errors="replace") as fh:
                m = re.search(r'set\(CMAKE_CUDA_COMPILER_VERSION "([^"]+)"\)', fh.read())
            if m:
                info["nvcc"] = m.group(1)
                break
    if "nvcc" not in info:
        raise Fail("cannot tell the nvcc version (no nvcc, no CMakeCache.txt in "
                   f"{build_dir}); pass --nvcc")
    bt = cache.get("CMAKE_BUILD_TYPE")
    if bt is not None:
        info["build_type"] = bt
        flags = " ".join(x for x in (cache.get("CMAKE_CUDA_FLAGS", ""),
                                     cache.get(f"CMAKE_CUDA_FLAGS_{bt.upper()}", ""))
                         if x.strip())
        info["cuda_flags"] = " ".join(flags.split()) or "-"
    return info


def kernel_objects(build_dir, objects_file=None):
    """The CUDA objects of targets gs_kernels_*: from the list CMake writes
    (tests/sass/kernel_objects.txt, exact: no stale objects of moved files),
    else every **/CMakeFiles/gs_kernels_*.dir/**/*.cu.o (stale ones too)."""
    if objects_file is None:
        f = os.path.join(build_dir, "tests", "sass", "kernel_objects.txt")
        objects_file = f if os.path.isfile(f) else None
    if objects_file:
        with open(objects_file, encoding="utf-8") as f:
            objs = [l.strip() for l in f if l.strip()]
        objs = [o if os.path.isabs(o) else os.path.join(build_dir, o) for o in objs]
        objs = [o for o in objs if o.endswith(".cu.o")]
        missing = [o for o in objs if not os.path.isfile(o)]
        if missing:
            raise Fail(f"{len(missing)} kernel object(s) not built, e.g. {missing[0]}: "
                       "build the library first (cmake --build BUILD)")
    else:
        objs = glob.glob(os.path.join(build_dir, "**", "CMakeFiles", "gs_kernels_*.dir", "**",
                                      "*.cu.o"), recursive=True)
    objs = sorted(set(objs))
    if not objs:
        raise Fail(f"no kernel objects in {build_dir} (CMakeFiles/gs_kernels_*.dir): "
                   "build the gs_kernels_* targets first")
    return objs


# ---------------------------------------------------------------- the tools

def toolkit_dirs(build_dir, toolkit_bin):
    cache = cmake_cache(build_dir)
    dirs = [toolkit_bin, cache.get("CUDAToolkit_BIN_DIR")]
    if cache.get("CMAKE_CUDA_COMPILER"):
        dirs.append(os.path.dirname(cache["CMAKE_CUDA_COMPILER"]))
    dirs.append("/usr/local/cuda/bin")
    out = []
    for d in dirs:
        if d and os.path.isdir(d) and d not in out:
            out.append(d)
    return out


def executable(p):
    return bool(p) and os.path.isfile(p) and os.access(p, os.X_OK)


def cached_tools(build_dir):
    """(version, cuobjdump, nvdisasm dir or None) unzipped before."""
    found = []
    for c in sorted(glob.glob(os.path.join(build_dir, "sass-tools", "*", "nvidia", "*",
                                           "bin", "cuobjdump"))):
        ver = c.split(os.sep)[-5]
        nvd = os.path.join(os.path.dirname(c), "nvdisasm")
        found.append((ver, c, os.path.dirname(nvd) if executable(nvd) else None))
    return found


def download_tools(build_dir, version):
    """pip download the two wheels (no install) and unzip them in
    BUILD_DIR/sass-tools/VERSION. Returns the cuobjdump path."""
    dest = os.path.join(build_dir, "sass-tools", version)
    wheels = os.path.join(build_dir, "sass-tools", "wheels")
    os.makedirs(wheels, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "-q", "-d", wheels,
           f"nvidia-cuda-cuobjdump=={version}", f"nvidia-cuda-nvdisasm=={version}"]
    log(f"sass_check: fetching cuobjdump and nvdisasm {version}: {' '.join(cmd[2:])}")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Skip(f"cannot run pip download: {e}")
    if p.returncode != 0:
        err = (p.stderr.strip().splitlines() or ["?"])[-1]
        raise Skip(f"pip download of nvidia-cuda-cuobjdump/nvdisasm=={version} failed: {err}")
    for name in ("nvidia_cuda_cuobjdump", "nvidia_cuda_nvdisasm"):
        whl = sorted(glob.glob(os.path.join(wheels, f"{name}-{version}-*.whl")))
        if not whl:
            raise Skip(f"pip download left no {name}-{version} wheel in {wheels}")
        with zipfile.ZipFile(whl[0]) as z:
            for info in z.infolist():
                path = z.extract(info, dest)
                mode = (info.external_attr >> 16) & 0o777
                if "/bin/" in info.filename:
                    mode |= 0o755
                if mode:
                    os.chmod(path, mode)
    c = glob.glob(os.path.join(dest, "nvidia", "*", "bin", "cuobjdump"))
    if not c:
        raise Skip(f"no cuobjdump in the nvidia-cuda-cuobjdump {version} wheel")
    return c[0]


class Tools:
    def __init__(self, cuobjdump, nvdisasm_dir, how):
        self.cuobjdump = cuobjdump
        self.nvdisasm_dir = nvdisasm_dir
        self.version = tool_version(cuobjdump) or "unknown"
        self.how = how
        self.env = dict(os.environ)
        if nvdisasm_dir:
            self.env["NVDISASM_PATH"] = nvdisasm_dir
            self.env["PATH"] = nvdisasm_dir + os.pathsep + self.env.get("PATH", "")

    def __str__(self):
        return (f"cuobjdump {self.version} ({self.cuobjdump}; {self.how}), nvdisasm in "
                f"{self.nvdisasm_dir or 'PATH'}")


def find_nvdisasm(build_dir, cuobjdump, toolkit_bin, version):
    env = os.environ.get("GEMMSHIM_NVDISASM")
    if env:
        if not executable(env):
            raise Fail(f"GEMMSHIM_NVDISASM={env} is not an executable")
        return os.path.dirname(os.path.abspath(env))
    if os.environ.get("NVDISASM_PATH"):
        d = os.environ["NVDISASM_PATH"]
        return d if os.path.isdir(d) else os.path.dirname(d)
    for d in [os.path.dirname(cuobjdump)] + toolkit_dirs(build_dir, toolkit_bin):
        if executable(os.path.join(d, "nvdisasm")):
            return d
    w = shutil.which("nvdisasm")
    if w:
        return os.path.dirname(w)
    for ver, _, nvd in cached_tools(build_dir):
        if nvd and ver == version:
            return nvd
    for ver, _, nvd in cached_tools(build_dir):
        if nvd:
            return nvd
    # a cuobjdump of the system without its nvdisasm: fetch the wheels
    for ver in dict.fromkeys([version, PINNED_TOOLS_VERSION]):
        try:
            return os.path.dirname(download_tools(build_dir, ver))
        except Skip as e:
            last = e
    raise Skip(f"cuobjdump {cuobjdump} found, but no nvdisasm for it: {last}")


def find_tools(build_dir, nvcc_version, want=None, toolkit_bin=None, download=True):
    """See the module doc for the order. want: the reference's cuobjdump version."""
    env = os.environ.get("GEMMSHIM_CUOBJDUMP")
    if env:
        if not executable(env):
            raise Fail(f"GEMMSHIM_CUOBJDUMP={env} is not an executable")
        return Tools(env, find_nvdisasm(build_dir, env, toolkit_bin, tool_version(env)),
                     "GEMMSHIM_CUOBJDUMP")
    nvcc_major = int(nvcc_version.split(".")[0])

    def readable(ver):  # a cuobjdump reads cubins of its CUDA major and older
        return ver is not None and int(ver.split(".")[0]) >= nvcc_major

    system = []
    w = shutil.which("cuobjdump")
    if w:
        system.append((w, "on PATH"))
    for d in toolkit_dirs(build_dir, toolkit_bin):
        c = os.path.join(d, "cuobjdump")
        if executable(c) and all(os.path.realpath(c) != os.path.realpath(s) for s, _ in system):
            system.append((c, "CUDA toolkit"))
    system = [(c, how, tool_version(c)) for c, how in system]
    cached = cached_tools(build_dir)

    def make(c, how):
        return Tools(c, find_nvdisasm(build_dir, c, toolkit_bin, tool_version(c)), how)

    if want:
        for c, how, ver in system:
            if ver == want:
                return make(c, how)
        for ver, c, nvd in cached:
            if ver == want and nvd:
                return Tools(c, nvd, f"downloaded before into {build_dir}/sass-tools")
    for c, how, ver in system:
        if readable(ver):
            return make(c, how)
    errors = []
    if want and download:
        try:
            c = download_tools(build_dir, want)
            return Tools(c, os.path.dirname(c), f"PyPI wheel, downloaded into {build_dir}/sass-tools")
        except Skip as e:
            errors.append(str(e))
    # downloaded before: the pinned version first
    for ver, c, nvd in sorted(cached, key=lambda t: t[0] != PINNED_TOOLS_VERSION):
        if nvd and readable(ver):
            return Tools(c, nvd, f"downloaded before into {build_dir}/sass-tools")
    if not download:
        raise Skip("no cuobjdump on PATH, in the CUDA toolkit or in BUILD/sass-tools")
    if want != PINNED_TOOLS_VERSION:
        try:
            c = download_tools(build_dir, PINNED_TOOLS_VERSION)
            return Tools(c, os.path.dirname(c), f"PyPI wheel, downloaded into {build_dir}/sass-tools")
        except Skip as e:
            errors.append(str(e))
    raise Skip("no cuobjdump on PATH or in the CUDA toolkit, and none could be "
               "downloaded (" + "; ".join(errors) + ")")


# ---------------------------------------------------------------- normalising

def _strip_len_prefixed(s, pos):
    """s[pos:] starts with '<len>_<name of len chars>': return the end."""
    m = re.match(r"(\d+)_", s[pos:])
    if not m:
        return None
    end = pos + m.end() + int(m.group(1))
    return end if end <= len(s) else None


# optional <length> of a mangled <source-name>, then the file-specific id
_ANON_MANGLED = re.compile(r"(\d*)_GLOBAL__N__[0-9a-f]+_")
_NV_STATIC = re.compile(r"(\d*)__nv_static_\d+__[0-9a-f]+_")


def normalise_symbols(text):
    """File-specific parts of symbol names -> fixed tokens, in demangled or raw
    text: (anonymous namespace), _GLOBAL__N__<hash>_<len>_<file>_<hash>,
    __nv_static_<n>__<hash>_<len>_<file>_<hash>_, $__internal_<n>_$."""
    text = text.replace("(anonymous namespace)", "{anon}")
    for rx, token in ((_ANON_MANGLED, "{anon}"), (_NV_STATIC, "{static}")):
        out, pos = [], 0
        for m in rx.finditer(text):
            if m.start() < pos:
                continue
            end = _strip_len_prefixed(text, m.end())
            if end is None:
                continue
            h = re.match(r"_[0-9a-f]{8}_?", text[end:])
            if h:
                end += h.end()
            start = m.start()
            digits = m.group(1)
            if digits:  # mangled: drop the length too if it is this name's
                start += len(digits)
                for k in range(len(digits)):
                    if digits[k] != "0" and int(digits[k:]) == end - m.start(1) - len(digits):
                        start = m.start() + k
                        break
            out.append(text[pos:start])
            out.append(token)
            pos = end
        out.append(text[pos:])
        text = "".join(out)
    text = re.sub(r"\$__internal_\d+_\$", "$__internal_N_$", text)
    return text


def demangle_all(names):
    names = sorted(set(names))
    if not names:
        return {}
    cxxfilt = shutil.which("c++filt")
    if not cxxfilt:
        raise Skip("c++filt (binutils) is not installed: cannot demangle kernel names")
    out = run([cxxfilt], input_text="\n".join(names) + "\n").split("\n")
    table = {}
    for mangled, dem in zip(names, out):
        dem = dem.strip() or mangled
        dem = normalise_symbols(dem)
        if dem.startswith("void "):
            dem = dem[len("void "):]
        dem = dem.replace(", ", ",")
        table[mangled] = dem
    return table


# ---------------------------------------------------------------- dumping

# an instruction: "/*0a80*/  TEXT ;  /* 0xLOW */" then "/* 0xHIGH */" on the next line
_INSTR = re.compile(r"^[ \t]*/\*[0-9a-f]{4,}\*/[ \t]*([^/\n]*?)[ \t]*/\*[ \t]*(0x[0-9a-f]{16})[ \t]*\*/"
                    r"[ \t]*\n[ \t]*/\*[ \t]*(0x[0-9a-f]{16})[ \t]*\*/[ \t]*$", re.M)
_ARCH = re.compile(r"^arch = (\S+)[ \t]*$", re.M)


def parse_sections(text):
    """Yield (is_elf, arch, text) for each fatbin entry of cuobjdump output."""
    parts = text.split("Fatbin ")  # literal splits: the text is ~100s of MB
    for part in parts[1:]:
        kind, _, body = part.partition(" code:")
        if kind not in ("elf", "ptx"):
            continue
        m = _ARCH.search(body, 0, 2000)
        yield kind == "elf", (m.group(1) if m else None), body


def parse_res_usage(text):
    res = {}
    for is_elf, arch, body in parse_sections(text):
        if not is_elf:
            continue
        for name, line in re.findall(r"^\s*Function (\S+?):[ \t]*\n(.*REG:.*)$", body, re.M):
            res[(arch, name)] = dict(re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", line))
    return res


def local_bytes(op):
    """Bytes a STL/LDL moves, from its width modifier."""
    mods = op.split(".")[1:]
    for m, b in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if m in mods:
            return b
    return 4


def _function(chunk, keep):
    """The summary of one function's SASS lines: instruction count, local
    memory bytes, hashes; with keep, its text and encodings (zlib)."""
    found = _INSTR.findall(chunk)
    sass = [ins for ins, _, _ in found]
    joined = "\n".join(sass)
    if "  " in joined or "\t" in joined:
        sass = [" ".join(ins.split()) for ins in sass]
    if any(k in joined for k in ("_GLOBAL__N", "__nv_static", "$__internal", "anonymous")):
        sass = [normalise_symbols(ins) for ins in sass]
    spill_st = spill_ld = 0
    if "STL" in joined or "LDL" in joined:
        for ins in sass:
            words = ins.split(" ", 2)
            op = words[1] if ins.startswith("@") and len(words) > 1 else words[0]
            if op == "STL" or op.startswith("STL."):
                spill_st += local_bytes(op)
            elif op == "LDL" or op.startswith("LDL."):
                spill_ld += local_bytes(op)
    text = "\n".join(sass) + "\n"
    enc = "\n".join(e for _, lo, hi in found for e in (lo, hi)) + "\n"
    out = {
        "spill_st": str(spill_st), "spill_ld": str(spill_ld),
        "sass_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "enc_sha256": hashlib.sha256(enc.encode()).hexdigest(),
        "instr": str(len(sass)),
    }
    if keep:
        out["sass_z"] = zlib.compress(text.encode(), 1)
        out["enc_z"] = zlib.compress(enc.encode(), 1)
    return out


def parse_sass(lines, keep=False):
    """{(arch, mangled): _function summary} from the lines of cuobjdump -sass
    (an iterable: its output is streamed, ~100s of MB)."""
    funcs = {}
    kind = arch = name = None
    body = []

    def flush():
        if name is not None and kind == "elf":
            if (arch, name) in funcs:
                raise Fail(f"{arch} {name} twice in one object")
            funcs[(arch, name)] = _function("".join(body), keep)
        body.clear()

    for line in lines:
        if line.startswith(" "):  # instructions and encodings: most of it
            if name is not None:
                body.append(line)
            continue
        s = line.strip()
        if s.startswith("Function : "):
            flush()
            name = s[len("Function : "):].strip()
        elif s in ("Fatbin elf code:", "Fatbin ptx code:"):
            flush()
            kind, arch, name = s.split()[1], None, None
        elif s.startswith("arch = ") and arch is None:
            arch = s[len("arch = "):].strip()
        elif name is not None:
            body.append(line)
    flush()
    return funcs


def dump_object(tools, obj, keep=False):
    res = parse_res_usage(run([tools.cuobjdump, "-res-usage", obj], env=tools.env))
    cmd = [tools.cuobjdump, "-sass", obj]
    try:
        p = subprocess.Popen(cmd, env=tools.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, bufsize=1 << 20)
    except OSError as e:
        raise Fail(f"cannot run {cmd[0]}: {e}")
    try:
        funcs = parse_sass(p.stdout, keep)
    finally:
        p.stdout.close()
        err = p.stderr.read()
        p.wait()
    if p.returncode != 0:
        raise Fail(f"{' '.join(cmd)} exited {p.returncode}: {err.strip()[-2000:]}")
    return res, funcs


def object_file_name(obj):
    name = os.path.basename(obj)
    return name[:-2] if name.endswith(".o") else name


def collect(build_dir, tools, objects_file=None, jobs=None, keep=False):
    """{(arch, name): {"file", "fields", and with keep "sass_z", "enc_z"}}"""
    objs = kernel_objects(build_dir, objects_file)
    jobs = jobs or max(1, os.cpu_count() or 1)
    # the largest objects first: they take longest
    objs_by_size = sorted(objs, key=lambda o: -os.path.getsize(o))
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        results = dict(zip(objs_by_size, ex.map(lambda o: dump_object(tools, o, keep),
                                                objs_by_size)))
    names = demangle_all(n for o in objs for (_, n) in results[o][1])
    kernels = {}
    for obj in objs:
        res, funcs = results[obj]
        fname = object_file_name(obj)
        for (arch, mangled), summary in sorted(funcs.items()):
            r = res.get((arch, mangled))
            if r is None:
                raise Fail(f"{obj}: no resource usage for {arch} {mangled}")
            fields = {"regs": r.get("REG", "?"), "smem": r.get("SHARED", "?"),
                      "stack": r.get("STACK", "?"), "local": r.get("LOCAL", "?")}
            fields.update((k, summary[k]) for k in FIELDS if k in summary)
            rec = {"file": fname, "fields": fields}
            if keep:
                rec["sass_z"], rec["enc_z"] = summary["sass_z"], summary["enc_z"]
            key = (arch, names[mangled])
            if key in kernels:  # same name in two files' anonymous namespaces
                log(f"sass_check: warning: {arch} {key[1]} is in {kernels[key]['file']} "
                    f"and {fname}; keyed with the file name")
                key = (arch, f"{names[mangled]} [{fname}]")
            kernels[key] = rec
    return kernels


def format_lines(kernels):
    lines = []
    for (arch, name), rec in sorted(kernels.items()):
        f = rec["fields"]
        lines.append(f"{arch} {rec['file']} {name} " +
                     " ".join(f"{k}={f[k]}" for k in FIELDS))
    return lines


def write_dump(path, header, lines):
    text = ("# gemmshim kernels' SASS and resource usage (tools/sass_check.py dump). "
            "Do not edit: cmake --build BUILD --target sass_reference\n")
    text += "".join(f"# {k} {header[k]}\n" for k in HEADER_KEYS if k in header)
    text += "".join(l + "\n" for l in lines)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def read_dump(path):
    header, kernels = {}, {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                parts = line[1:].strip().split(" ", 1)
                if parts[0] in HEADER_KEYS and len(parts) == 2:
                    header[parts[0]] = parts[1].strip()
                continue
            toks = line.split(" ")
            fields = {}
            while toks and re.match(r"^[a-z_0-9]+=\S*$", toks[-1]) and \
                    toks[-1].split("=", 1)[0] in FIELDS:
                k, v = toks.pop().split("=", 1)
                fields[k] = v
            if len(toks) < 3:
                raise Fail(f"{path}:{n}: not a kernel line: {line}")
            key = (toks[0], " ".join(toks[2:]))
            if key in kernels:
                raise Fail(f"{path}:{n}: {key[0]} {key[1]} twice")
            kernels[key] = {"file": toks[1], "fields": fields}
    return header, kernels


# ---------------------------------------------------------------- comparing

def comparable(ref_h, cur_h):
    """None, or why the two dumps cannot be compared."""
    if "nvcc" in ref_h and "nvcc" in cur_h and ref_h["nvcc"] != cur_h["nvcc"]:
        return (f"reference made with nvcc {ref_h['nvcc']}, this build uses "
                f"{cur_h['nvcc']}: not comparable")
    for k in ("build_type", "cuda_flags"):
        if k in ref_h and k in cur_h and ref_h[k] != cur_h[k]:
            return (f"reference made with {k} '{ref_h[k]}', this build has "
                    f"'{cur_h[k]}': not comparable")
    return None


def compare(ref_h, ref, cur_h, cur, ref_name="reference", out=sys.stdout):
    """Print the differences; return their number."""
    why = comparable(ref_h, cur_h)
    if why:
        raise Skip(why)
    ignored = ()
    if ref_h.get("cuobjdump") and cur_h.get("cuobjdump") and \
            ref_h["cuobjdump"] != cur_h["cuobjdump"]:
        ignored = DISASSEMBLER_FIELDS
        print(f"note: {ref_name} disassembled with cuobjdump {ref_h['cuobjdump']}, this "
              f"with {cur_h['cuobjdump']}: {', '.join(ignored)} not compared (the "
              "encodings, enc_sha256, are)", file=out)
    added = sorted(set(cur) - set(ref))
    removed = sorted(set(ref) - set(cur))
    changed, moved = [], 0
    for key in sorted(set(ref) & set(cur)):
        a, b = ref[key]["fields"], cur[key]["fields"]
        diffs = []
        for k in FIELDS:
            if k in ignored or a.get(k) == b.get(k):
                continue
            if k.endswith("sha256"):
                diffs.append(k)
            else:
                diffs.append(f"{k} {a.get(k, '-')}->{b.get(k, '-')}")
        if diffs:
            changed.append((key, diffs))
        if ref[key]["file"] != cur[key]["file"]:
            moved += 1
    for arch, name in removed:
        print(f"removed: {arch} {name} ({ref[(arch, name)]['file']})", file=out)
    for arch, name in added:
        print(f"added:   {arch} {name} ({cur[(arch, name)]['file']})", file=out)
    for (arch, name), diffs in changed:
        files = ref[(arch, name)]["file"]
        if cur[(arch, name)]["file"] != files:
            files += " -> " + cur[(arch, name)]["file"]
        print(f"changed: {arch} {name} ({files}): {', '.join(diffs)}", file=out)
    n = len(added) + len(removed) + len(changed)
    if moved:
        print(f"({moved} kernels are in another file than in the {ref_name}: "
              "not a difference)", file=out)
    if n:
        print(f"{n} kernels differ from the {ref_name} ({len(removed)} removed, "
              f"{len(added)} added, {len(changed)} changed); "
              f"{len(set(ref) & set(cur)) - len(changed)} identical", file=out)
    else:
        print(f"{len(cur)} kernels identical", file=out)
    return n


# ---------------------------------------------------------------- commands

def do_dump(build_dir, out, args, want=None):
    build_dir = os.path.abspath(build_dir)
    header = build_info(build_dir, args.nvcc)
    tools = find_tools(build_dir, header["nvcc"], want=want, toolkit_bin=args.toolkit_bin)
    log(f"sass_check: {tools}")
    header["cuobjdump"] = tools.version
    kernels = collect(build_dir, tools, args.objects_file, args.jobs)
    lines = format_lines(kernels)
    write_dump(out, header, lines)
    per_arch = {}
    for arch, _ in kernels:
        per_arch[arch] = per_arch.get(arch, 0) + 1
    log(f"sass_check: {len(lines)} kernels (" +
        ", ".join(f"{a}: {n}" for a, n in sorted(per_arch.items())) + f") -> {out}")
    return header, kernels


def cmd_dump(args):
    do_dump(args.build_dir, args.out, args)
    return 0


def cmd_compare(args):
    ref_h, ref = read_dump(args.reference)
    cur_h, cur = read_dump(args.current)
    return 1 if compare(ref_h, ref, cur_h, cur) else 0


def cmd_check(args):
    if not os.path.isfile(args.reference):
        raise Fail(f"no reference {args.reference}: make it with the target sass_reference")
    ref_h, ref = read_dump(args.reference)
    build_dir = os.path.abspath(args.build_dir)
    # not comparable: say so before spending time on the tools
    why = comparable(ref_h, build_info(build_dir, args.nvcc))
    if why:
        raise Skip(why)
    out = args.out or os.path.join(build_dir, "tests", "sass", "current.txt")
    cur_h, cur = do_dump(build_dir, out, args, want=ref_h.get("cuobjdump"))
    if args.archs:
        # a build of some architectures (GEMMSHIM_GPU_ARCHS) is compared on those
        built = set(a.strip() for a in args.archs.split(",") if a.strip())
        left = sorted({a for a, _ in ref} - built)
        ref = {k: v for k, v in ref.items() if k[0] in built}
        if left:
            print(f"note: this build has {', '.join(sorted(built))} only: the reference's "
                  f"{', '.join(left)} kernels are not compared")
        extra = sorted({a for a, _ in cur} - built)
        if extra:
            raise Fail(f"the build has {', '.join(extra)} kernels, which --archs does not name")
    n = compare(ref_h, ref, cur_h, cur)
    if n:
        print(f"SASS changed. Details: tools/sass_check.py diff BUILD_OF_THE_REFERENCE "
              f"{build_dir} --kernel REGEX; {UPDATE_HINT}")
    return 1 if n else 0


def cmd_tools(args):
    build_dir = os.path.abspath(args.build_dir)
    info = build_info(build_dir, args.nvcc)
    print(find_tools(build_dir, info["nvcc"], want=args.want, toolkit_bin=args.toolkit_bin))
    return 0


def cmd_diff(args):
    rx = re.compile(args.kernel) if args.kernel else None
    sides = []
    for b in (args.build_a, args.build_b):
        b = os.path.abspath(b)
        h = build_info(b, args.nvcc)
        tools = find_tools(b, h["nvcc"], toolkit_bin=args.toolkit_bin)
        log(f"sass_check: {b}: {tools}")
        sides.append(collect(b, tools, None, args.jobs, keep=True))
    a, b = sides
    keys = sorted(k for k in set(a) | set(b)
                  if (not rx or rx.search(k[1])) and (not args.arch or k[0] == args.arch))
    ndiff = same = 0
    for key in keys:
        arch, name = key
        if key not in b:
            print(f"only in {args.build_a}: {arch} {name} ({a[key]['file']})")
            ndiff += 1
            continue
        if key not in a:
            print(f"only in {args.build_b}: {arch} {name} ({b[key]['file']})")
            ndiff += 1
            continue
        fa, fb = a[key]["fields"], b[key]["fields"]
        if fa == fb:
            same += 1
            continue
        ndiff += 1
        res = [f"{k} {fa[k]}->{fb[k]}" for k in FIELDS
               if not k.endswith("sha256") and fa[k] != fb[k]]
        print(f"=== {arch} {name} ({a[key]['file']} / {b[key]['file']})"
              + (": " + ", ".join(res) if res else ""))

        def lines(rec):
            sass = zlib.decompress(rec["sass_z"]).decode().splitlines()
            if args.enc:
                e = zlib.decompress(rec["enc_z"]).decode().splitlines()
                sass = [f"{t}  /* {' '.join(e[2 * i:2 * i + 2])} */"
                        for i, t in enumerate(sass)]
            return sass if args.addresses else labelled(sass)

        la, lb = lines(a[key]), lines(b[key])
        if la == lb:
            print("    instruction text identical; the encodings differ (control bits: "
                  "stalls, yields, barriers): run with --enc to see them")
            continue
        sys.stdout.writelines(difflib.unified_diff(
            [l + "\n" for l in la], [l + "\n" for l in lb],
            f"a/{arch}/{name}", f"b/{arch}/{name}", n=args.context))
    print(f"{ndiff} kernels differ, {same} identical"
          + (f" (of those matching {args.kernel!r})" if args.kernel else ""))
    return 1 if ndiff else 0


_BRANCH_OPS = ("BRA", "BSSY", "CALL.REL", "SSY", "PBK", "PCNT")
_TARGET = re.compile(r"(0x[0-9a-f]+)(?= ;| *$)")


def labelled(sass):
    """Branch targets (offsets from the kernel's start, 16 bytes an
    instruction) as labels L0, L1... with a line "L0:" before each target, so
    that an instruction added early does not change every later branch in a
    diff."""
    def op(ins):
        w = ins.split(" ", 2)
        return w[1] if ins.startswith("@") and len(w) > 1 else w[0]

    targets = set()
    for ins in sass:
        if op(ins).startswith(_BRANCH_OPS):
            m = _TARGET.search(ins)
            if m and int(m.group(1), 16) % 16 == 0 and int(m.group(1), 16) // 16 < len(sass):
                targets.add(int(m.group(1), 16) // 16)
    names = {t: f"L{n}" for n, t in enumerate(sorted(targets))}
    out = []
    for i, ins in enumerate(sass):
        if i in names:
            out.append(f"{names[i]}:")
        if op(ins).startswith(_BRANCH_OPS):
            m = _TARGET.search(ins)
            if m and int(m.group(1), 16) % 16 == 0 and int(m.group(1), 16) // 16 in names:
                ins = ins[:m.start()] + names[int(m.group(1), 16) // 16] + ins[m.end():]
        out.append("    " + ins)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See the module doc string (head of this file).")
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp):
        sp.add_argument("--toolkit-bin", help="CUDA toolkit bin directory to look in")
        sp.add_argument("--nvcc", help="nvcc whose version to record (default: the build's)")
        sp.add_argument("--jobs", type=int, help="parallel cuobjdump runs (default: CPUs)")

    sp = sub.add_parser("dump", help="write the kernels' lines of a build")
    sp.add_argument("build_dir")
    sp.add_argument("out")
    sp.add_argument("--objects-file", help="list of objects (default: CMake's list, "
                    "else CMakeFiles/gs_kernels_*.dir/**/*.cu.o)")
    common(sp)
    sp.set_defaults(func=cmd_dump)

    sp = sub.add_parser("compare", help="compare two dumps")
    sp.add_argument("reference")
    sp.add_argument("current")
    sp.set_defaults(func=cmd_compare)

    sp = sub.add_parser("check", help="dump a build and compare it with the reference")
    sp.add_argument("build_dir")
    sp.add_argument("reference")
    sp.add_argument("--out", help="where to write the dump (default: "
                    "BUILD/tests/sass/current.txt)")
    sp.add_argument("--objects-file")
    sp.add_argument("--archs", help="the architectures the build has (sm_80,sm_90,sm_90a): "
                    "the reference's others are not compared (default: all)")
    common(sp)
    sp.set_defaults(func=cmd_check)

    sp = sub.add_parser("diff", help="unified diff of the normalised SASS of two builds")
    sp.add_argument("build_a")
    sp.add_argument("build_b")
    sp.add_argument("--kernel", help="only kernels whose normalised name matches (re.search)")
    sp.add_argument("--arch", help="only this architecture (sm_80, sm_90, sm_90a)")
    sp.add_argument("--enc", action="store_true", help="show each instruction's encoding")
    sp.add_argument("--context", type=int, default=3, help="diff context lines")
    sp.add_argument("--addresses", action="store_true",
                    help="branch targets as offsets (default: as labels)")
    common(sp)
    sp.set_defaults(func=cmd_diff)

    sp = sub.add_parser("tools", help="say which cuobjdump/nvdisasm would be used")
    sp.add_argument("build_dir")
    sp.add_argument("--want", help="preferred cuobjdump version")
    common(sp)
    sp.set_defaults(func=cmd_tools)

    args = p.parse_args(argv)
    try:
        return args.func(args)
    except Skip as e:
        print(f"SKIP: sass_check: {e}", flush=True)
        return SKIP
    except Fail as e:
        print(f"sass_check: error: {e}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
