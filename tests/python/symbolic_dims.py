#!/usr/bin/env python3
"""Symbolic input dimensions: a model exported with a dynamic batch (or sequence) is optimized
at the --input-shape values and written back with the symbolic dimensions its inputs declare,
checked by the tool at twice their values plus one too; where it cannot keep them it says why and
writes the fixed shapes. Each output is compared with its input under ONNX Runtime at several
values of the symbolic dimensions.

1. A small CNN (two convolutions reading one input, a Flatten-style Reshape whose target
   PyTorch computes from Shape) with a dynamic batch: kept; equal at batch 1, 2, 3 and 7.
2. Two symbolic dimensions (batch and sequence) through MatMul, Softmax and ReduceMean: kept.
3. A constant computed from the batch (Range over Shape, folded at the fixed shape): written as
   its computation, kept at batch 1 (where the folded [[0]] broadcasts like a bias) and 4.
   One whose dimension follows no input's (2N + 1): the fixed shapes, with the reason; so do
   sizes that agree with a symbol or a constant at some values only (Min(S, 4), a ceil(S / 8)
   equal to N at S = 8N, a Slice to Min(S, 8), a reshape to [2S, 8N] that at N = 2S looks
   like [N, 16S] at twice the sizes too, a Slice from Max(S, 50) - 42, a chunk size from
   Min(S / 18, 1)).
   Position embeddings gathered at positions sliced to the sequence length, with token ids
   viewed by an int64 Reshape (BERT as the TorchScript exporter writes it), and tokens
   flattened to [N*S, 16] and back at batch 1 (GPT-2's Conv1D): kept.
4. A Reshape that puts the batch second ([1, N, 16]), which at batch 1 looks like a copy of the
   first axis: the check at twice the batch plus one fails, and the fixed shapes are written instead.
   Likewise a reshape of [N, S, 8] to [S, N, 8] fixed at N = S: the check takes N and S to
   different values (7 and 8).
   An --input-shape that changes a fixed dimension the input declares: the fixed shapes. So do
   what the import resolves at the fixed size (a Slice that covers the axis there, a Clip bound
   from the sequence length, SAME padding with a stride).
5. --fixed-shapes and --verify off: the fixed shapes, with the reason.

usage: symbolic_dims.py ONNX_TENSAT
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402

RNG = np.random.default_rng(7)


def weight(name, *shape):
    return numpy_helper.from_array((RNG.standard_normal(shape) * 0.3).astype(np.float32), name)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(nodes, inputs, outputs, inits, path, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def cnn(path, flatten=True):
    """Conv(x, w1), Conv(x, w2) -> Relu -> Add -> Reshape(Concat(Shape[0], -1)) -> MatMul
    (without flatten: the sum is the output)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10] if flatten else ["N", 8, 8, 8])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Add", ["r1", "r2"], ["s" if flatten else "y"]),
    ]
    inits = [weight("w1", 8, 3, 3, 3), weight("b1", 8), weight("w2", 8, 3, 3, 3), weight("b2", 8)]
    if flatten:
        nodes += [
            helper.make_node("Shape", ["s"], ["shp"]),
            helper.make_node("Gather", ["shp", "zero"], ["n"], axis=0),
            helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
            helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
            helper.make_node("Reshape", ["s", "target"], ["flat"]),
            helper.make_node("MatMul", ["flat", "wf"], ["y"]),
        ]
        inits += [weight("wf", 8 * 8 * 8, 10), i64("zero", 0), i64("axes0", [0]), i64("minus1", [-1])]
    save(nodes, [x], [y], inits, path)


def conv1d(path):
    """1-D convolutions (opaque) over a symbolic length L: one that keeps it, then two strided
    ones with the same window whose sum needs them to have one length; two projections of the
    result for onnx-tensat to merge."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, "L"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "M", 6])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c0"], pads=[1, 1]),
        helper.make_node("Relu", ["c0"], ["c"]),
        helper.make_node("Conv", ["c", "w2"], ["d"], strides=[2]),
        helper.make_node("Conv", ["c", "w3"], ["e"], strides=[2]),
        helper.make_node("Add", ["d", "e"], ["f"]),
        helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["t", "m1"], ["p"]),
        helper.make_node("MatMul", ["t", "m2"], ["q"]),
        helper.make_node("Add", ["p", "q"], ["y"]),
    ]
    inits = [weight("w1", 8, 4, 3), weight("b1", 8), weight("w2", 8, 8, 4), weight("w3", 8, 8, 4),
             weight("m1", 8, 6), weight("m2", 8, 6)]
    save(nodes, [x], [y], inits, path)


def window_names(path):
    """Twice a strided window over H (Conv, then Tile) and a strided window over 2H (Tile, then
    Conv), in that order: their label names are both "2*H_w1s2p2", but their sizes agree at odd
    H only (a review's model; the labels merged them and the rewritten model failed at even H)."""
    reps = numpy_helper.from_array(np.array([1, 1, 2, 1], np.int64), "reps")
    ca = dict(kernel_shape=[2, 1], strides=[2, 1], pads=[1, 0, 1, 0])
    cb = dict(kernel_shape=[1, 1], strides=[2, 1])
    nodes = [helper.make_node("Conv", ["x", "wb"], ["b0"], **ca), helper.make_node("Tile", ["b0", "reps"], ["tb"]),
             helper.make_node("Conv", ["tb", "wb2", "ba2"], ["yb"], **cb),
             helper.make_node("Tile", ["x", "reps"], ["ta"]), helper.make_node("Conv", ["ta", "wa"], ["a1"], **ca),
             helper.make_node("Conv", ["a1", "wa2"], ["ya"], **cb), helper.make_node("Add", ["ya", "yb"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, "H", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8, None, 8])
    inits = [reps, weight("wa", 8, 4, 2, 1), weight("wb", 8, 4, 2, 1), weight("wa2", 8, 8, 1, 1), weight("ba2", 8),
             weight("wb2", 8, 8, 1, 1)]
    save(nodes, [x], [y], inits, path)


def unnamed_beside_named(path):
    """x [?, 16] (an unnamed dimension, which the tool calls x_dim0) beside y ["x_dim0", 16]: two
    sizes, though the made-up name is y's symbol (a review's model). y's shape is read at run
    time (ConstantOfShape(Shape(y))); x's products are merged."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["x_dim0", 16])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None, 16]) for n in ("ra", "rb", "o2")]
    one = numpy_helper.from_array(np.array([1.0], np.float32))
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a"]), helper.make_node("MatMul", ["x", "w2"], ["b"]),
             helper.make_node("Relu", ["a"], ["ra"]), helper.make_node("Relu", ["b"], ["rb"]),
             helper.make_node("Shape", ["y"], ["sy"]), helper.make_node("ConstantOfShape", ["sy"], ["ones"], value=one),
             helper.make_node("Add", ["y", "ones"], ["o2"])]
    save(nodes, [x, y], outs, [weight("w1", 16, 16), weight("w2", 16, 16)], path)


def attention_like(path):
    """x[N, S, 16] @ w -> Softmax(-1) -> ReduceMean over the features, keepdims 0 -> [N, S]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S"])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", "S", 16])
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("Relu", ["q"], ["rq"]),
        helper.make_node("Relu", ["k"], ["rk"]),
        helper.make_node("Add", ["rq", "rk"], ["z"]),
        helper.make_node("Softmax", ["z"], ["p"], axis=-1),
        helper.make_node("ReduceMean", ["p"], ["y"], axes=[2], keepdims=0),
    ]
    save(nodes, [x], [y, z], [weight("wq", 16, 16), weight("wk", 16, 16)], path)


def two_branches(second):
    """ra = Relu(x @ w1) and second = Relu(x @ w2): two products of one input, which the
    optimizer merges, so that each model below is rewritten (not kept as the input file)."""
    return [
        helper.make_node("MatMul", ["x", "w1"], ["a"]),
        helper.make_node("MatMul", ["x", "w2"], ["b"]),
        helper.make_node("Relu", ["a"], ["ra"]),
        helper.make_node("Relu", ["b"], [second]),
    ]


def sum_and_batch():
    """s = the sum of two_branches, n = x's batch (Gather(Shape(x), zero))."""
    return two_branches("rb") + [
        helper.make_node("Add", ["ra", "rb"], ["s"]),
        helper.make_node("Shape", ["x"], ["shp"]),
        helper.make_node("Gather", ["shp", "zero"], ["n"], axis=0),
    ]


def batch_constant(path):
    """Two matmuls on x (a rewrite) plus Cast(Range(0, N)) broadcast onto the rows: the range
    depends on the batch, and the import folds it at the fixed shape."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16])
    nodes = sum_and_batch() + [
        helper.make_node("Range", ["zero", "n", "one"], ["rows"]),
        helper.make_node("Cast", ["rows"], ["rowsf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["rowsf", "axes1"], ["col"]),
        helper.make_node("Add", ["s", "col"], ["y"]),
    ]
    inits = [weight("w1", 16, 16), weight("w2", 16, 16), i64("zero", 0), i64("one", 1), i64("axes1", [1])]
    save(nodes, [x], [y], inits, path)


def odd_range(path):
    """As batch_constant, with Cast(Range(0, 2N + 1)) as a column [2N + 1, 1], concatenated
    under x's rows projected to one column, averaged, and added: a constant read as data whose
    dimension (2N + 1) follows no input dimension."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16])
    nodes = sum_and_batch() + [
        helper.make_node("Mul", ["n", "two"], ["n2"]),
        helper.make_node("Add", ["n2", "one"], ["n21"]),
        helper.make_node("Range", ["zero", "n21", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["rf", "axes1"], ["col"]),
        helper.make_node("MatMul", ["s", "v"], ["q"]),
        helper.make_node("Concat", ["q", "col"], ["cat"], axis=0),
        helper.make_node("ReduceMean", ["cat"], ["m"], axes=[0], keepdims=1),
        helper.make_node("Add", ["s", "m"], ["y"]),
    ]
    inits = [weight("w1", 16, 16), weight("w2", 16, 16), weight("v", 16, 1), i64("zero", 0), i64("one", 1),
             i64("two", 2), i64("axes1", [1])]
    save(nodes, [x], [y], inits, path)


def shape_derived_pitfalls(path, kind):
    """Sizes computed from the sequence length S that agree with S, or with another symbol, or
    with a constant, at some values only, after two products of x[N, S, 16] (a rewrite):
    - "min": Cast(Range(0, Min(S, 4))) added to a column mean (a constant at S >= 4);
    - "ceil": Cast(Range(0, (S + 7) / 8)) (N's size wherever S = 8N, N's own fixed value 1);
    - "slice": x's features cut to [0, Min(S, 8)) (a fixed axis, at S >= 8 the same 8);
    - "regroup": x at S = 1 transposed to [N, 16, S] and reshaped to [2S, 8N] (a target from
      Shape), whose sizes at the fixed N = 2, S = 1 and at twice them are those of [N, 16S];
    - "maxslice": the features from Max(S, 50) - 42 on (8 at every S up to 50, drawn or checked);
    - "chunk": reshaped to [N, 16S / k, k] with k = 1 + Min(S / 18, 1), softmax, and back (k is 1
      below S = 18: a Reshape target whose elements look like symbols and constants there)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["Y0", "Y1", "Y2"][:2 if kind in ("min", "ceil", "regroup") else 3])
    # Every kind: s = relu(x w1) + relu(x w2) (a rewrite), and len = S read from x's shape.
    prologue = two_branches("rb") + [helper.make_node("Add", ["ra", "rb"], ["s"]),
                                     helper.make_node("Shape", ["x"], ["shp"]),
                                     helper.make_node("Gather", ["shp", "one"], ["len"], axis=0)]
    if kind == "maxslice":
        nodes = prologue + [helper.make_node("Max", ["len", "fifty"], ["m"]),
                            helper.make_node("Sub", ["m", "c42"], ["st"]),
                            helper.make_node("Unsqueeze", ["st", "axes0"], ["st1"]),
                            helper.make_node("Slice", ["s", "st1", "c16", "two1"], ["y"])]
        save(nodes, [x], [y], [weight("w1", 16, 16), weight("w2", 16, 16), i64("one", 1), i64("fifty", 50),
                               i64("c42", 42), i64("axes0", [0]), i64("c16", [16]), i64("two1", [2])], path)
        return
    if kind == "chunk":
        nodes = prologue + [helper.make_node("Div", ["len", "c18"], ["q"]),
                            helper.make_node("Min", ["q", "one"], ["q1"]),
                            helper.make_node("Add", ["q1", "one"], ["k"]),
                            helper.make_node("Unsqueeze", ["k", "axes0"], ["k1"]),
                            helper.make_node("Concat", ["zero1", "minus1", "k1"], ["tgt"], axis=0),
                            helper.make_node("Reshape", ["s", "tgt"], ["sr"]),
                            helper.make_node("Softmax", ["sr"], ["p"], axis=-1),
                            helper.make_node("Reshape", ["p", "back"], ["y"])]
        save(nodes, [x], [y], [weight("w1", 16, 16), weight("w2", 16, 16), i64("one", 1), i64("c18", 18),
                               i64("axes0", [0]), i64("zero1", [0]), i64("minus1", [-1]),
                               i64("back", [0, -1, 16])], path)
        return
    nodes = prologue + [helper.make_node("Gather", ["shp", "zero"], ["n"], axis=0)]
    inits = [weight("w1", 16, 16), weight("w2", 16, 16), i64("zero", 0), i64("one", 1), i64("two", 2),
             i64("four", 4), i64("seven", 7), i64("eight", 8), i64("sixteen", 16), i64("axes0", [0])]
    if kind in ("min", "ceil"):
        nodes += ([helper.make_node("Min", ["len", "four"], ["k"])] if kind == "min" else
                  [helper.make_node("Add", ["len", "seven"], ["l7"]), helper.make_node("Div", ["l7", "eight"], ["k"])])
        nodes += [helper.make_node("Range", ["zero", "k", "one"], ["r"]),
                  helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
                  helper.make_node("ReduceMean", ["s"], ["m"], axes=[1, 2], keepdims=0),
                  helper.make_node("Unsqueeze", ["rf", "axes0"], ["row"]),
                  helper.make_node("Add", ["m", "zero_f"], ["m2"]),
                  helper.make_node("Unsqueeze", ["m2", "axes1"], ["col"]),
                  helper.make_node("Add", ["col", "row"], ["y"])]
        inits += [numpy_helper.from_array(np.zeros(1, np.float32), "zero_f"), i64("axes1", [1])]
    elif kind == "slice":
        nodes += [helper.make_node("Min", ["len", "eight"], ["k"]),
                  helper.make_node("Unsqueeze", ["k", "axes0"], ["k1"]),
                  helper.make_node("Slice", ["s", "zero1", "k1", "two1"], ["y"])]
        inits += [i64("zero1", [0]), i64("two1", [2])]
    else:  # regroup
        nodes += [helper.make_node("Transpose", ["s"], ["t"], perm=[0, 2, 1]),
                  helper.make_node("Mul", ["len", "two"], ["ta"]),
                  helper.make_node("Mul", ["n", "eight"], ["tb"]),
                  helper.make_node("Unsqueeze", ["ta", "axes0"], ["a1"]),
                  helper.make_node("Unsqueeze", ["tb", "axes0"], ["b1"]),
                  helper.make_node("Concat", ["a1", "b1"], ["target"], axis=0),
                  helper.make_node("Reshape", ["t", "target"], ["y"])]
    save(nodes, [x], [y], inits, path)


def positions(path):
    """BERT's embeddings as PyTorch's TorchScript exporter writes them: token ids [N, S] viewed
    as [-1, S] (an int64 Reshape whose target comes from Shape), an embedding Gather, plus the
    position embeddings gathered at a slice [0, S) of a buffer of positions (a constant the
    import folds from S; its 64 positions above the sizes the labelling draws at S = 8, up to 48),
    then two products of the sum (a rewrite)."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", "S"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S", 16])
    nodes = [
        helper.make_node("Shape", ["ids"], ["shp"]),
        helper.make_node("Gather", ["shp", "one"], ["s"], axis=0),
        helper.make_node("Unsqueeze", ["s", "axes0"], ["s1"]),
        helper.make_node("Concat", ["minus1", "s1"], ["view"], axis=0),
        helper.make_node("Reshape", ["ids", "view"], ["ids2"]),
        helper.make_node("Gather", ["emb", "ids2"], ["e"]),
        helper.make_node("Slice", ["buffer", "zero1", "s1", "one1"], ["pos"]),
        helper.make_node("Gather", ["pemb", "pos"], ["p"]),
        helper.make_node("Add", ["e", "p"], ["x"]),
        helper.make_node("MatMul", ["x", "w1"], ["a"]),
        helper.make_node("MatMul", ["x", "w2"], ["b"]),
        helper.make_node("Relu", ["a"], ["ra"]),
        helper.make_node("Relu", ["b"], ["rb"]),
        helper.make_node("Add", ["ra", "rb"], ["y"]),
    ]
    inits = [weight("emb", 50, 16), weight("pemb", 64, 16), i64("buffer", [list(range(64))]),
             weight("w1", 16, 16), weight("w2", 16, 16), i64("one", 1), i64("axes0", [0]), i64("minus1", [-1]),
             i64("zero1", [0]), i64("one1", [1])]
    save(nodes, [ids], [y], inits, path)


def tokens_flattened(path):
    """GPT-2's Conv1D: x [N, S, 16] viewed as [-1, 16] (target from Shape), a product, and viewed
    back as [N, S, 16] (target Concat(Shape(x)[:-1], [16])), twice (a rewrite merges them): at
    batch 1 the sizes alone cannot tell where the batch goes."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S", 16])
    nodes = [
        helper.make_node("Shape", ["x"], ["shp"]),
        helper.make_node("Slice", ["shp", "minus1", "big", "zero1"], ["last"]),
        helper.make_node("Concat", ["minus1", "last"], ["flat_t"], axis=0),
        helper.make_node("Reshape", ["x", "flat_t"], ["flat"]),
        helper.make_node("Slice", ["shp", "zero1", "minus1", "zero1"], ["lead"]),
        helper.make_node("Concat", ["lead", "c16"], ["back_t"], axis=0),
    ]
    for i in (1, 2):
        nodes += [helper.make_node("MatMul", ["flat", f"w{i}"], [f"m{i}"]),
                  helper.make_node("Relu", [f"m{i}"], [f"r{i}"]),
                  helper.make_node("Reshape", [f"r{i}", "back_t"], [f"o{i}"])]
    nodes.append(helper.make_node("Add", ["o1", "o2"], ["y"]))
    inits = [weight("w1", 16, 16), weight("w2", 16, 16), i64("minus1", [-1]), i64("big", [1 << 30]),
             i64("zero1", [0]), i64("c16", [16])]
    save(nodes, [x], [y], inits, path)


def batch_second(path):
    """Relu(x @ w1) reshaped to [1, N, 16] (a target computed from Shape), and Relu(x @ w2)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "N", 16])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 16])
    nodes = two_branches("z") + [
        helper.make_node("Shape", ["ra"], ["shp"]),
        helper.make_node("Concat", ["one", "shp"], ["target"], axis=0),
        helper.make_node("Reshape", ["ra", "target"], ["y"]),
    ]
    save(nodes, [x], [y, z], [weight("w1", 16, 16), weight("w2", 16, 16), i64("one", [1])], path)


def swapped(path):
    """Relu(x @ w1) reshaped from [N, S, 8] to [S, N, 8] (a target computed from Shape), and
    Relu(x @ w2): fixed at N = S the reshape looks like a copy of both."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["S", "N", 8])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", "S", 8])
    nodes = two_branches("z") + [
        helper.make_node("Shape", ["ra"], ["shp"]),
        helper.make_node("Gather", ["shp", "order"], ["target"], axis=0),
        helper.make_node("Reshape", ["ra", "target"], ["y"]),
    ]
    save(nodes, [x], [y, z], [weight("w1", 8, 8), weight("w2", 8, 8), i64("order", [1, 0, 2])], path)


def resolved_at_fixed(path, kind):
    """What the import resolves against a fixed dimension (importer.h FixedDimUse), after two
    products of x: a Slice [0, 20) of the sequence axis (at 8 it covers the axis and is dropped),
    a Clip bound computed from the sequence length, or SAME padding with stride 2 (two convs)."""
    if kind == "same":
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
        outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 8, "H2", "W2"]) for n in ("y1", "y2")]
        nodes = [helper.make_node("Conv", ["x", f"w{i}"], [f"c{i}"], auto_pad="SAME_UPPER", strides=[2, 2])
                 for i in (1, 2)] + [helper.make_node("Relu", [f"c{i}"], [f"y{i}"]) for i in (1, 2)]
        save(nodes, [x], outs, [weight("w1", 8, 3, 3, 3), weight("w2", 8, 3, 3, 3)], path)
        return
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "S", 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "S2", 16])
    nodes = two_branches("rb") + [helper.make_node("Add", ["ra", "rb"], ["s"])]
    inits = [weight("w1", 16, 16), weight("w2", 16, 16)]
    if kind == "slice":
        nodes.append(helper.make_node("Slice", ["s", "zero1", "twenty", "one1"], ["y"]))
        inits += [i64("zero1", [0]), i64("twenty", [20]), i64("one1", [1])]
    else:  # Clip(s, 0, S / 8)
        nodes += [
            helper.make_node("Shape", ["x"], ["shp"]),
            helper.make_node("Gather", ["shp", "one"], ["len"], axis=0),
            helper.make_node("Cast", ["len"], ["lenf"], to=TensorProto.FLOAT),
            helper.make_node("Div", ["lenf", "eight"], ["hi"]),
            helper.make_node("Clip", ["s", "zerof", "hi"], ["y"]),
        ]
        inits += [i64("one", 1), numpy_helper.from_array(np.array(8, np.float32), "eight"),
                  numpy_helper.from_array(np.array(0, np.float32), "zerof")]
    save(nodes, [x], [y], inits, path)


def run(tool, src, out, shapes, *flags):
    """The JSON report and the human one (stderr)."""
    rep = out + ".json"
    args = [f for n, s in shapes.items() for f in ("--input-shape", n + ":" + "x".join(map(str, s)))]
    p = subprocess.run([tool, src, out, "--report", rep, *args, *flags], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"{os.path.basename(src)} {' '.join(flags)}: exit {p.returncode}: {p.stderr[-800:]}")
    with open(rep) as f:
        return json.load(f), p.stderr


def declared(path, which="input"):
    m = onnx.load(path)
    vis = m.graph.input if which == "input" else m.graph.output
    return {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in vis}


def expect_fixed(tool, path, build, cases):
    """Each (kind, shapes, reason): the model build(path(kind.onnx), kind) is rewritten, written at
    the fixed shapes with `reason` in the report's, and equal to its input there."""
    for kind, shapes, reason in cases:
        build(path(kind + ".onnx"), kind)
        r, _ = run(tool, path(kind + ".onnx"), path(kind + ".out.onnx"), shapes)
        assert not r["kept_original"], kind
        sym = r["symbolic_dims"]
        assert not sym["kept"] and reason in sym["fixed_reason"], (kind, sym)
        equal_at(path(kind + ".onnx"), path(kind + ".out.onnx"), [shapes])
    return len(cases)


def equal_at(src, out, shapes_list):
    for i, shapes in enumerate(shapes_list):
        feeds = tl.random_inputs(tl.session(src), seed=i, shapes=shapes)
        err = tl.compare_models(src, out, feeds)
        if err:
            raise AssertionError(f"{os.path.basename(out)} at {shapes}: {err}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    a = ap.parse_args()
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda name: os.path.join(tmp, name)  # noqa: E731

        # 1. Kept: the batch of a CNN.
        cnn(path("cnn.onnx"))
        r, err = run(a.tool, path("cnn.onnx"), path("cnn.out.onnx"), {"x": [2, 3, 8, 8]})
        assert not r["kept_original"], "the CNN must be rewritten for this test to say anything"
        sym = r["symbolic_dims"]
        assert sym["kept"] == ["x: N"] and sym["checked_at"] == "x:5x3x8x8" and not sym["fixed_reason"], sym
        assert "shapes: symbolic input dimensions kept (x: N), verified at the fixed shapes and at x:5x3x8x8" in err, err
        assert declared(path("cnn.out.onnx")) == {"x": ["N", 3, 8, 8]}, declared(path("cnn.out.onnx"))
        assert declared(path("cnn.out.onnx"), "output") == {"y": ["N", 10]}
        equal_at(path("cnn.onnx"), path("cnn.out.onnx"), [{"x": [b, 3, 8, 8]} for b in (1, 2, 3, 7)])
        checks += 1

        # 2. Kept: batch and sequence through opaque Softmax and ReduceMean.
        attention_like(path("att.onnx"))
        r, _ = run(a.tool, path("att.onnx"), path("att.out.onnx"), {"x": [2, 5, 16]})
        assert not r["kept_original"]
        sym = r["symbolic_dims"]
        assert sym["kept"] == ["x: N", "x: S"] and sym["checked_at"] == "x:5x11x16", sym
        assert declared(path("att.out.onnx"), "output") == {"y": ["N", "S"], "z": ["N", "S", 16]}
        equal_at(path("att.onnx"), path("att.out.onnx"), [{"x": [n, s, 16]} for n, s in ((2, 5), (1, 1), (3, 9))])
        checks += 1

        # 2b. Kept: batch and length through opaque 1-D convolutions; the strided ones' length is
        # a label of its own, the same for both (their sum is added).
        conv1d(path("c1d.onnx"))
        r, _ = run(a.tool, path("c1d.onnx"), path("c1d.out.onnx"), {"x": [2, 4, 12]})
        assert not r["kept_original"]
        sym = r["symbolic_dims"]
        assert sym["kept"] == ["x: N", "x: L"] and sym["checked_at"] == "x:5x4x25", sym
        assert declared(path("c1d.out.onnx")) == {"x": ["N", 4, "L"]}
        equal_at(path("c1d.onnx"), path("c1d.out.onnx"),
                 [{"x": [n, 4, length]} for n, length in ((2, 12), (1, 9), (3, 17), (1, 4), (2, 30))])
        checks += 1

        # 2c. Derived dimensions are told apart by what they are computed from, not by their
        # names: the model is rewritten (a concat over both branches), so it may keep its
        # symbolic dimensions only where it is equal at even and odd H as well.
        window_names(path("wn.onnx"))
        r, _ = run(a.tool, path("wn.onnx"), path("wn.out.onnx"), {"x": [1, 4, 11, 8]})
        assert not r["kept_original"]
        if r["symbolic_dims"]["kept"]:
            equal_at(path("wn.onnx"), path("wn.out.onnx"), [{"x": [n, 4, h, 8]} for n, h in ((1, 11), (2, 10), (1, 12))])
        checks += 1

        # 2d. An unnamed dimension's made-up name is never another input's symbol: x's and y's
        # first dimensions stay two sizes.
        unnamed_beside_named(path("ub.onnx"))
        r, _ = run(a.tool, path("ub.onnx"), path("ub.out.onnx"), {"x": [3, 16], "y": [3, 16]})
        assert not r["kept_original"]
        assert sorted(r["symbolic_dims"]["kept"]) == ["x: x_dim0'", "y: x_dim0"], r["symbolic_dims"]
        equal_at(path("ub.onnx"), path("ub.out.onnx"), [{"x": [n, 16], "y": [m, 16]} for n, m in ((3, 3), (3, 5), (6, 2))])
        checks += 1

        # 3. A constant computed from the batch: written as its computation (ModelContext::
        # shape_values). At batch 1 the folded range is [[0]], which broadcasts like a bias, and at
        # batch 2 the check would see [[0], [1]] both ways: only its origin tells (shape_derived).
        batch_constant(path("rows.onnx"))
        for n in (1, 4):
            r, err = run(a.tool, path("rows.onnx"), path("rows.out.onnx"), {"x": [n, 16]})
            assert not r["kept_original"]
            sym = r["symbolic_dims"]
            assert sym["kept"] == ["x: N"] and sym["computed_at_run_time"] == ["col"], sym
            assert "shapes: 1 constants computed from the input shapes written as their computation (e.g. 'col')" in err
            assert declared(path("rows.out.onnx")) == {"x": ["N", 16]}
            equal_at(path("rows.onnx"), path("rows.out.onnx"), [{"x": [b, 16]} for b in (1, 2, 3, 7)])
            checks += 1

        # 3b. One whose dimension (2N + 1) follows no input dimension: the fixed shapes, and why.
        odd_range(path("odd.onnx"))
        r, err = run(a.tool, path("odd.onnx"), path("odd.out.onnx"), {"x": [2, 16]})
        assert not r["kept_original"]
        sym = r["symbolic_dims"]
        assert not sym["kept"] and sym["fixed_reason"].startswith(
            "'col' is a constant the import computed from the input shapes (Shape, Size), at their fixed values; "
            "computing it at run time: "), sym
        assert "follows no input dimension" in sym["fixed_reason"], sym
        assert "shapes: written at the fixed --input-shape shapes, not the symbolic ones the input declares: " in err
        assert declared(path("odd.out.onnx")) == {"x": [2, 16]}
        equal_at(path("odd.onnx"), path("odd.out.onnx"), [{"x": [2, 16]}])
        checks += 1

        # 3b'. Sizes that agree with a symbol or a constant at some values only: the fixed shapes.
        checks += expect_fixed(a.tool, path, shape_derived_pitfalls, (
            ("min", {"x": [2, 8, 16]}, "follows no input dimension"),
            ("ceil", {"x": [1, 8, 16]}, "follows no input dimension"),
            ("slice", {"x": [2, 8, 16]}, "(Slice): its sizes come from"),
            ("regroup", {"x": [2, 1, 16]}, "not verified at x:5x3x16: "),
            ("maxslice", {"x": [1, 8, 16]}, "(Slice): its sizes come from"),
            ("chunk", {"x": [1, 8, 16]}, "(Reshape): its sizes come from")))

        # 3c. Position embeddings gathered at a slice of positions cut to the sequence length, and
        # token ids viewed with a target from Shape (an int64 Reshape, opaque): kept (and equal up
        # to the 64 positions the buffer has).
        positions(path("pos.onnx"))
        for n, s in ((1, 8), (2, 5)):
            r, err = run(a.tool, path("pos.onnx"), path("pos.out.onnx"), {"ids": [n, s]})
            assert not r["kept_original"]
            sym = r["symbolic_dims"]
            assert sym["kept"] == ["ids: N", "ids: S"] and sym["computed_at_run_time"], sym
            assert declared(path("pos.out.onnx"), "output") == {"y": ["N", "S", 16]}
            equal_at(path("pos.onnx"), path("pos.out.onnx"), [{"ids": [b, t]} for b, t in ((1, 8), (3, 4), (2, 64), (1, 1))])
            checks += 1

        # 3d. Tokens flattened to [N*S, 16] and back at batch 1: kept, the target back written
        # from the input's dimensions.
        tokens_flattened(path("flat.onnx"))
        r, err = run(a.tool, path("flat.onnx"), path("flat.out.onnx"), {"x": [1, 6, 16]})
        assert not r["kept_original"]
        sym = r["symbolic_dims"]
        assert sym["kept"] == ["x: N", "x: S"], sym
        assert declared(path("flat.out.onnx"), "output") == {"y": ["N", "S", 16]}
        equal_at(path("flat.onnx"), path("flat.out.onnx"), [{"x": [b, t, 16]} for b, t in ((1, 6), (3, 4), (2, 9))])
        checks += 1

        # 4. Fixed after the check at twice the batch plus one fails.
        batch_second(path("second.onnx"))
        r, _ = run(a.tool, path("second.onnx"), path("second.out.onnx"), {"x": [1, 16]})
        assert not r["kept_original"]
        sym = r["symbolic_dims"]
        assert not sym["kept"] and sym["fixed_reason"].startswith("not verified at x:3x16: "), sym
        assert r["verify"]["passed"]
        assert declared(path("second.out.onnx")) == {"x": [1, 16]}
        equal_at(path("second.onnx"), path("second.out.onnx"), [{"x": [1, 16]}])
        checks += 1

        # 4b. Two symbols fixed at one value are checked at different ones.
        swapped(path("swap.onnx"))
        r, _ = run(a.tool, path("swap.onnx"), path("swap.out.onnx"), {"x": [3, 3, 8]})
        assert not r["kept_original"]
        sym = r["symbolic_dims"]
        assert not sym["kept"] and sym["fixed_reason"].startswith("not verified at x:7x8x8: "), sym
        equal_at(path("swap.onnx"), path("swap.out.onnx"), [{"x": [3, 3, 8]}])
        checks += 1

        # 4c. An --input-shape that changes a fixed dimension the input declares.
        cnn(path("convs.onnx"), flatten=False)
        r, _ = run(a.tool, path("convs.onnx"), path("cnn.small.onnx"), {"x": [2, 3, 4, 4]})
        sym = r["symbolic_dims"]
        assert not sym["kept"] and sym["fixed_reason"] == (
            "input 'x': --input-shape [2,3,4,4] changes its fixed dimension 2 (declared 8)"), sym
        assert declared(path("cnn.small.onnx")) == {"x": [2, 3, 4, 4]}
        checks += 1

        # 4d. Resolved by the import at the fixed size: the fixed shapes, and the reason.
        checks += expect_fixed(a.tool, path, resolved_at_fixed, (
            ("slice", {"x": [2, 8, 16]}, "(Slice): a Slice [0, 20) covers axis 1 at its fixed size 8"),
            ("clip", {"x": [2, 8, 16]}, "(Clip): reads 'hi', computed from the input shapes"),
            ("same", {"x": [1, 3, 8, 12]}, "(Conv): SAME_UPPER padding with stride 2")))

        # 5. --fixed-shapes, --verify off.
        for flag, reason in (("--fixed-shapes", "--fixed-shapes"), ("--verify=off", "--verify off: ")):
            r, _ = run(a.tool, path("cnn.onnx"), path("cnn.fixed.onnx"), {"x": [2, 3, 8, 8]}, flag)
            sym = r["symbolic_dims"]
            assert not sym["kept"] and sym["fixed_reason"].startswith(reason), sym
            assert declared(path("cnn.fixed.onnx")) == {"x": [2, 3, 8, 8]}
            equal_at(path("cnn.onnx"), path("cnn.fixed.onnx"), [{"x": [2, 3, 8, 8]}])
            checks += 1
    print(f"symbolic_dims: {checks} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
