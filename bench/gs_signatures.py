"""The signature file of `gemmshim record` (GEMMSHIM_RECORD; its format is
docs/TUNING.md's, "Record, then tune offline"), read and merged.

    import gs_signatures
    rec = gs_signatures.read_sigs(["app.sigs", "other.sigs"])
    rec["sigs"]   {(class hex, why): {"calls", "captured", "timed", "ms", "shape", ...}}
    rec["seqs"]   {sequence id: {"captures", "complete", "sigs": [signature ids]}}
    rec["procs"], rec["headers"]: the proc and header lines' fields; rec["bad"]

Several processes' lines (torchrun ranks, later runs) merge by summing per
signature. decode_class gives a class's fields (gs_class_t), shape_of its
shape for people. Python 3 standard library only.
"""
import struct

SIGS_MAGIC = "gemmshim-signatures"
# gs_class_t (dispatch/gs_problem.h): four 16-bit fields (entry and is_64,
# each with cublasLtMatmul's scaling contract in the upper half of what was
# one 32-bit word), 18 32-bit fields, then 10 64-bit ones, in the memory
# order the hex encodes (little-endian machines)
CLASS_FORMAT = "<hHhH9iIi6Ii10q"
CLASS_FIELDS = ("entry lt_scales is_64 lt_flags a_type b_type c_type compute scalar_type "
                "trans_a trans_b scalars_on_device beta_kind math_flags bias_type align_a "
                "align_b align_c align_bias align_alpha align_beta sm_count_target m n k lda "
                "ldb ldc batch stride_a stride_b stride_c").split()
CLASS_HEX_LEN = 2 * struct.calcsize(CLASS_FORMAT)
ENTRIES = ("cublasSgemm_v2", "cublasSgemmStridedBatched", "cublasGemmEx",
           "cublasGemmStridedBatchedEx", "cublasGemmBatchedEx", "cublasLtMatmul")
DTYPES = ("other", "f32", "f16", "bf16", "f64", "e4m3", "e5m2")
SCALE_MODES = ("none", "SCALAR_32F", "VEC16_UE4M3", "VEC32_UE8M0", "OUTER_VEC_32F",
               "VEC128_32F", "BLK128x128_32F")  # gs_scale_mode_t; 15 is "other"
LT_FAST_ACCUM, LT_AMAX_D, LT_C_TYPE_DIFFERS, LT_C_TYPE_SHIFT = 1, 2, 4, 8  # lt_flags
COMPUTES = ("other", "32F", "32F_PEDANTIC", "32F_FAST_TF32", "32F_FAST_16F", "32F_FAST_16BF")
GEMMEX_BATCHED, LT_MATMUL = 4, 5  # gs_entry_t


class Bad(Exception):
    """A file that is not what it should be: one line for the user."""


def decode_class(hexstr):
    """The class's fields as a dict, or None when hexstr is not one."""
    if len(hexstr) != CLASS_HEX_LEN:
        return None
    try:
        return dict(zip(CLASS_FIELDS, struct.unpack(CLASS_FORMAT, bytes.fromhex(hexstr))))
    except ValueError:
        return None


def name(table, i):
    return table[i] if 0 <= i < len(table) else "?"


def shape_of(cls):
    """The class for people, as the shim's lines write it."""
    if cls is None:
        return "?"
    entry = name(ENTRIES, cls["entry"]) + ("_64" if cls["is_64"] and cls["entry"] != LT_MATMUL else "")
    s = (f"{entry} {'NT'[cls['trans_a'] & 1]}{'NT'[cls['trans_b'] & 1]} "
         f"{name(DTYPES, cls['a_type'])},{name(DTYPES, cls['b_type'])}->{name(DTYPES, cls['c_type'])} "
         f"compute={name(COMPUTES, cls['compute'])} m={cls['m']} n={cls['n']} k={cls['k']} "
         f"batch={cls['batch']} lda={cls['lda']} ldb={cls['ldb']} ldc={cls['ldc']}")
    if cls["batch"] > 1 and cls["entry"] != GEMMEX_BATCHED:
        s += f" strides={cls['stride_a']},{cls['stride_b']},{cls['stride_c']}"
    s += f" +bias({name(DTYPES, cls['bias_type'])})" if cls["bias_type"] else ""
    for i, letter in enumerate("ABCD"):
        mode = cls["lt_scales"] >> (4 * i) & 15
        if mode:
            s += f" scale_{letter}={name(SCALE_MODES, mode) if mode != 15 else 'other'}"
    flags = cls["lt_flags"]
    if flags & LT_C_TYPE_DIFFERS:
        s += f" c_type={name(DTYPES, flags >> LT_C_TYPE_SHIFT & 15)}"
    s += " amax_d" if flags & LT_AMAX_D else ""
    return s + (" fast_accum" if flags & LT_FAST_ACCUM else "")


def flops_of(cls):
    return 2.0 * cls["m"] * cls["n"] * cls["k"] * max(cls["batch"], 1) if cls else 0.0


def fields_of(parts):
    """key=value fields of a tab-split line, and its '# ...' comment."""
    kv, comment = {}, ""
    for p in parts:
        if p.startswith("#"):
            comment = p[1:].strip()
        elif "=" in p:
            k, v = p.split("=", 1)
            kv[k] = v
    return kv, comment


def read_lines(path):
    """(complete lines, torn): a last line without its newline was cut by
    a process that died while writing it."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
            text = f.read()
    except OSError as e:
        raise Bad(f"cannot read {path}: {e.strerror or e}") from None
    lines = text.split("\n")
    torn = 1 if lines and lines[-1] != "" else 0
    return lines[:-1], torn


def sig_entry(parts, kv, comment):
    """A "sig" line's signature, or None when the line is malformed."""
    if len(parts) < 3 or decode_class(parts[1]) is None or kv.get("tunable") not in ("0", "1"):
        return None
    try:
        counts = {k: int(kv.get(k) or 0) for k in ("calls", "captured", "timed")}
        ms = float(kv.get("ms") or 0)
    except ValueError:
        return None
    return dict(counts, hex=parts[1], tunable=kv["tunable"] == "1", why=kv.get("why", ""),
                id=kv.get("id"), ms=ms, shape=comment)


def read_sigs(paths):
    """The signature files, merged: counts and times summed per signature
    (its class, and why the class does not describe the call), the captures of
    identical sequences summed per sequence id."""
    out = {"sigs": {}, "seqs": {}, "procs": [], "headers": [], "bad": 0}
    for path in paths:
        lines, torn = read_lines(path)
        out["bad"] += torn
        if not lines or not lines[0].startswith(SIGS_MAGIC + "\t"):
            raise Bad(f"{path} is not a gemmshim signature file (no '{SIGS_MAGIC}' first line)")
        for n, line in enumerate(lines, 1):
            parts = line.split("\t")
            kv, comment = fields_of(parts[1:])
            if parts[0] == SIGS_MAGIC:
                if kv.get("format") != "1":
                    raise Bad(f"{path}:{n}: format {kv.get('format')} is not one this report "
                              "reads (1)")
                out["headers"].append(kv)
            elif parts[0] == "proc":
                out["procs"].append(kv)
            elif parts[0] == "sig" and sig_entry(parts, kv, comment):
                e = sig_entry(parts, kv, comment)
                s = out["sigs"].setdefault((e["hex"], e["tunable"], e["why"]),
                                           dict(e, calls=0, captured=0, timed=0, ms=0.0))
                for k in ("calls", "captured", "timed", "ms"):
                    s[k] += e[k]
            elif parts[0] == "seq" and kv.get("id") and kv.get("captures", "").isdigit():
                q = out["seqs"].setdefault(kv["id"], {"captures": 0,
                                                      "complete": kv.get("complete") == "1",
                                                      "sigs": kv.get("sigs", "").split(",")})
                q["captures"] += int(kv["captures"])
            else:
                out["bad"] += 1
    return out
