#!/usr/bin/env python3
"""The acceptance table of issue #14 from the files scripts/gpu-acceptance.sh writes.

For each model NAME, DIR holds NAME.r1.json .. NAME.rK.json (onnx-tensat --report of K separate
processes, each with --measure on) and NAME.torch.json (tools/torch_time.py of the original
and the written model). The table gives, per model:

  measure before/after   onnx-tensat's graph-mode medians (ms), median of the K processes, and
                         their spread across processes, (max - min) / min
  torch before/after     the independent CUDA-graph timing through PyTorch (ms)
  agree                  |measure - torch| / torch, for the original and the written model
  predicted / measured   speedup of the extracted graph: cost model vs the measured medians
  written                optimized, or "kept original" (with the rule that kept it)
  not slower             the written model's torch time <= the original's + their larger IQR

and, where NAME.torchfused.json exists (torch_time.py --fuse-conv-relu), PyTorch's time with
each Conv+Relu as one cuDNN call (as the executor runs it) and the agreement with it, beside.

and checks the acceptance lines: agreement within 10%, processes within 3%, predicted within
5 points of measured, no written model slower. Exit 1 when a check fails or data is missing.

usage: acceptance_table.py DIR [--runs 3] [--json SUMMARY.json]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys


def load(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def ms(x):
    return "-" if x is None else f"{x:.4f}"


def summarize(d, name, runs):
    reports = [load(os.path.join(d, f"{name}.r{k}.json")) for k in range(1, runs + 1)]
    reports = [r for r in reports if r]
    torch_res = load(os.path.join(d, f"{name}.torch.json")) or {}
    row = {"model": name, "runs": len(reports), "problems": []}
    measured = [r["measured"] for r in reports if r.get("measured", {}).get("before_ms")]
    if len(measured) < runs:
        row["problems"].append(f"{runs - len(measured)} of {runs} runs without a measurement")
    if measured:
        b = [m["before_ms"] for m in measured]
        a = [m["after_ms"] for m in measured]
        row["measure_before"] = statistics.median(b)
        row["measure_after"] = statistics.median(a)
        row["process_spread"] = max((max(v) - min(v)) / min(v) for v in (b, a) if min(v) > 0)
        row["mode"] = measured[0].get("mode")
        row["left_out"] = measured[0].get("before", {}).get("left_out", {})
    if reports:
        r = reports[-1]
        if "not faster by the cost model" in (r.get("kept_reason") or ""):
            # Written as it came: the output's predicted speedup is 0, its measurement the
            # original timed twice (not the extraction, which was never written).
            row["predicted"] = 0.0
        elif r.get("cost_extracted"):
            row["predicted"] = r["cost_before"] / r["cost_extracted"] - 1
        row["cost_model"] = r.get("cost_model")
        row["kept"] = r.get("kept_reason") if r.get("kept_original") else None
        row["verify"] = r.get("verify", {}).get("passed")
    if "measure_before" in row and row["measure_after"] > 0:
        row["measured"] = row["measure_before"] / row["measure_after"] - 1
    orig = next((v for k, v in torch_res.items() if not k.endswith(".opt.onnx")), None)
    opt = next((v for k, v in torch_res.items() if k.endswith(".opt.onnx")), None)
    for key, res in (("torch_before", orig), ("torch_after", opt)):
        if res and "graph" in res:
            row[key] = res["graph"]["median_ms"]
            row[key + "_iqr"] = res["graph"]["iqr_ms"]
            if res.get("ort_check", "ok") != "ok":
                row["problems"].append(f"{key}: torch interpretation differs from ONNX Runtime: {res['ort_check']}")
        elif res and "error" in res:
            row["problems"].append(f"{key}: {res['error']}")
    if "torch_before" in row and "measure_before" in row:
        row["agree_before"] = abs(row["measure_before"] - row["torch_before"]) / row["torch_before"]
    if "torch_after" in row and "measure_after" in row and not row.get("kept"):
        row["agree_after"] = abs(row["measure_after"] - row["torch_after"]) / row["torch_after"]
    # NAME.torchfused.json (torch_time.py --fuse-conv-relu): PyTorch running each Conv+Relu as
    # one cuDNN call, as the executor does; shown beside, not a check.
    fused = load(os.path.join(d, f"{name}.torchfused.json")) or {}
    for key, res in (("fused_before", next((v for k, v in fused.items() if not k.endswith(".opt.onnx")), None)),
                     ("fused_after", next((v for k, v in fused.items() if k.endswith(".opt.onnx")), None))):
        if res and "graph" in res:
            row["torch_" + key] = res["graph"]["median_ms"]
            m = row.get("measure_" + key.split("_")[1])
            if m is not None and not (key == "fused_after" and row.get("kept")):
                row["agree_" + key] = abs(m - res["graph"]["median_ms"]) / res["graph"]["median_ms"]
    if "torch_before" in row and "torch_after" in row:
        noise = max(row["torch_before_iqr"], row["torch_after_iqr"])
        row["not_slower"] = row["torch_after"] <= row["torch_before"] + noise
        row["torch_speedup"] = row["torch_before"] / row["torch_after"] - 1
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    names = sorted({os.path.basename(p).split(".r1.json")[0] for p in glob.glob(os.path.join(a.dir, "*.r1.json"))})
    if not names:
        print(f"acceptance_table: no NAME.r1.json in {a.dir}")
        return 1
    rows = [summarize(a.dir, n, a.runs) for n in names]
    print("| model | measure before (ms) | measure after (ms) | processes | torch before (ms) | torch after (ms) "
          "| agree before | agree after | predicted | measured | torch speedup | written | not slower |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    failures = []
    for r in rows:
        written = "optimized" if not r.get("kept") else r["kept"]
        print(f"| {r['model']} | {ms(r.get('measure_before'))} | {ms(r.get('measure_after'))} | "
              f"{pct(r.get('process_spread'))} | {ms(r.get('torch_before'))} | {ms(r.get('torch_after'))} | "
              f"{pct(r.get('agree_before'))} | {pct(r.get('agree_after'))} | {pct(r.get('predicted'))} | "
              f"{pct(r.get('measured'))} | {pct(r.get('torch_speedup'))} | {written} | "
              f"{'-' if 'not_slower' not in r else ('yes' if r['not_slower'] else 'NO')} |")
        checks = [("agreement with torch (original) <= 10%", r.get("agree_before"), lambda v: v <= 0.10),
                  ("agreement with torch (written) <= 10%", r.get("agree_after"), lambda v: v <= 0.10),
                  ("three processes within 3%", r.get("process_spread"), lambda v: v <= 0.03),
                  ("predicted within 5 points of measured",
                   None if r.get("predicted") is None or r.get("measured") is None else abs(r["predicted"] - r["measured"]),
                   lambda v: v <= 0.05),
                  ("written model not slower", r.get("not_slower"), lambda v: v)]
        for what, value, ok in checks:
            if value is None:
                if what.startswith("agreement with torch (written)") and r.get("kept"):
                    continue  # the original was written: nothing else to compare
                failures.append(f"{r['model']}: {what}: no data")
            elif not ok(value):
                failures.append(f"{r['model']}: {what}: {value if isinstance(value, bool) else pct(value)}")
        failures += [f"{r['model']}: {p}" for p in r["problems"]]
        if "torch_fused_before" in r:
            print(f"  ({r['model']}: PyTorch with each Conv+Relu as one cuDNN call: {ms(r.get('torch_fused_before'))} / "
                  f"{ms(r.get('torch_fused_after'))} ms, agrees {pct(r.get('agree_fused_before'))} / "
                  f"{pct(r.get('agree_fused_after'))})")
        if r.get("left_out"):
            print(f"  ({r['model']}: left out of the measured figures: {r['left_out']})")
    print()
    print("acceptance: " + ("all checks passed" if not failures else f"{len(failures)} failed:"))
    for f in failures:
        print(f"  {f}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rows": rows, "failures": failures}, fh, indent=1, sort_keys=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
