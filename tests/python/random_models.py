#!/usr/bin/env python3
"""Seeded random fuzzer of the whole onnx-tensat pipeline against ONNX Runtime.

Builds COUNT small, well-typed float32 ONNX models with onnx.helper (numpy random weights; model
i is generated from seed SEED + i alone, so every run builds the same models) and runs the tool
on each. The generator aims at the rewrite rules: several convolutions (1x1 / 3x3 / 5x5, "same"
pads, some non-square / even kernels, valid and auto pads, with and without bias, strided,
grouped) or matmuls reading the same tensor, relu / tanh / sigmoid after them, element-wise Add /
Mul between branches (with [C,1,1] / [N] / scalar / computed squeeze-excite broadcasts), Concat
on the channel / feature / batch axis, equal and uneven Split (also at other boundaries than the
Concat before it), Transpose, Reshape, Gemm (transA / transB, alpha / beta), BatchNormalization
after Conv, pools, opaque ops (Softmax, LeakyRelu, Exp, Abs, Sub, Max, ...) in the middle,
several graph outputs, intermediate tensors that are both a graph output and consumed further,
RNN-like cells with weights shared across steps, attention-like products of two activations.

Families: "conv" (NCHW, batch 1, 8..16 spatial, 3..32 channels), "mm" (rank-2 [M,K]
activations), "mm3d" (rank-3 [1,S,K]), "rnn" (unrolled cells, shared weights), "mixed" (conv
trunk -> pooled or reshaped features -> matmul / Gemm head).

For every run: exit 0, the report's verification passed, cost_after <= cost_before, and the ONNX
Runtime outputs of the original and the optimized model agree on random inputs
(tensat_testlib.compare_models, default tolerances). Every model runs with the default flags,
some also with `--k-multi 2`, `--extract greedy` or `--extract dag` (flag_sets()). CI also runs
the REGRESSION_SEEDS / REGRESSION_MODELS below (cases that once failed, with their flags).
One line per run (ok / FAIL with the reason, the seed and a repro); at the end, how many models
the optimizer rewrote (op counts changed; Identity / Dropout removal, BatchNormalization folding
and Flatten -> Reshape not counted). Exit status 1 on any failure.

The seed -> model mapping depends on this generator: after changing it, re-check that every
REGRESSION_SEEDS entry still reproduces its failure (or drop it; the REGRESSION_MODELS are
hand-built and do not depend on it).

usage: random_models.py ONNX_TENSAT [--count N] [--seed S] [--only SEED|NAME[,...]]
                                    [--save-dir DIR] [--size K] [--flags "TOOL FLAGS"]
CI runs the defaults (60 models from seed 20240, plus the regressions); --size (more blocks
per model) and --flags (one run per model with these flags) are for longer manual campaigns.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402
from random_model_gen import Builder, generate  # noqa: E402

DEFAULT_COUNT = 60
DEFAULT_SEED = 20240


# ---- driver ----------------------------------------------------------------------------------
# Import-time normalizations that are not rewrites: Identity / Dropout disappear,
# BatchNormalization folds into the Conv before it, Flatten comes back as a Reshape.
DROPPED = {"Identity", "Dropout", "BatchNormalization"}
RENAMED = {"Flatten": "Reshape"}


def normalized_ops(ops):
    out = {}
    for k, v in ops.items():
        if k not in DROPPED:
            out[RENAMED.get(k, k)] = out.get(RENAMED.get(k, k), 0) + v
    return out


def rewritten(report):
    return normalized_ops(report.get("ops_before", {})) != normalized_ops(report.get("ops_after", {}))


def flag_sets(seed):
    sets = [[]]
    if seed % 3 == 0:
        sets.append(["--k-multi", "2"])
    if seed % 4 == 1:
        sets.append(["--extract", "greedy"])
    if seed % 10 == 7:
        sets.append(["--extract", "dag"])
    return sets


# ---- regressions ------------------------------------------------------------------------------
# Models / seeds that once failed, with the flags that failed (kept as regressions; the CLP abort
# is survived since the ILP runs CBC in a child process, extract/isolated_call.h).

def regression_clp_abort():
    """--cycle-filter none: CBC/CLP aborts in ILP extraction (SIGABRT, ClpNonLinearCost.cpp:1064
    assertion `lowerValue <= upperValue', from CbcModel::branchAndBound ->
    OsiClpSolverInterface::computeLargestAway). Minimized from random seed 500121 (an earlier
    generator); the weights do not matter, only the graph structure."""
    b = Builder(np.random.default_rng(0), 17)
    a = b.input([4, 48], "a")
    c = b.input([1, 4, 8], "c")
    r = b.reshape(b.act(b.matmul(a, b.weight(48, 48)), "sigmoid"), [1, 4, 48])
    y1 = b.act(b.matmul(r, b.weight(48, 8)), "relu")
    y2 = b.act(b.binary("Add", b.matmul(r, b.weight(48, 8)), b.weight(8, prefix="b")), "relu")
    y3 = b.act(c, "relu")
    b.output(b.concat([y1, y2, y3], -1))
    return b.model()


REGRESSION_MODELS = [
    ("clp_abort_cycle_filter_none", "mm3d", regression_clp_abort, [["--cycle-filter", "none"]]),
]
REGRESSION_SEEDS = [  # (seed, flags): random models of this generator that failed
    (800216, ["--cycle-filter", "none"]),  # the CLP abort above (an mm model)
    (800337, ["--cycle-filter", "none"]),  # the CLP abort above (an mm3d model)
]


def check_run(binary, src, tmp, flags, feeds):
    """Runs the tool once; returns (error string or '', report or None)."""
    out = os.path.join(tmp, "out.onnx")
    rep = os.path.join(tmp, "report.json")
    for p in (out, rep):
        if os.path.exists(p):
            os.remove(p)
    try:
        p = tl.run_tool(binary, src, out, "--report", rep, *flags, timeout=120)
    except subprocess.TimeoutExpired:
        return "no answer in 120 s", None
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or [""])[-1][:300]
        how = (f"killed by {signal.Signals(-p.returncode).name}" if p.returncode < 0
               else f"exit {p.returncode}")
        return f"{how}: {msg}", None
    with open(rep) as f:
        r = json.load(f)
    if not r["verify"]["passed"] or r["verify"]["method"] == "off":
        return f"verification failed: {r['verify']}", r
    if r["cost_after"] > r["cost_before"] * (1 + 1e-9):
        return f"cost went up: {r['cost_before']} -> {r['cost_after']}", r
    try:
        err = tl.compare_models(src, out, feeds)
    except Exception as e:
        err = f"{type(e).__name__}: {str(e).strip()[:300]}"
    if err:
        return f"ORT mismatch: {err}", r
    return "", r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--only", help="comma-separated model seeds or regression names to run")
    ap.add_argument("--save-dir", help="keep the generated models here")
    ap.add_argument("--size", type=int, default=1, help="multiply the number of blocks per model")
    ap.add_argument("--flags", default="",
                    help="run each model once, with these tool flags (instead of the CI flag sets)")
    a = ap.parse_args()

    if a.only:
        regs = {r[0]: r for r in REGRESSION_MODELS}
        cases = []
        for x in a.only.split(","):
            if x in regs:
                cases.append((regs[x], None))
            else:  # a regression seed runs with its flags (and the CI flag sets)
                fl = [f for sd, f in REGRESSION_SEEDS if sd == int(x)]
                cases.append((int(x), (flag_sets(int(x)) + fl) if fl else None))
    else:
        cases = [(x, None) for x in range(a.seed, a.seed + a.count)]
        if a.seed == DEFAULT_SEED and a.count == DEFAULT_COUNT:  # what CI runs
            cases += [(sd, [fl]) for sd, fl in REGRESSION_SEEDS]
            cases += [(r, None) for r in REGRESSION_MODELS]
    t0 = time.time()
    failures = 0
    changed = 0
    counted = 0
    runs = 0
    fam_stats = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case, fixed_flags in cases:
            if isinstance(case, tuple):  # a hand-built regression model
                name, fam, build, fixed_flags = case
                label, repro = f"regression {name}", f"random_models.py BIN --only {name}"
                try:
                    m = build()
                except Exception as e:
                    print(f"FAIL {label}: generator: {type(e).__name__}: {e}")
                    failures += 1
                    continue
                seed = 1
            else:
                seed = case
                label, repro = f"seed {seed}", f"random_models.py BIN --only {seed}"
                try:
                    fam, m = generate(seed, a.size)
                except Exception as e:  # a generator bug, not a tool bug
                    print(f"FAIL {label}: generator: {type(e).__name__}: {e}")
                    failures += 1
                    continue
                name = f"random_{seed}"
            src = os.path.join(a.save_dir or tmp, f"{name}.onnx")
            if a.save_dir:
                os.makedirs(a.save_dir, exist_ok=True)
            onnx.save(m, src)
            try:  # the generated model itself must be valid and run
                sess = tl.session(src)
                feeds = tl.random_inputs(sess, seed=seed)
                sess.run(None, feeds)
            except Exception as e:
                print(f"FAIL {label} ({fam}): ONNX Runtime rejects the generated model: {e}")
                failures += 1
                continue
            n_ops = len(m.graph.node)
            model_changed = False
            sets = fixed_flags or ([a.flags.split()] if a.flags else flag_sets(seed))
            for flags in sets:
                runs += 1
                t = time.time()
                err, r = check_run(a.binary, src, tmp, flags, feeds)
                dt = time.time() - t
                tag = " ".join(flags) or "default"
                if err:
                    failures += 1
                    print(f"FAIL {label} ({fam}, {n_ops} nodes, opset {m.opset_import[0].version}, "
                          f"{tag}): {err}  [repro: {repro} --save-dir D; onnx-tensat "
                          f"D/{name}.onnx out.onnx {tag if flags else ''}]")
                    continue
                model_changed = model_changed or rewritten(r)
                delta = ""
                if rewritten(r):
                    delta = ", ops " + ",".join(
                        f"{k}{r['ops_after'].get(k, 0) - r['ops_before'].get(k, 0):+d}"
                        for k in sorted(set(r["ops_before"]) | set(r["ops_after"]))
                        if r["ops_after"].get(k, 0) != r["ops_before"].get(k, 0))
                print(f"ok   {label} ({fam}, {n_ops} nodes, {tag}, {dt:.2f} s, cost "
                      f"{r['cost_before']:.4f} -> {r['cost_after']:.4f}{delta})")
            if fixed_flags is None:  # regressions are not part of the rewrite statistics
                counted += 1
                changed += model_changed
                st = fam_stats.setdefault(fam, [0, 0])
                st[0] += 1
                st[1] += model_changed
    fams = ", ".join(f"{f} {c}/{n}" for f, (n, c) in sorted(fam_stats.items()))
    print(f"{len(cases)} models ({len(cases) - counted} regressions), {runs} runs, {failures} failed; "
          f"random models rewritten (op counts changed): {changed}/{counted} ({fams}); "
          f"{time.time() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
