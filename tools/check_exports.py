#!/usr/bin/env python3
"""Runs onnx-tensat over a folder of exported models (tools/export_zoo.py) and checks each
output against its input under ONNX Runtime on random inputs (tests/python/tensat_testlib.py:
same input and output names, values within its tolerance).

usage: check_exports.py TOOL DIR [--only SUBSTR] [--dims batch=1,seq=64] [--other-dims batch=3,seq=40]
                        [-- EXTRA TOOL FLAGS]
  e.g. check_exports.py build/tools/onnx-tensat /tmp/zoo
       check_exports.py build/tools/onnx-tensat /tmp/zoo -- --k-multi 2

Prints one row per model: the tool's exit status and wall time, the predicted speedup, the
extraction status, e-nodes, opaque nodes, and ONNX Runtime's verdict; refusals (exit 2) with
their message. Exit 1 if any model failed: an internal error (exit 1), a failed verification
(exit 3), a timeout, or outputs that differ under ONNX Runtime; refusals are listed, not failed.

A model with symbolic input dimensions (export_zoo.py --dynamic) is optimized with each fixed
by --input-shape at its --dims value. Where the output keeps them (the report's
symbolic_dims), it is compared at the --other-dims values too; the "symbolic" column says
"kept", or why the output was written at the fixed shapes.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
import tensat_testlib as tl  # noqa: E402


def symbolic_shapes(src, values):
    """{input: shape} with each symbolic dimension at its value in `values`, {} if none."""
    import onnx
    m = onnx.load(src, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    shapes, symbolic = {}, False
    for i in m.graph.input:
        if i.name in inits:
            continue
        dims = []
        for d in i.type.tensor_type.shape.dim:
            if d.HasField("dim_value") and d.dim_value > 0:
                dims.append(d.dim_value)
            else:
                symbolic = True
                if d.dim_param not in values:
                    raise RuntimeError(f"input {i.name}: symbolic dimension {d.dim_param!r} has no value (--dims)")
                dims.append(values[d.dim_param])
        shapes[i.name] = dims
    return shapes if symbolic else {}


def check(tool, src, tmp, extra, dims, other_dims):
    base = os.path.join(tmp, os.path.basename(src)[:-5])
    out, rep = base + ".opt.onnx", base + ".json"
    t0 = time.time()
    try:
        fixed = symbolic_shapes(src, dims)
    except RuntimeError as e:  # a symbol without a value: this model's row fails, the run goes on
        return "FAIL", str(e), {}
    flags = [f for n, s in fixed.items() for f in ("--input-shape", n + ":" + "x".join(map(str, s)))]
    try:
        p = tl.run_tool(tool, src, out, "--report", rep, *flags, *extra, timeout=1800)
    except Exception as e:  # noqa: BLE001 - a timeout is a failure of this model
        return "FAIL", f"{type(e).__name__}", {}
    row = {"exit": p.returncode, "s": time.time() - t0}
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        return ("refused" if p.returncode == 2 else "FAIL"), msg, row
    with open(rep) as f:
        r = json.load(f)
    row.update(speedup=r["speedup_pct"], status=r["extraction"]["status"], nodes=r["egraph"]["nodes"],
               opaque=r["opaque_nodes"])
    sym = r.get("symbolic_dims")
    if fixed:
        row["symbolic"] = "kept" if sym and sym["kept"] else "fixed: " + (sym or {}).get("fixed_reason", "")[:120]
        if r["kept_original"] and not sym:
            row["symbolic"] = "kept (the input file)"
    try:
        feeds = tl.random_inputs(tl.session(out), shapes=fixed)
        err = tl.compare_models(src, out, feeds)
        if not err and fixed and row["symbolic"].startswith("kept"):
            feeds = tl.random_inputs(tl.session(out), seed=1, shapes=symbolic_shapes(src, other_dims))
            err = tl.compare_models(src, out, feeds)
            if err:
                err = "at --other-dims: " + err
    except Exception as e:  # noqa: BLE001 - ONNX Runtime refusing the output is a failure
        err = f"ONNX Runtime: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
    for f in (out, out + ".data"):
        if os.path.exists(f):
            os.remove(f)
    return ("FAIL", err, row) if err else ("ok", "", row)


def main():
    argv = sys.argv[1:]
    argv, extra = tl.split_tool_flags(argv)
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--dims", default="batch=1,seq=64", help="values the symbolic dimensions are optimized at")
    ap.add_argument("--other-dims", default="batch=3,seq=40", help="values a kept symbolic output is also checked at")
    a = ap.parse_args(argv)
    parse = lambda text: {k: int(v) for k, v in (kv.split("=") for kv in text.split(",") if kv)}  # noqa: E731
    dims, other_dims = parse(a.dims), parse(a.other_dims)
    models = sorted(f for f in glob.glob(os.path.join(a.dir, "*.onnx")) if not f.endswith(".opt.onnx")
                    and a.only in os.path.basename(f))
    counts = {"ok": 0, "refused": 0, "FAIL": 0}
    print("| model | exit | time (s) | predicted speedup | extraction | e-nodes | opaque | symbolic | ONNX Runtime |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for src in models:
            verdict, msg, row = check(a.tool, src, tmp, extra, dims, other_dims)
            counts[verdict] += 1
            name = os.path.basename(src)[:-5]
            if "speedup" in row:
                print(f"| {name} | {row['exit']} | {row['s']:.1f} | {row['speedup']:.1f}% | {row['status']} | "
                      f"{row['nodes']} | {row['opaque']} | {row.get('symbolic', '')} | {verdict} {msg} |", flush=True)
            else:
                print(f"| {name} | {row.get('exit', '-')} | {row.get('s', 0):.1f} | | | | | | {verdict}: {msg} |",
                      flush=True)
    print(f"\n{len(models)} models: {counts['ok']} optimized and equal under ONNX Runtime, "
          f"{counts['refused']} refused (exit 2), {counts['FAIL']} failed")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
