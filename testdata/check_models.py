#!/usr/bin/env python3
"""Checks the models written by onnx-tensat-gen with pip's onnx and onnxruntime.

usage: check_models.py DIR [--only NAME,...] [--trace REGEX] [--seed N]

For each DIR/NAME.onnx: onnx.checker.check_model, then one ONNX Runtime run (CPU, graph
optimizations disabled) on random standard-normal inputs; checks that every output has the
declared shape and is finite, and prints each output's mean / std / max |x|.
--trace REGEX also reports the statistics of every intermediate value whose name matches
(used to choose the weight scales, so activations stay O(1)).
"""
import argparse
import re
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

MODELS = ["bert", "nasrnn", "resnext50", "nasneta", "inceptionv3", "squeezenet", "vgg19", "resnet50"]


def dims(vi):
    return [d.dim_value for d in vi.type.tensor_type.shape.dim]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--trace", default="")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    names = args.only.split(",") if args.only else MODELS
    ok = True
    for name in names:
        path = f"{args.dir}/{name}.onnx"
        t0 = time.time()
        onnx.checker.check_model(path)
        model = onnx.load(path)
        declared = {o.name: dims(o) for o in model.graph.output}
        traced = []
        if args.trace:
            inferred = onnx.shape_inference.infer_shapes(model)
            rx = re.compile(args.trace)
            for vi in inferred.graph.value_info:
                if rx.search(vi.name) and vi.name not in declared:
                    model.graph.output.append(vi)
                    traced.append(vi.name)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(args.seed)
        feeds = {i.name: rng.standard_normal(dims(i)).astype(np.float32) for i in model.graph.input}
        t1 = time.time()
        outs = sess.run(None, feeds)
        t2 = time.time()
        print(f"{name}: checker ok, ORT run {t2 - t1:.2f} s (load+check {t1 - t0:.1f} s), "
              f"{len(model.graph.node)} nodes")
        for meta, val in zip(sess.get_outputs(), outs):
            bad = []
            if meta.name in declared and list(val.shape) != declared[meta.name]:
                bad.append(f"shape {list(val.shape)} != declared {declared[meta.name]}")
            if not np.all(np.isfinite(val)):
                bad.append("non-finite values")
            ok &= not bad
            tag = "  trace " if meta.name in traced else "  output"
            print(f"{tag} {meta.name:40s} {str(list(val.shape)):20s} mean {val.mean():+9.4f} std {val.std():9.4f} "
                  f"max|x| {np.abs(val).max():9.4f} {'FAIL: ' + '; '.join(bad) if bad else ''}")
        sys.stdout.flush()
    print("ALL OK" if ok else "FAILURES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
