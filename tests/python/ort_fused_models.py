#!/usr/bin/env python3
"""Models that ONNX Runtime's graph optimizations already went over: its fused operators
(domain com.microsoft: FusedConv, FusedGemm, FusedMatMul, Gelu, BiasGelu, FastGelu, QuickGelu,
SkipLayerNormalization, EmbedLayerNormalization; SimplifiedLayerNormalization, which it writes
in the ONNX domain) import as opaque nodes with types
(importer/shape_fallback.h), and what is around them is still optimized.

Each model is built with onnx.helper, then optimized by ONNX Runtime at its "extended" level
(CPU provider) and saved, as a user would with SessionOptions.optimized_model_filepath. Two
more hold operators written directly: BiasGelu, FastGelu, QuickGelu and SkipLayerNormalization
with its sum output, and EmbedLayerNormalization, which its transformer optimizer writes (that
optimizer needs sympy, which the tests do not install). The test requires:
  - the saved model holds the com.microsoft operators the case expects (else the case tests
    nothing: a newer ONNX Runtime that fuses differently fails here, not silently);
  - onnx-tensat exits 0 with verification passed (or the input written back unchanged);
  - the written model agrees with the saved one under ONNX Runtime on random inputs, and the
    type it declares for each fused operator's output is the one ONNX Runtime computes;
  - where the case says so, the rewrites happened (fewer MatMul / Conv nodes than before).
With a symbolic batch and sequence, the transformer block keeps them
(exporter/dim_labels_opaque.cpp has rules for the element-wise fused operators,
SkipLayerNormalization, FusedMatMul with its transposes, FusedGemm and FusedConv), declares its
fused outputs as ONNX Runtime computes them and agrees with it at other sizes; so do the conv
nets with a symbolic batch, height and width. A SkipLayerNormalization with a fixed skip and a
FusedConv whose summand has another window are written at the fixed shapes, and the report
says so. A model with a fused operator the importer does not type (Attention) is
refused with exit 2 and a message naming the node and the domain.

usage: ort_fused_models.py ONNX_TENSAT [--filter SUBSTR]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402

F = TensorProto.FLOAT
RNG = np.random.default_rng(77)


def vi(name, shape, et=F):
    return helper.make_tensor_value_info(name, et, shape)


def w(name, *shape, scale=0.2):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def model(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def contrib_model(name, nodes, inputs, outputs, inits):
    """A model that also imports ONNX Runtime's domain (its operators written directly)."""
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def gelu_erf(x, y, p):
    """GELU as PyTorch exports it (x * 0.5 * (1 + erf(x / sqrt 2))): ONNX Runtime fuses it."""
    return [
        helper.make_node("Div", [x, p + "_sqrt2"], [p + "_d"]),
        helper.make_node("Erf", [p + "_d"], [p + "_e"]),
        helper.make_node("Add", [p + "_e", p + "_one"], [p + "_a"]),
        helper.make_node("Mul", [x, p + "_a"], [p + "_m"]),
        helper.make_node("Mul", [p + "_m", p + "_half"], [y]),
    ], [numpy_helper.from_array(np.array(np.sqrt(2.0), np.float32), p + "_sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), p + "_one"),
        numpy_helper.from_array(np.array(0.5, np.float32), p + "_half")]


def transformer_block():
    """Attention with Q/K/V projections of one input (onnx-tensat merges them), K transposed
    into the score product and a scale (FusedMatMul), a residual Add before LayerNormalization
    (SkipLayerNormalization) and an MLP with a bias before GELU (BiasGelu)."""
    S, D, H = 16, 32, 64
    nodes, inits = [], [w("wq", D, D), w("wk", D, D), w("wv", D, D), w("wo", D, D), w("w1", D, H), w("w2", H, D),
                        w("b1", H), numpy_helper.from_array(np.ones(D, np.float32), "gamma"),
                        numpy_helper.from_array(np.zeros(D, np.float32), "beta"),
                        numpy_helper.from_array(np.array(1.0 / np.sqrt(D), np.float32), "scale")]
    nodes += [helper.make_node("MatMul", ["x", "wq"], ["q"]), helper.make_node("MatMul", ["x", "wk"], ["k"]),
              helper.make_node("MatMul", ["x", "wv"], ["v"]),
              helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
              helper.make_node("MatMul", ["q", "kt"], ["s0"]), helper.make_node("Mul", ["s0", "scale"], ["s"]),
              helper.make_node("Softmax", ["s"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["ctx"]),
              helper.make_node("MatMul", ["ctx", "wo"], ["o"]), helper.make_node("Add", ["o", "x"], ["r"]),
              helper.make_node("LayerNormalization", ["r", "gamma", "beta"], ["n"], axis=-1, epsilon=1e-5),
              helper.make_node("MatMul", ["n", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"])]
    g_nodes, g_inits = gelu_erf("h1", "h2", "g")
    nodes += g_nodes
    inits += g_inits
    nodes += [helper.make_node("MatMul", ["h2", "w2"], ["y"])]
    return model("transformer_block", nodes, [vi("x", [2, S, D])], [vi("y", [2, S, D])], inits)


def conv_stem():
    """x -> a padded Conv with a ReLU (FusedConv) -> two Convs of it added (onnx-tensat merges
    them: d) -> a strided Conv with a ReLU (e); weights c1-c3, and c4 (stride 2, 2x2)."""
    return [
        helper.make_node("Conv", ["x", "c1"], ["a0"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["a0"], ["a"]),
        helper.make_node("Conv", ["a", "c2"], ["b"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "c3"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["b", "c"], ["d"]),
        helper.make_node("Conv", ["d", "c4"], ["e0"], strides=[2, 2]), helper.make_node("Relu", ["e0"], ["e"]),
    ]


def conv_net():
    """Convolutions with a ReLU (ONNX Runtime makes them FusedConv) and, on the same input,
    two without an activation whose sum onnx-tensat can rewrite; a Gemm with a ReLU
    (FusedGemm) and a GELU head."""
    nodes = conv_stem() + [
        helper.make_node("Flatten", ["e"], ["f"]), helper.make_node("Gemm", ["f", "m1", "bm1"], ["h0"]),
        helper.make_node("Relu", ["h0"], ["h"]), helper.make_node("MatMul", ["h", "m2"], ["g0"]),
    ]
    g_nodes, g_inits = gelu_erf("g0", "y", "g")
    nodes += g_nodes
    inits = [w("c1", 16, 8, 3, 3), w("c2", 16, 16, 3, 3), w("c3", 16, 16, 3, 3), w("c4", 8, 16, 2, 2),
             w("m1", 8 * 5 * 5, 24), w("bm1", 24), w("m2", 24, 10)] + g_inits
    return model("conv_net", nodes, [vi("x", [1, 8, 10, 10])], [vi("y", [1, 10])], inits)


def rms_block():
    """An RMS normalization as Llama's is exported (x / sqrt(mean(x^2) + eps) * g: ONNX Runtime
    makes it SimplifiedLayerNormalization, which it writes in the ONNX domain), then two
    projections of it for onnx-tensat to merge."""
    S, D = 6, 16
    nodes = [helper.make_node("Pow", ["x", "two"], ["p"]), helper.make_node("ReduceMean", ["p"], ["m"], axes=[-1]),
             helper.make_node("Add", ["m", "eps"], ["a"]), helper.make_node("Sqrt", ["a"], ["s"]),
             helper.make_node("Div", ["x", "s"], ["d"]), helper.make_node("Mul", ["d", "g"], ["n"]),
             helper.make_node("MatMul", ["n", "w1"], ["q"]), helper.make_node("MatMul", ["n", "w2"], ["k"]),
             helper.make_node("Add", ["q", "k"], ["y"])]
    inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-6, np.float32), "eps"), w("g", D), w("w1", D, D), w("w2", D, D)]
    return model("rms_block", nodes, [vi("x", [2, S, D])], [vi("y", [2, S, D])], inits)


def written_fused():
    """ONNX Runtime's fused operators written directly (BiasGelu, FastGelu, QuickGelu,
    SkipLayerNormalization with its sum output), around two projections of one input for
    onnx-tensat to merge."""
    S, D, H = 8, 16, 32
    c = "com.microsoft"
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["a"]), helper.make_node("MatMul", ["x", "w2"], ["b"]),
        helper.make_node("BiasGelu", ["a", "b1"], ["ga"], domain=c),
        helper.make_node("FastGelu", ["b", "b2"], ["gb"], domain=c),
        helper.make_node("QuickGelu", ["gb"], ["qb"], domain=c, alpha=1.702),
        helper.make_node("MatMul", ["ga", "w3"], ["p"]), helper.make_node("MatMul", ["qb", "w4"], ["q"]),
        helper.make_node("Add", ["p", "q"], ["r"]),
        helper.make_node("SkipLayerNormalization", ["r", "x", "gamma", "beta"], ["n", "", "", "sum"], domain=c,
                         epsilon=1e-5),
        helper.make_node("MatMul", ["n", "w5"], ["y0"]), helper.make_node("Add", ["y0", "sum"], ["y"]),
    ]
    inits = [w("w1", D, H), w("w2", D, H), w("b1", H), w("b2", H), w("w3", H, D), w("w4", H, D), w("w5", D, D),
             numpy_helper.from_array(np.ones(D, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(D, np.float32), "beta")]
    return contrib_model("written_fused", nodes, [vi("x", [2, S, D])], [vi("y", [2, S, D])], inits)


def embedding_block():
    """EmbedLayerNormalization (as the transformer optimizer writes it for BERT-like models,
    its int32 mask_index output unread) and two projections of its output."""
    V, S, D = 30, 7, 16
    c = "com.microsoft"
    inits = [w("word", V, D), w("pos", S, D), w("segemb", 2, D), numpy_helper.from_array(np.ones(D, np.float32), "g"),
             numpy_helper.from_array(np.zeros(D, np.float32), "b"), w("w1", D, D), w("w2", D, D)]
    nodes = [helper.make_node("EmbedLayerNormalization", ["ids", "segs", "word", "pos", "segemb", "g", "b"],
                              ["e", "mask_index"], domain=c, epsilon=1e-5),
             helper.make_node("MatMul", ["e", "w1"], ["p"]), helper.make_node("MatMul", ["e", "w2"], ["q"]),
             helper.make_node("Tanh", ["p"], ["tp"]), helper.make_node("Mul", ["tp", "q"], ["y"])]
    ids = helper.make_tensor_value_info("ids", TensorProto.INT32, [1, S])
    segs = helper.make_tensor_value_info("segs", TensorProto.INT32, [1, S])
    return contrib_model("embedding_block", nodes, [ids, segs], [vi("y", [1, S, D])], inits)


def attention(path):
    """Attention, which the importer does not type."""
    S, D = 7, 16
    inits = [w("wqkv", D, 3 * D), w("bqkv", 3 * D)]
    nodes = [helper.make_node("Attention", ["x", "wqkv", "bqkv"], ["a"], domain="com.microsoft", num_heads=2),
             helper.make_node("Relu", ["a"], ["y"])]
    onnx.save(contrib_model("attention", nodes, [vi("x", [1, S, D])], [vi("y", [1, S, D])], inits), path)


# name -> (builder, how ONNX Runtime optimizes it (None: not at all), the com.microsoft
# operators the saved model must hold, ops that must be fewer in onnx-tensat's output)
CASES = {
    "transformer_block": (transformer_block, "extended", {"FusedMatMul", "SkipLayerNormalization", "Gelu"},
                          {"MatMul"}),
    "conv_net": (conv_net, "extended", {"FusedConv", "FusedGemm", "Gelu"}, {"Conv"}),
    "rms_block": (rms_block, "extended", {"SimplifiedLayerNormalization"}, {"MatMul"}),
    "written_fused": (written_fused, None, {"BiasGelu", "FastGelu", "QuickGelu", "SkipLayerNormalization"},
                      {"MatMul"}),
    "embedding_block": (embedding_block, None, {"EmbedLayerNormalization"}, {"MatMul"}),
}


def ort_optimized(m, how, path):
    """`m` as saved by ONNX Runtime's session at the extended level ("extended"), or as it is
    (None), at `path`."""
    if how is None:
        onnx.save(m, path)
        return m
    src = path + ".in.onnx"
    onnx.save(m, src)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = path
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    return onnx.load(path)


def counts(m):
    return collections.Counter((n.domain or "") + ":" + n.op_type for n in m.graph.node)


# ONNX Runtime's operators that it writes in the ONNX domain.
ORT_OPS_IN_ONNX_DOMAIN = {"SimplifiedLayerNormalization"}


def ort_key(op):
    """counts()'s key of one of ONNX Runtime's operators."""
    return (":" if op in ORT_OPS_IN_ONNX_DOMAIN else "com.microsoft:") + op


def ort_op(n):
    return n.domain == "com.microsoft" or (n.domain in ("", "ai.onnx") and n.op_type in ORT_OPS_IN_ONNX_DOMAIN)


def declared_types_match(src, dst, feeds, bindings=None):
    """Every output of a com.microsoft node of the written model `dst` has the type the importer
    gave it (its value_info, or the graph output) equal to what ONNX Runtime computes for it in
    `src` on `feeds`; symbolic dimensions are taken at `bindings` (one not there, e.g. a
    product, is not compared). A wrong type need not change the model's outputs (a broadcast,
    a consumer that then stays opaque), so the outputs' comparison alone would not see it.
    Returns the mismatches and how many outputs were compared."""
    out = onnx.load(dst)
    declared = {v.name: v.type.tensor_type for v in list(out.graph.value_info) + list(out.graph.output)}
    names = [o for n in out.graph.node if ort_op(n) for o in n.output if o]
    probe = onnx.load(src)
    present = {o.name for o in probe.graph.output}
    for name in names:
        if name not in present:
            probe.graph.output.append(onnx.ValueInfoProto(name=name))
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    bad = []
    for name in names:
        t, want = declared.get(name), got[name]
        if t is None:
            bad.append(f"{name}: no declared type")
            continue
        dims = [d.dim_value if d.HasField("dim_value") else (bindings or {}).get(d.dim_param) for d in t.shape.dim]
        elem = onnx.helper.np_dtype_to_tensor_dtype(want.dtype)
        if t.elem_type != elem or len(dims) != want.ndim or any(d is not None and d != v for d, v in
                                                                  zip(dims, want.shape)):
            bad.append(f"{name}: declared {t.elem_type} {dims}, ONNX Runtime computes {elem} {list(want.shape)}")
    return bad, len(names)


def with_symbolic(m, names, out_names=None):
    """`m` with the first len(names) dimensions of its inputs symbolic (None: stays fixed), and
    of its outputs those of `out_names` (default: `names`)."""
    for vs, ns in ((m.graph.input, names), (m.graph.output, names if out_names is None else out_names)):
        for v in vs:
            for d, name in zip(v.type.tensor_type.shape.dim, ns):
                if name is not None:
                    d.dim_param = name
    return m


def residual_conv_net():
    """Convolutions over a symbolic height and width: a padded one with a ReLU (FusedConv,
    keeps the size), two on one input for onnx-tensat to merge, then a strided FusedConv and a
    plain strided Conv with the same window whose sum is pooled: their outputs must get one
    label. A Gemm with a ReLU (FusedGemm) on the pooled features."""
    nodes = conv_stem() + [
        helper.make_node("Conv", ["d", "c5"], ["f"], strides=[2, 2]),
        helper.make_node("Add", ["e", "f"], ["g0"]), helper.make_node("Relu", ["g0"], ["g"]),
        helper.make_node("GlobalAveragePool", ["g"], ["p"]), helper.make_node("Flatten", ["p"], ["q"]),
        helper.make_node("Gemm", ["q", "m1", "bm1"], ["h0"]), helper.make_node("Relu", ["h0"], ["y"]),
    ]
    inits = [w("c1", 16, 8, 3, 3), w("c2", 16, 16, 3, 3), w("c3", 16, 16, 3, 3), w("c4", 16, 16, 2, 2),
             w("c5", 16, 16, 2, 2), w("m1", 16, 10), w("bm1", 10)]
    return model("residual_conv_net", nodes, [vi("x", [1, 8, 10, 10])], [vi("y", [1, 10])], inits)


def fused_conv_sum(z_window):
    """FusedConv (written directly) whose summand Z is a plain strided Conv of the same input
    with the window `z_window` (kernel, pads); its own window is 2x2, stride 2, no padding. Two
    convolutions of its output for onnx-tensat to merge, then pooled."""
    k, pad = z_window
    c = "com.microsoft"
    nodes = [
        helper.make_node("Conv", ["x", "c1"], ["z"], strides=[2, 2], pads=[pad] * 4),
        helper.make_node("FusedConv", ["x", "c2", "b2", "z"], ["a"], domain=c, strides=[2, 2], activation="Relu"),
        helper.make_node("Conv", ["a", "c3"], ["p"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "c4"], ["q"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["p", "q"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["s"]), helper.make_node("Flatten", ["s"], ["y"]),
    ]
    inits = [w("c1", 16, 8, k, k), w("c2", 16, 8, 2, 2), w("b2", 16), w("c3", 16, 16, 3, 3), w("c4", 16, 16, 3, 3)]
    return contrib_model(f"fused_conv_sum_{k}_{pad}", nodes, [vi("x", [1, 8, 10, 10])], [vi("y", [1, 16])], inits)


def fixed_skip():
    """SkipLayerNormalization whose skip is a fixed [6, 8] weight: a symbolic sequence length
    cannot pass it (ONNX Runtime refuses other lengths)."""
    c = "com.microsoft"
    nodes = [helper.make_node("SkipLayerNormalization", ["x", "skip", "g", "b"], ["n"], domain=c, epsilon=1e-5),
             helper.make_node("MatMul", ["n", "w1"], ["p"]), helper.make_node("MatMul", ["n", "w2"], ["q"]),
             helper.make_node("Tanh", ["p"], ["tp"]), helper.make_node("Mul", ["tp", "q"], ["y"])]
    inits = [w("skip", 6, 8), numpy_helper.from_array(np.ones(8, np.float32), "g"),
             numpy_helper.from_array(np.zeros(8, np.float32), "b"), w("w1", 8, 8), w("w2", 8, 8)]
    return contrib_model("fixed_skip", nodes, [vi("x", [2, 6, 8])], [vi("y", [2, 6, 8])], inits)


def symbolic_cases(tool, tmp, failures):
    """With symbolic dimensions: the transformer block (batch and sequence symbolic; ONNX
    Runtime writes a FusedMatMul with a transposed operand, SkipLayerNormalization, BiasGelu)
    keeps them, declares its fused outputs' dimensions as ONNX Runtime computes them, and agrees
    with it at other sizes. So do the conv nets (FusedConv, FusedGemm) with a symbolic batch, or
    batch, height and width (a strided FusedConv and a strided Conv with the same window get one
    label; a FusedConv's summand Z with the same window too). A SkipLayerNormalization whose
    fixed skip meets the symbolic sequence, and a FusedConv whose Z has another window (its
    size differs at odd heights), are written at the fixed shapes, naming the node."""
    hw = ["batch", None, "h", "w"]
    # (name, builder, symbolic input dimensions (None: fixed), of the output, ONNX Runtime's
    # optimization, --input-shape, kept, else the operator the reason names)
    cases = (("transformer_block", transformer_block, ["batch", "seq"], None, "extended", "x:2x16x32", True, None),
             ("conv_net", conv_net, ["batch"], None, "extended", "x:1x8x10x10", True, None),
             ("rms_block", rms_block, ["batch", "seq"], None, "extended", "x:2x6x16", True, None),
             ("residual_conv_net", residual_conv_net, hw, ["batch"], "extended", "x:1x8x10x10", True, None),
             ("fused_conv_sum", lambda: fused_conv_sum((2, 0)), hw, ["batch"], None, "x:1x8x10x10", True, None),
             ("fused_conv_other_sum", lambda: fused_conv_sum((3, 1)), hw, ["batch"], None, "x:1x8x10x10", False,
              "FusedConv"),
             ("fixed_skip", fixed_skip, ["batch", "seq"], None, "extended", "x:2x6x8", False,
              "SkipLayerNormalization"))
    for name, build, names, out_names, how, shape, keep, stopper in cases:
        src = os.path.join(tmp, name + ".sym.onnx")
        dst = os.path.join(tmp, name + ".sym.opt.onnx")
        rep = os.path.join(tmp, name + ".sym.json")
        saved = ort_optimized(with_symbolic(build(), names, out_names), how, src)
        fused = collections.Counter(n.op_type for n in saved.graph.node if n.domain == "com.microsoft")
        if "conv" in name and not fused["FusedConv"]:
            failures.append(f"{name} (symbolic): no FusedConv in the saved model ({dict(fused)})")
            continue
        if name == "transformer_block":
            fused = {n.op_type: n for n in saved.graph.node if n.domain == "com.microsoft"}
            trans = fused.get("FusedMatMul") and any(a.name in ("transA", "transB") and a.i for a in
                                                       fused["FusedMatMul"].attribute)
            if not trans or "SkipLayerNormalization" not in fused:
                failures.append(f"{name} (symbolic): ONNX Runtime wrote {sorted(fused)}, not a transposing "
                                "FusedMatMul and SkipLayerNormalization")
                continue
        p = tl.run_tool(tool, src, dst, "--input-shape", shape, "--report", rep)
        if p.returncode != 0:
            failures.append(f"{name} (symbolic): exit {p.returncode}: {p.stderr.strip()[-600:]}")
            continue
        sym = json.load(open(rep)).get("symbolic_dims", {})
        if keep and not sym.get("kept"):
            failures.append(f"{name} (symbolic): not kept: {sym}")
        if not keep and (sym.get("kept") or f"({stopper})" not in sym.get("fixed_reason", "")):
            failures.append(f"{name} (symbolic): expected the fixed shapes at its {stopper}: {sym}")
        dims = [int(d) for d in shape.split(":")[1].split("x")]
        sizes = [dims]
        if sym.get("kept"):  # (odd and even heights: a strided window rounds them differently)
            sizes.append([d + 1 if k < len(names) and names[k] else d for k, d in enumerate(dims)])
            if "conv" in name:
                sizes.append([d + 2 * k + 2 if k < len(names) and names[k] else d for k, d in enumerate(dims)])
        for size in sizes:
            x = np.random.default_rng(size[0]).standard_normal(size).astype(np.float32)
            err = tl.compare_models(src, dst, {"x": x})
            if err:
                failures.append(f"{name} (symbolic, x {size}): {err}")
            if sym.get("kept"):
                bad, _ = declared_types_match(src, dst, {"x": x}, dict(zip(names, size)))
                failures += [f"{name} (symbolic, x {size}): {b}" for b in bad]
        print(f"{name} (symbolic): {'kept' if sym.get('kept') else sym.get('fixed_reason', '')[:120]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (build, how, contrib, fewer) in CASES.items():
            if a.filter not in name:
                continue
            src = os.path.join(tmp, name + ".onnx")
            dst = os.path.join(tmp, name + ".opt.onnx")
            rep = os.path.join(tmp, name + ".json")
            saved = ort_optimized(build(), how, src)
            before = counts(saved)
            missing = {op for op in contrib if before[ort_key(op)] == 0}
            if missing:
                failures.append(f"{name}: ONNX Runtime {ort.__version__} wrote no {sorted(missing)} "
                                f"(its operators: {dict(before)})")
                continue
            p = tl.run_tool(a.tool, src, dst, "--verify", "cpu", "--report", rep)
            if p.returncode != 0:
                failures.append(f"{name}: exit {p.returncode}: {p.stderr.strip()[-600:]}")
                continue
            report = json.load(open(rep))
            ver = report.get("verify", {})
            after = counts(onnx.load(dst))
            if not report.get("kept_original") and ver.get("passed") is not True:
                failures.append(f"{name}: verification did not pass: {ver}")
            for op in fewer:
                if after[":" + op] >= before[":" + op]:
                    failures.append(f"{name}: {op} not rewritten ({before[':' + op]} -> {after[':' + op]})")
            for op in contrib:
                if after[ort_key(op)] != before[ort_key(op)]:
                    failures.append(f"{name}: {ort_key(op)} {before[ort_key(op)]} -> "
                                    f"{after[ort_key(op)]} (opaque nodes are kept as written)")
            sess = tl.session(src)
            for seed in (0, 1):
                feeds = tl.random_inputs(sess, seed=seed)
                for k, v in feeds.items():  # token and segment ids: valid rows of every table
                    if np.issubdtype(v.dtype, np.integer):
                        feeds[k] = np.random.default_rng(seed).integers(0, 2, v.shape).astype(v.dtype)
                err = tl.compare_models(src, dst, feeds)
                if err:
                    failures.append(f"{name}: seed {seed}: {err}")
            bad, compared = declared_types_match(src, dst, feeds)
            failures += [f"{name}: {b}" for b in bad]
            if compared == 0:
                failures.append(f"{name}: no com.microsoft output in the written model to compare")
            print(f"{name}: {dict(before)} -> {dict(after)}")
        if a.filter in "symbolic":
            symbolic_cases(a.tool, tmp, failures)
        if a.filter in "attention":
            src = os.path.join(tmp, "attention.onnx")
            attention(src)
            p = tl.run_tool(a.tool, src, os.path.join(tmp, "attention.opt.onnx"))
            msg = p.stderr
            if p.returncode != 2 or "com.microsoft:Attention" not in msg or "domain 'com.microsoft'" not in msg:
                failures.append(f"attention: expected exit 2 naming the node and its domain, got {p.returncode}: {msg}")
            else:
                print("attention: refused:", msg.strip()[-200:])
    for f in failures:
        print("FAIL", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
