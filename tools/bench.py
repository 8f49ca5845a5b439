#!/usr/bin/env python3
"""Benchmark driver: the paper's tables for onnx-tensat on the eight benchmark models.

Runs `onnx-tensat` with --report on each model and prints markdown tables beside the
TENSAT paper's numbers (Yang et al., MLSys 2021, Tables 2-4): optimization time (explore, extract), cost
before/after and speedup, e-graph size; greedy vs ILP; k_multi 0, 1, 2; efficient vs vanilla
cycle filtering; ILP with vs without order constraints; optionally peers (onnxsim,
onnxoptimizer, ONNX Runtime's offline optimizer) costed by the same cost model.

The main table uses the default cost model (without a GPU: the built-in H100 table) and adds
the roofline ablation (--ablation, default "--cost-model roofline --device-profile t4"): the
speedup roofline predicts for its own choice, and that choice priced by the main cost model
(onnx-tensat --iter-limit 0 on roofline's output), i.e. what deciding by roofline gives up.

usage: tools/bench.py --bin build/tools/onnx-tensat --models build/models [--tables main,extract,kmulti,filter,order,peers,rules]
       [--repeat 3] [--models-list bert,nasrnn] [--extra "--cost-model roofline"] [--ablation ""]
       [--write docs/benchmarks.md]
--write puts the tables (and the command that made them) into that markdown file between the
markers <!-- bench:begin --> and <!-- bench:end -->, replacing what was there.
Benchmarks report numbers; they assert nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = ["nasrnn", "bert", "resnext50", "nasneta", "squeezenet", "vgg19", "inceptionv3", "resnet50", "densenet"]
PAPER = {  # TASO search (s), TENSAT total, explore, extract (s), TASO speedup %, TENSAT speedup %
    "nasrnn": (177.3, 0.5, 0.10, 0.37, 45.4, 68.9),
    "bert": (13.6, 1.4, 0.83, 0.60, 8.5, 9.2),
    "resnext50": (25.3, 0.7, 0.68, 0.05, 5.5, 8.8),
    "nasneta": (1226, 10.6, 8.81, 1.79, 1.9, 7.3),
    "squeezenet": (16.4, 0.3, 0.16, 0.12, 6.7, 24.5),
    "vgg19": (8.9, 0.4, 0.42, 0.02, 8.9, 8.9),
    "inceptionv3": (68.6, 5.1, 4.38, 0.75, 6.3, 10.0),
    "resnet50": (None, None, None, None, 0.0, 0.0),
    "densenet": (None, None, None, None, None, None),  # not in the paper (concat-heavy regression check)
}


def run(binary, model, flags, timeout=900, keep=None):
    """One onnx-tensat run; its report (with "wall"), or {"error"}. keep: where to leave the output model."""
    with tempfile.TemporaryDirectory() as tmp:
        out = keep or os.path.join(tmp, "out.onnx")
        rep = os.path.join(tmp, "rep.json")
        t = time.time()
        p = subprocess.run([binary, model, out, "-q", "--report", rep, *flags], capture_output=True, text=True,
                           timeout=timeout)
        wall = time.time() - t
        if p.returncode != 0 or not os.path.exists(rep):
            return {"error": f"exit {p.returncode}: {p.stderr.strip()[-300:]}", "wall": wall}
        with open(rep) as f:
            r = json.load(f)
        r["wall"] = wall
        return r


def median_run(binary, model, flags, repeat):
    runs = [run(binary, model, flags) for _ in range(repeat)]
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    best = ok[0]
    for k in ("seed", "explore", "extract", "total", "import", "export", "verify"):
        if k in best["times"]:
            best["times"][k] = statistics.median(r["times"].get(k, 0.0) for r in ok)
    return best


def speed(r):
    if "error" in r:
        return "error"
    return f"{r['speedup_pct']:.1f}%"


def fmt(x, nd=3):
    return "—" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))


def ablation(a, m):
    """The ablation's own predicted speedup, and its chosen graph priced by the main cost model."""
    src = os.path.join(a.models, m + ".onnx")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ablation.onnx")
        r = run(a.bin, src, a.extra + a.ablation, keep=out)
        if "error" in r or not os.path.exists(out):
            return "error", "error"
        priced = run(a.bin, out, a.extra + ["--iter-limit", "0", "--verify", "off"])
        base = run(a.bin, src, a.extra + ["--iter-limit", "0", "--verify", "off"])
    if "error" in priced or "error" in base or priced["cost_before"] <= 0:
        return speed(r), "error"
    return speed(r), f"{(base['cost_before'] / priced['cost_before'] - 1) * 100:.1f}%"


def table_main(a, models):
    print("\n### Optimization time and predicted speedup (k_multi 1, ILP, efficient cycle filter)\n")
    abl = " ".join(a.ablation)
    extra_head = f" | ablation ({abl}): its speedup | its written graph re-imported, priced by the main model (a conv only a relu reads priced fused, as runtimes run it)" if a.ablation else ""
    # (The extract column includes the k_multi 0 late hint where the ILP asks for it, pipeline/seed.h.)
    print("| model | explore (s) | extract (s) | paper explore/extract (s) | e-nodes | e-classes | iters | stop "
          "| cost before (ms) | cost after (ms) | speedup | paper TENSAT | misses | extraction | verify" + extra_head + " |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if a.ablation else ""))
    res = {}
    for m in models:
        r = median_run(a.bin, os.path.join(a.models, m + ".onnx"), a.extra, a.repeat)
        res[m] = r
        p = PAPER[m]
        if "error" in r:
            print(f"| {m} | error: {r['error']} |")
            continue
        e = r["egraph"]
        misses = r.get("fallback", {}).get("signatures", 0)
        cells = ""
        if a.ablation:
            own, under_main = ablation(a, m)
            cells = f" | {own} | {under_main}"
        print(f"| {m} | {r['times']['explore']:.3f} | {r['times']['extract']:.3f} | {fmt(p[2], 2)} / {fmt(p[3], 2)} "
              f"| {e['nodes']} | {e['classes']} | {e['iterations']} | {e['stop_reason']} | {r['cost_before']:.4f} "
              f"| {r['cost_after']:.4f} | {speed(r)} | {fmt(p[5], 1)}{'%' if p[5] is not None else ''} | {misses} | {r['extraction']['method']} "
              f"{r['extraction']['status']} | {r['verify']['passed']}{cells} |")
    if res:
        any_r = next((r for r in res.values() if "error" not in r), None)
        if any_r:
            detail = any_r.get("cost_model_detail", "")
            print(f"\ncost model: {any_r['cost_model']}" + (f" ({detail})" if detail else ""))
    return res


def table_variants(a, models, title, variants):
    print(f"\n### {title}\n")
    # k_multi > 1 also explores and extracts at k_multi 1 first (the seed, pipeline/seed.h):
    # counted in the time (a k_multi 1 extraction's k_multi 0 late hint is in its extract time).
    head = "| model | " + " | ".join(f"{name}: extracted cost / speedup / (seed+)explore+extract (s)"
                                     for name, _ in variants) + " |"
    print(head)
    print("|---|" + "---|" * len(variants))
    res = {}
    for m in models:
        cells = []
        for name, flags in variants:
            r = median_run(a.bin, os.path.join(a.models, m + ".onnx"), a.extra + flags, a.repeat)
            res[(m, name)] = r
            if "error" in r:
                cells.append("error")
            else:
                t = r["times"].get("seed", 0.0) + r["times"]["explore"] + r["times"]["extract"]
                st = r["extraction"]["status"]
                ce = r.get("cost_extracted", r["cost_after"])
                sp = (r["cost_before"] / ce - 1) * 100 if ce > 0 else 0.0
                cells.append(f"{ce:.4f} / {sp:.1f}% / {t:.3f} ({r['egraph']['nodes']} n, {st})")
        print(f"| {m} | " + " | ".join(cells) + " |")
    return res


def table_peers(a, models):
    print("\n### Peers, costed by the same cost model (onnx-tensat --iter-limit 0 on each peer's output)\n")
    peers = []
    try:
        import onnxsim  # noqa: F401
        peers.append("onnxsim")
    except ImportError:
        pass
    try:
        import onnxoptimizer  # noqa: F401
        peers.append("onnxoptimizer")
    except ImportError:
        pass
    peers.append("ort-offline")
    print("| model | original | " + " | ".join(peers) + " | onnx-tensat |")
    print("|---|---|" + "---|" * len(peers) + "---|")
    import onnx
    for m in models:
        src = os.path.join(a.models, m + ".onnx")
        base = run(a.bin, src, a.extra + ["--iter-limit", "0", "--verify", "off"])
        cells = []
        with tempfile.TemporaryDirectory() as tmp:
            for peer in peers:
                dst = os.path.join(tmp, peer + ".onnx")
                try:
                    if peer == "onnxsim":
                        import onnxsim
                        model, ok = onnxsim.simplify(onnx.load(src))
                        onnx.save(model, dst)
                    elif peer == "onnxoptimizer":
                        import onnxoptimizer
                        onnx.save(onnxoptimizer.optimize(onnx.load(src)), dst)
                    else:
                        import onnxruntime as ort
                        so = ort.SessionOptions()
                        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
                        so.optimized_model_filepath = dst
                        ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
                    r = run(a.bin, dst, a.extra + ["--iter-limit", "0", "--verify", "off"])
                    cells.append("error" if "error" in r else f"{r['cost_before']:.4f}")
                except Exception as e:  # noqa: BLE001
                    cells.append(f"failed ({type(e).__name__})")
        ours = run(a.bin, src, a.extra)
        print(f"| {m} | {fmt(base.get('cost_before'), 4)} | " + " | ".join(cells) +
              f" | {fmt(ours.get('cost_after'), 4)} |")


def table_rules(a, models):
    print("\n### Rules that fired (k_multi 1): applications per rule\n")
    for m in models:
        r = run(a.bin, os.path.join(a.models, m + ".onnx"), a.extra)
        if "error" in r:
            print(f"- {m}: error")
            continue
        fired = sorted(r.get("rules_fired", {}).items(), key=lambda kv: -kv[1]["applied"])
        s = ", ".join(f"{k} {v['applied']}/{v['matches']}" for k, v in fired if v["applied"])
        print(f"- **{m}**: {s}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/tools/onnx-tensat")
    ap.add_argument("--models", default="build/models")
    ap.add_argument("--models-list", default=",".join(MODELS))
    ap.add_argument("--tables", default="main,extract,kmulti,filter,order")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--extra", default="")
    ap.add_argument("--ablation", default="--cost-model roofline --device-profile t4",
                    help='flags of the main table\'s ablation columns ("" = none)')
    ap.add_argument("--write", default="", help="markdown file whose bench:begin/end section gets the tables")
    a = ap.parse_args()
    if not a.write:
        run_tables(a)
        return
    buf = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, x):
            buf.write(x)
            return sys.__stdout__.write(x)

    with contextlib.redirect_stdout(Tee()):
        run_tables(a)
    write_section(a.write, buf.getvalue())


def write_section(path, text):
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    doc = open(path).read() if os.path.exists(path) else f"# Benchmarks\n\n{begin}\n{end}\n"
    if begin not in doc or end not in doc:
        sys.exit(f"{path}: no {begin} ... {end} section")
    head, rest = doc.split(begin, 1)
    tail = rest.split(end, 1)[1]
    with open(path + ".tmp", "w") as f:
        f.write(head + begin + "\n" + text.strip() + "\n" + end + tail)
    os.replace(path + ".tmp", path)


def run_tables(a):
    a.extra = a.extra.split()
    a.ablation = a.ablation.split()
    models = [m for m in a.models_list.split(",") if m]
    for m in models:
        if not os.path.exists(os.path.join(a.models, m + ".onnx")):
            sys.exit(f"missing {m}.onnx in {a.models}: run onnx-tensat-gen {a.models}")
    tables = a.tables.split(",")
    print(f"machine: {os.cpu_count()} cores; command: `{' '.join(sys.argv)}`")
    if "main" in tables:
        table_main(a, models)
    if "extract" in tables:
        table_variants(a, models, "Greedy vs greedy-DAG vs ILP extraction",
                       [("greedy", ["--extract", "greedy"]), ("dag", ["--extract", "dag"]), ("ilp", ["--extract", "ilp"])])
    if "kmulti" in tables:
        table_variants(a, models, "k_multi 0, 1, 2",
                       [("k0", ["--k-multi", "0"]), ("k1", ["--k-multi", "1"]), ("k2", ["--k-multi", "2"])])
    if "filter" in tables:
        table_variants(a, models, "Efficient vs vanilla cycle filtering (k_multi 2)",
                       [("efficient", ["--k-multi", "2", "--cycle-filter", "efficient"]),
                        ("vanilla", ["--k-multi", "2", "--cycle-filter", "vanilla"])])
    if "order" in tables:
        table_variants(a, models, "ILP with and without order constraints (k_multi 1)",
                       [("none", ["--ilp-order", "none"]), ("real", ["--ilp-order", "real"]),
                        ("int", ["--ilp-order", "int"])])
    if "rules" in tables:
        table_rules(a, models)
    if "peers" in tables:
        table_peers(a, models)


if __name__ == "__main__":
    main()
