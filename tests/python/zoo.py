#!/usr/bin/env python3
"""The model zoo (zoo_models.py: PyTorch-style exports) through onnx-tensat.

Every model must import without --input-shape and without onnxsim, optimize with exit 0, pass
onnx-tensat's own verification, and give the same outputs as the original under ONNX Runtime
on random inputs. Where a rewrite should fire, the check says so: the encoder's Q/K/V
projections merge across their bias adds into one product (matmul-merge3 at the default
k_multi 1, pairwise merges over two rounds with --k-multi 2), the MobileNet activations fuse
into the convolutions, the shape chains leave no Shape/Gather/Slice node behind.

usage: zoo.py ONNX_TENSAT [--only NAME,...] [--keep DIR]
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402
import zoo_models  # noqa: E402


def applied(report, prefix):
    """How often rules whose name starts with `prefix` were applied."""
    return sum(v.get("applied", 0) for k, v in report.get("rules_fired", {}).items() if k.startswith(prefix))


def matmul_weight_widths(model):
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return sorted(inits[n.input[1]].shape[-1] for n in model.graph.node
                  if n.op_type in ("MatMul", "Gemm") and n.input[1] in inits)


def ops(model, op):
    return sum(1 for n in model.graph.node if n.op_type == op)


def check_transformer(src, out, report):
    # Default (k_multi 1): matmul-merge3 merges Q, K and V in the first round (matmul-merge
    # alone would merge two of them: the pair's product exists only after that round).
    errs = []
    if applied(report, "matmul-merge3") == 0:
        errs.append("matmul-merge3 was never applied")
    widths = matmul_weight_widths(out)
    if 192 not in widths:
        errs.append(f"Q/K/V not merged into one 64x192 product: weight widths {widths}")
    if ops(out, "MatMul") + ops(out, "Gemm") > ops(src, "MatMul") - 2:
        errs.append("not two products fewer than the original")
    return errs


def check_transformer_k2(src, out, report):
    # k_multi 2: the merged pair merges again with the third: Q, K, V become one 64x192 product
    # (its bias the concatenation of the three).
    # The extraction starts from the k_multi 1 result (added to the e-graph), so it is never
    # worse than k_multi 1.
    errs = []
    widths = matmul_weight_widths(out)
    if 192 not in widths:
        errs.append(f"Q/K/V not merged into one product: weight widths {widths}")
    if ops(out, "MatMul") + ops(out, "Gemm") > ops(src, "MatMul") - 2:
        errs.append("not two products fewer than the original")
    seed = report["extraction"].get("seed_cost")
    if seed is None:
        errs.append("no k_multi 1 seed in the report")
    elif report["cost_extracted"] > seed + 1e-9:
        errs.append(f"worse than the k_multi 1 result: {report['cost_extracted']} > {seed}")
    return errs


def check_no_shape_ops(src, out, report):
    left = [n.op_type for n in out.graph.node if n.op_type in ("Shape", "Gather", "Unsqueeze", "Slice", "Constant")]
    return [f"shape computations left in the output: {left}"] if left else []


def check_shufflenet(src, out, report):
    errs = check_no_shape_ops(src, out, report)
    if report.get("opaque_nodes", -1) != 0:
        errs.append(f"{report.get('opaque_nodes')} opaque nodes: the chunks and shuffles should all lower")
    return errs


def check_mobilenet(src, out, report):
    errs = []
    if applied(report, "conv-act") == 0:
        errs.append("conv-act never applied: the activations did not fuse")
    if report.get("opaque_nodes", -1) != 0:
        errs.append(f"{report.get('opaque_nodes')} opaque nodes: Clip / LeakyRelu should lower")
    act = "Clip" if ops(src, "Clip") else "LeakyRelu"
    if ops(out, act) != ops(src, act):
        errs.append(f"{ops(out, act)} {act} nodes written back, the original has {ops(src, act)}")
    return errs


def check_dense(src, out, report):
    # Never predicted slower (the pipeline keeps the original otherwise) and verified.
    if report["cost_after"] > report["cost_before"] + 1e-12:
        return [f"cost went up: {report['cost_before']} -> {report['cost_after']}"]
    return []


CHECKS = {
    "shape_chain": check_no_shape_ops,
    "shufflenet": check_shufflenet,
    "transformer_encoder": check_transformer,
    "transformer_encoder_k2": check_transformer_k2,
    "dense_block": check_dense,
    "mobilenet_relu6": check_mobilenet,
    "mobilenet_leaky": check_mobilenet,
}


# Runs with flags beyond the defaults: (model, flags).
VARIANTS = {"transformer_encoder_k2": ("transformer_encoder", ["--k-multi", "2"])}


def run_one(binary, name, tmp):
    model, flags = VARIANTS.get(name, (name, []))
    build = zoo_models.ZOO[model]
    src = os.path.join(tmp, name + ".onnx")
    dst = os.path.join(tmp, name + ".opt.onnx")
    rep_path = os.path.join(tmp, name + ".json")
    onnx.save(build(0), src)
    p = tl.run_tool(binary, src, dst, "--report", rep_path, *flags, timeout=300)
    if p.returncode != 0:
        return [f"exit {p.returncode}: {p.stderr.strip()[-500:]}"]
    with open(rep_path) as f:
        report = json.load(f)
    errs = []
    if not report.get("verify", {}).get("passed"):
        errs.append(f"verification did not pass: {report.get('verify')}")
    feeds = tl.random_inputs(tl.session(src), seed=7)
    e = tl.compare_models(src, dst, feeds)
    if e:
        errs.append("ONNX Runtime: " + e)
    errs += CHECKS[name](onnx.load(src), onnx.load(dst), report)
    print(f"{name}: ops {sum(report['ops_before'].values())} -> {sum(report['ops_after'].values())}, "
          f"cost {report['cost_before']:.4f} -> {report['cost_after']:.4f} ms ({report['cost_model']}), "
          f"opaque {report['opaque_nodes']}{'' if not errs else ', FAILED'}", flush=True)
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", default="")
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n] or list(zoo_models.ZOO) + list(VARIANTS)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = a.keep or tmp
        os.makedirs(work, exist_ok=True)
        for name in names:
            errs = run_one(a.binary, name, work)
            for e in errs:
                print(f"FAIL {name}: {e}")
            failed += bool(errs)
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
