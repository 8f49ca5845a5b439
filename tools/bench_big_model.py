#!/usr/bin/env python3
"""Benchmark (not a test): a model just over protobuf's 2 GB limit through onnx-tensat.

Builds x[1,K] -> MatMul(W1[K,K]) -> Relu -> MatMul(W2[K,K+64]) -> y with K = 16384 (about
2.15e9 bytes of float32 weights, just over 2 GiB), saved with external data (onnx's layout,
one data file beside the model). Runs `onnx-tensat IN OUT --report R.json` under
/usr/bin/time, then checks that OUT was written with external data (automatic above 2 GB) and
that ONNX Runtime gives the same output for both models. Prints wall time, peak RSS and the
sizes.

usage: tools/bench_big_model.py --bin build/tools/onnx-tensat [--dir /tmp/big] [--k 16384]
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/tools/onnx-tensat")
    ap.add_argument("--dir", default="/tmp/onnx-tensat-big")
    ap.add_argument("--k", type=int, default=16384)
    a = ap.parse_args()
    k = a.k
    os.makedirs(a.dir, exist_ok=True)
    src = os.path.join(a.dir, "big.onnx")
    out = os.path.join(a.dir, "big.opt.onnx")
    rng = np.random.default_rng(1)
    w1 = (rng.standard_normal((k, k), dtype=np.float32) / np.sqrt(k)).astype(np.float32)
    w2 = (rng.standard_normal((k, k + 64), dtype=np.float32) / np.sqrt(k)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("MatMul", ["r", "w2"], ["y"], name="mm2")],
        "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, k + 64])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save_model(m, src, save_as_external_data=True, all_tensors_to_one_file=True, location="big.onnx.data")
    del m, g
    weight_bytes = w1.nbytes + w2.nbytes
    del w1, w2
    p = subprocess.run(["/usr/bin/time", "-v", a.bin, src, out, "-q", "--report", os.path.join(a.dir, "r.json")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"onnx-tensat exit {p.returncode}: {p.stderr[-2000:]}")
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", p.stderr).group(1)
    rep = json.load(open(os.path.join(a.dir, "r.json")))
    files = sorted(os.listdir(a.dir))
    import onnxruntime as ort
    x = rng.standard_normal((1, k), dtype=np.float32)
    so = ort.SessionOptions()
    ya = ort.InferenceSession(src, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    yb = ort.InferenceSession(out, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    err = float(np.max(np.abs(ya - yb)))
    print(f"weights {weight_bytes / 1e9:.3f} GB; onnx-tensat wall {wall}, peak RSS {rss_kb / 1e6:.2f} GB "
          f"({rss_kb * 1e3 / weight_bytes:.2f}x the weights); external data {rep.get('external_data')}; "
          f"verify {rep['verify']['passed']}; ORT max abs diff {err:.3g}; files {files}")
    sys.exit(0 if err <= 1e-4 and rep.get("external_data") else 1)


if __name__ == "__main__":
    main()
