"""Shared helpers for the ONNX Runtime cross-checks of onnx-tensat."""
from __future__ import annotations

import os
import subprocess
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

ort.set_default_logger_severity(3)

ORT_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8,
    "tensor(bool)": np.bool_,
}


def session(model_path_or_bytes):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    so.intra_op_num_threads = 2
    return ort.InferenceSession(model_path_or_bytes, so, providers=["CPUExecutionProvider"])


def random_inputs(sess, seed=0, shapes=None):
    rng = np.random.default_rng(seed)
    feeds = {}
    for i in sess.get_inputs():
        shape = (shapes or {}).get(i.name) or [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        dt = ORT_TYPES.get(i.type)
        if dt is None:
            raise RuntimeError(f"input {i.name}: unsupported type {i.type}")
        if np.issubdtype(dt, np.floating):
            feeds[i.name] = rng.standard_normal(shape).astype(dt)
        elif dt == np.bool_:
            feeds[i.name] = rng.integers(0, 2, shape).astype(dt)
        else:
            feeds[i.name] = rng.integers(0, 4, shape).astype(dt)
    return feeds


def compare(name, ref, got, rtol=1e-3, atol=1e-4):
    """Compares two output arrays; tolerance scaled to the output's magnitude. Returns an error string or ''."""
    ref = np.asarray(ref)
    got = np.asarray(got)
    if ref.shape != got.shape:
        return f"{name}: shape {got.shape} != {ref.shape}"
    if ref.dtype != got.dtype:
        return f"{name}: dtype {got.dtype} != {ref.dtype}"
    if not np.issubdtype(ref.dtype, np.floating):
        if not np.array_equal(ref, got):
            return f"{name}: values differ"
        return ""
    r = ref.astype(np.float64)
    g = got.astype(np.float64)
    if np.any(np.isnan(r) != np.isnan(g)):
        return f"{name}: NaN pattern differs"
    finite = np.isfinite(r) & np.isfinite(g)
    # NaN positions were compared above (NaN != NaN, so they must not be compared by value);
    # the remaining non-finite values are infinities, which must be equal, sign included.
    inf = ~finite & ~np.isnan(r) & ~np.isnan(g)
    if np.any(r[inf] != g[inf]):
        return f"{name}: inf values differ"
    if not finite.any():
        return ""
    scale = float(np.max(np.abs(r[finite]))) if r[finite].size else 1.0
    err = np.abs(r[finite] - g[finite])
    tol = atol * max(scale, 1.0) + rtol * np.abs(r[finite])
    if np.any(err > tol):
        return f"{name}: max abs err {float(err.max()):.3g} (scale {scale:.3g})"
    return ""


def split_tool_flags(argv):
    """(the script's own arguments, the tool flags after a "--")."""
    if "--" not in argv:
        return list(argv), []
    k = argv.index("--")
    return argv[:k], argv[k + 1:]


def run_tool(binary, src, dst, *extra, timeout=600):
    return subprocess.run([binary, src, dst, "-q", *extra], capture_output=True, text=True, timeout=timeout)


def compare_models(orig, opt, feeds, rtol=1e-3, atol=1e-4):
    s1, s2 = session(orig), session(opt)
    names1 = [o.name for o in s1.get_outputs()]
    names2 = [o.name for o in s2.get_outputs()]
    if names1 != names2:
        return f"output names differ: {names2} vs {names1}"
    in1 = [i.name for i in s1.get_inputs()]
    in2 = [i.name for i in s2.get_inputs()]
    if in1 != in2:
        return f"input names differ: {in2} vs {in1}"
    r1 = s1.run(None, feeds)
    r2 = s2.run(None, feeds)
    for n, a, b in zip(names1, r1, r2):
        e = compare(n, a, b, rtol, atol)
        if e:
            return e
    return ""
