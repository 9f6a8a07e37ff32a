"""The JSON lines that bench/models scripts write, read back: which of them
are results. Plain Python (no torch), for the tools that run without a GPU."""


def is_result(rec):
    """A timed OFF/ON record: not an ab pass's line, nor a control (--aa) or
    smoke run (--quick), which are never results."""
    return "ab_iters" not in rec and not rec.get("aa") and not rec.get("quick")
