#!/usr/bin/env python3
"""The ILP's budget flags of onnx-tensat, end to end on Inception-v3 (the JSON report's
extraction section):

1. --ilp-work 50000 --ilp-stall-work 0: the ILP splits into its 42 blocks and proves the
   optimum (status "optimal", gap 0) within the budget (extract/README.md, "Blocks").
2. The defaults prove it too (about 4 300 of the 10 000 units since the read-class rows of
   2026-11-28; before them, with the H100 table re-measured on 2026-11-27, the default budget
   ended at gap 0.0014 and the proof took about 26 000 units).
3. --ilp-stall-work 300: the stall stop (CBC ends when its incumbent has not improved for that
   much work) ends CBC on a block whose start is already optimal, before the proof: status
   "stalled-*", the same extraction cost, a positive gap, less work than the proof.

usage: ilp_flags.py ONNX_TENSAT INCEPTIONV3.onnx
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_checks import Checks, run_report  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("model")
    a = ap.parse_args()
    check = Checks()

    with tempfile.TemporaryDirectory() as tmp:
        proven = run_report(a.tool, a.model, tmp, ["--ilp-work", "50000", "--ilp-stall-work", "0"])
        ex = proven["extraction"]
        check(ex["status"] == "optimal", f"--ilp-stall-work 0: status {ex['status']} is optimal")
        check(ex["gap"] is not None and ex["gap"] < 1e-9, f"--ilp-stall-work 0: gap {ex['gap']} is 0")
        check(ex["work_budget"] == 50000, f"--ilp-work 50000: budget {ex['work_budget']}")
        check(ex["blocks"] > 1, f"the ILP split into {ex['blocks']} blocks")
        default = run_report(a.tool, a.model, tmp, [])
        ex1 = default["extraction"]
        check(ex1["status"] == "optimal", f"defaults: status {ex1['status']} is optimal")
        stalled = run_report(a.tool, a.model, tmp, ["--ilp-stall-work", "300"])
        ex2 = stalled["extraction"]
        check(ex2["status"].startswith("stalled-"), f"--ilp-stall-work 300: status {ex2['status']} is stalled-*")
        check(ex2["gap"] is not None and ex2["gap"] > 0, f"--ilp-stall-work 300: gap {ex2['gap']} is open")
        check(ex2["work_used"] < ex1["work_used"],
              f"--ilp-stall-work 300: work {ex2['work_used']} below the proof's {ex1['work_used']}")
        for name, r in (("defaults", default), ("stalled", stalled)):
            check(abs(r["cost_after"] - proven["cost_after"]) < 1e-9,
                  f"the same extraction, {name} ({r['cost_after']} vs {proven['cost_after']})")
    return check.done()


if __name__ == "__main__":
    sys.exit(main())
