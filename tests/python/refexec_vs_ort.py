#!/usr/bin/env python3
"""The CPU reference executor (onnx-tensat-exec) agrees with ONNX Runtime on whole models.

For each model: random inputs (seed 1) are written as input_<i>.pb, onnx-tensat-exec runs the
model, its output_<i>.pb are compared with ONNX Runtime's outputs (tensat_testlib.compare).

usage: refexec_vs_ort.py ONNX_TENSAT_EXEC MODEL.onnx... [--max-seconds S]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exec_bin")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--max-seconds", type=float, default=0, help="fail a model whose run takes longer")
    a = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.models:
            ind, outd = os.path.join(tmp, "in"), os.path.join(tmp, "out")
            for d in (ind, outd):
                os.makedirs(d, exist_ok=True)
                for f in os.listdir(d):
                    os.remove(os.path.join(d, f))
            sess = tl.session(m)
            feeds = tl.random_inputs(sess, seed=1)
            for i, inp in enumerate(sess.get_inputs()):
                with open(os.path.join(ind, f"input_{i}.pb"), "wb") as fh:
                    fh.write(numpy_helper.from_array(feeds[inp.name], inp.name).SerializeToString())
            t = time.time()
            p = subprocess.run([a.exec_bin, m, ind, outd], capture_output=True, text=True, timeout=600)
            dt = time.time() - t
            name = os.path.basename(m)
            if p.returncode != 0:
                print(f"FAIL {name}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
                failures += 1
                continue
            t = time.time()
            ref = sess.run(None, feeds)
            dt_ort = time.time() - t
            err = ""
            for i, o in enumerate(sess.get_outputs()):
                tp = onnx.TensorProto()
                with open(os.path.join(outd, f"output_{i}.pb"), "rb") as fh:
                    tp.ParseFromString(fh.read())
                if tp.name != o.name:
                    err = err or f"output_{i}.pb named {tp.name}, expected {o.name}"
                err = err or tl.compare(o.name, ref[i], numpy_helper.to_array(tp))
            if not err and a.max_seconds and dt > a.max_seconds:
                err = f"took {dt:.1f} s (limit {a.max_seconds} s)"
            if err:
                print(f"FAIL {name}: {err}")
                failures += 1
            else:
                print(f"ok   {name}: onnx-tensat-exec {dt:.2f} s ({p.stderr.strip()}), ORT {dt_ort:.2f} s")
    print(f"{len(a.models) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
