#!/usr/bin/env python3
"""The cost model from the command line: the default (no GPU) is the built-in H100 table, misses
are priced by the calibrated model and reported, bad tables warn and fall back, the roofline
ablation stays available, onnx-tensat-costs refuses to measure without a GPU and prints a fit
report, onnx-tensat-time times a model on a GPU (and refuses without one), and models at batch 8 (onnx-tensat-gen --batch 8) and a model the table does not cover
still optimize.

usage: cost_cli_test.py ONNX_TENSAT ONNX_TENSAT_COSTS ONNX_TENSAT_GEN ONNX_TENSAT_TIME
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FAILURES = []


def check(cond, what, detail=""):
    """Prints ok/FAIL for `what`; `detail` (e.g. the tool's stderr) only on failure."""
    print(("ok   " if cond else "FAIL ") + what + ("" if cond or not detail else f"\n     {detail}"))
    if not cond:
        FAILURES.append(what)


def run(*cmd, timeout=600):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)


def odd_conv_model(path):
    """Conv 3 -> 5 channels on 17x17, relu, conv 5 -> 7: no signature of the H100 table."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((5, 3, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((7, 5, 1, 1)).astype(np.float32), "w2")
    w3 = numpy_helper.from_array(rng.standard_normal((7, 5, 1, 1)).astype(np.float32), "w3")
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["a"]),
             helper.make_node("Conv", ["r1", "w3"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    g = helper.make_graph(nodes, "odd", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 17, 17])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 7, 17, 17])], [w1, w2, w3])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def tool(binary, model, tmp, *flags):
    out = os.path.join(tmp, "out.onnx")
    rep = os.path.join(tmp, "rep.json")
    for f in (out, rep):
        if os.path.exists(f):
            os.remove(f)
    p = run(binary, model, out, "--report", rep, *flags)
    r = json.load(open(rep)) if os.path.exists(rep) else None
    return p, r


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    ot, costs, gen, timer = sys.argv[1:5]
    tmp = tempfile.mkdtemp(prefix="tensat_cost_cli_")
    try:
        odd = os.path.join(tmp, "odd.onnx")
        odd_conv_model(odd)
        has_gpu = shutil.which("nvidia-smi") is not None and run("nvidia-smi", "-L").returncode == 0

        # The default: the built-in H100 table, misses priced by the calibrated model.
        p, r = tool(ot, odd, tmp)
        check(p.returncode == 0, "default run exits 0", f"{p.returncode}: {p.stderr[-300:]}")
        if not has_gpu and r:
            check(r["cost_model"] == "table:h100", f"default cost model is table:h100 ({r['cost_model']})")
            check("graph-replay-v3, v2" in r["cost_model_detail"], "the report names the method and version")
            check("cost model table:h100" in p.stderr, "the human report says 'cost model table:h100'")
            fb = r["fallback"]
            check(fb["signatures"] > 0 and len(fb["prices"]) == fb["signatures"], "misses are listed in the JSON")
            check(all(x["by"].startswith("fit:") for x in fb["prices"]), "misses are priced by the calibrated fit")
            check("not in the table, priced by the model calibrated to table:h100" in p.stderr,
                  "the human report says what priced the misses")
            check(fb["before_ms"] > 0 and abs(fb["before_ms"] - r["cost_before"]) <= 1e-12 * r["cost_before"],
                  "the table covers none of the odd model's signatures: all of its cost is estimated")
            check(r["verify"]["passed"], "the odd model verifies")

        # The roofline ablation.
        p, r = tool(ot, odd, tmp, "--cost-model", "roofline", "--device-profile", "t4")
        check(p.returncode == 0 and r and r["cost_model"] == "roofline:t4", "roofline t4 ablation")
        check(r is not None and r["fallback"]["signatures"] == 0, "roofline has no fallback prices")

        # No built-in table for a T4: asking for one is a usage error naming the fix.
        p, _ = tool(ot, odd, tmp, "--cost-model", "table", "--device-profile", "t4")
        check(p.returncode == 2 and "no built-in measured table" in p.stderr, "table for t4 without a file exits 2",
              f"{p.returncode}: {p.stderr.strip()[-200:]}")

        # A corrupted table and a table of a newer version: a warning, then the built-in table.
        bad = os.path.join(tmp, "bad.json")
        for text, what in (('{"format": "onnx-tensat-cost-cache", "vers', "corrupted"),
                           ('{"format": "onnx-tensat-cost-cache", "version": 9, "devices": {}}', "version 9")):
            open(bad, "w").write(text)
            p, r = tool(ot, odd, tmp, "--cost-model", "table", "--cost-table", bad)
            check(p.returncode == 0 and r and r["cost_model"] == "table:h100",
                  f"a {what} table falls back to the built-in one", f"{p.returncode}: {p.stderr.strip()[-300:]}")
            check("cannot be used" in p.stderr and what in p.stderr, f"a {what} table warns")
        p, _ = tool(ot, odd, tmp, "--cost-table", os.path.join(tmp, "missing.json"))
        check(p.returncode == 2 and "does not exist" in p.stderr, "a missing table file exits 2")

        # onnx-tensat-costs.
        if not has_gpu:
            p = run(costs, odd, "--out", os.path.join(tmp, "t.json"))
            check(p.returncode == 2 and "needs a GPU" in p.stderr, "onnx-tensat-costs refuses to measure without a GPU",
                  f"{p.returncode}: {p.stderr.strip()}")
            check(not os.path.exists(os.path.join(tmp, "t.json")), "and writes nothing")
        p = run(costs, "--fit-report", "h100")
        check(p.returncode == 0 and "| conv |" in p.stdout and "| matmul |" in p.stdout,
              "fit report of the built-in table", f"{p.returncode}: {p.stderr.strip()[-200:]}")
        p = run(costs, "--fit-report", bad)
        check(p.returncode == 2 and bad in p.stderr, "fit report of a bad table exits 2 naming it")

        # onnx-tensat-time: the executor's timing and per-step profile.
        tj = os.path.join(tmp, "time.json")
        p = run(timer, odd, "--profile", "--isolated", "--repeats", "20", "--json", tj)
        if not has_gpu:
            check(p.returncode == 2 and "needs a GPU" in p.stderr and not os.path.exists(tj),
                  "onnx-tensat-time refuses without a GPU and writes nothing", f"{p.returncode}: {p.stderr.strip()}")
        else:
            ok = p.returncode == 0 and os.path.exists(tj)
            check(ok, "onnx-tensat-time times a model", f"{p.returncode}: {p.stderr.strip()[-300:]}")
            if ok:
                t = json.load(open(tj))[0]
                prof = t["profile"]["steps"]
                check(t["graph"]["median_ms"] > 0 and t["graph"]["samples"] == 20, "its graph-mode median")
                check(len(prof) == t["steps"] and all(s["median_ms"] > 0 and s["isolated_ms"] > 0 for s in prof),
                      "a profile entry per step, each timed in the model and alone")
                check(any(s["op"] == "conv" and s["detail"] for s in prof), "conv steps say how they run")
        p = run(timer, os.path.join(tmp, "missing.onnx"))
        check(p.returncode == 2, "onnx-tensat-time: a missing model or no GPU exits 2", f"{p.returncode}")

        # Batch 8: the generator's option, and onnx-tensat optimizes what the table lacks.
        models = os.path.join(tmp, "b8")
        p = run(gen, models, "--batch", "8", "--only", "squeezenet,bert,nasrnn")
        check(p.returncode == 0, "onnx-tensat-gen --batch 8", f"{p.returncode}: {p.stderr.strip()[-300:]}")
        for m in ("squeezenet", "bert", "nasrnn"):
            path = os.path.join(models, m + ".onnx")
            if not os.path.exists(path):
                continue
            x = onnx.load(path, load_external_data=False).graph.input[0].type.tensor_type.shape.dim
            check(x[0].dim_value in (8, 8 * 64), f"{m}: batch 8 input")
            p, r = tool(ot, path, tmp)
            ok = p.returncode == 0 and r is not None and r["verify"]["passed"]
            check(ok, f"{m} at batch 8 optimizes and verifies", f"{p.returncode}: {p.stderr.strip()[-300:]}")
            if ok:
                check(r["cost_after"] <= r["cost_before"] * (1 + 1e-9), f"{m} at batch 8: cost not up")
                if not has_gpu:
                    check(r["fallback"]["signatures"] > 0, f"{m} at batch 8: misses reported")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} failed")
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
