#!/usr/bin/env python3
"""The CPU kernels of opaque ONNX operators agree with ONNX Runtime, and verification runs
through them.

1. Small models (onnx.helper), each built around operators the importer keeps opaque (Softmax,
   Clip, Pad, the pieces of LayerNorm and GELU as PyTorch exports them, shape computations,
   pooling with ceil_mode, Gather, Slice, ...), run on the CPU reference executor
   (onnx-tensat-exec) and compared with ONNX Runtime (tensat_testlib.compare). Operators the
   executors have no kernel for must be refused with exit 2, naming the operator.
2. A transformer block with attention, LayerNorm and GELU goes through onnx-tensat with
   --verify cpu: verification must compute the opaque nodes (none left as region boundaries)
   and the written model must agree with ONNX Runtime.
3. --measure: `on` without a GPU is a usage error (exit 2); `off` never times.

usage: opaque_ops_vs_ort.py ONNX_TENSAT_EXEC ONNX_TENSAT [--filter SUBSTR]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402
from importer_cases import run_exec  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64
RNG = np.random.default_rng(2024)


def vi(name, shape, et=F):
    return helper.make_tensor_value_info(name, et, shape)


def f32(name, *shape, lo=-1.0, hi=1.0):
    return numpy_helper.from_array(RNG.uniform(lo, hi, shape).astype(np.float32), name)


def scalar(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="opaque_ops_vs_ort")
    m.ir_version = 8
    return m


def unary(op, opset=13, **attrs):
    return model([helper.make_node(op, ["x"], ["y"], **attrs)], [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], opset=opset)


def cases():
    """(name, model, expect) with expect 'ok' (computed and equal to ORT) or 'refused'."""
    c = []
    for axis, opset in ((1, 11), (1, 13), (-1, 13), (0, 13)):
        for op in ("Softmax", "LogSoftmax"):
            c.append((f"{op.lower()}_axis{axis}_opset{opset}", unary(op, opset, axis=axis), "ok"))
    c.append(("clip_both_inputs", model(
        [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])],
        [scalar("lo", -0.3), scalar("hi", 0.4)]), "ok"))
    c.append(("clip_max_only", model(
        [helper.make_node("Clip", ["x", "", "hi"], ["y"])], [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])],
        [scalar("hi", 0.1)]), "ok"))
    c.append(("clip_opset6", unary("Clip", 6, min=-0.5, max=0.25), "ok"))
    for mode in ("constant", "reflect", "edge"):
        c.append((f"pad_{mode}", model(
            [helper.make_node("Pad", ["x", "p", "v"] if mode == "constant" else ["x", "p"], ["y"], mode=mode)],
            [vi("x", [1, 2, 4, 5])], [vi("y", [1, 2, 7, 6])],
            [ints("p", [0, 0, 1, 0, 0, 0, 2, 1])] + ([scalar("v", 0.5)] if mode == "constant" else [])), "ok"))
    c.append(("pad_negative_opset13", model(
        [helper.make_node("Pad", ["x", "p"], ["y"])], [vi("x", [3, 5])], [vi("y", [4, 3])],
        [ints("p", [1, -1, 0, -1])]), "ok"))
    c.append(("pad_axes_opset18", model(
        [helper.make_node("Pad", ["x", "p", "", "a"], ["y"], mode="reflect")], [vi("x", [2, 3, 4])],
        [vi("y", [2, 3, 7])], [ints("p", [1, 2]), ints("a", [-1])], opset=18), "ok"))
    c.append(("pad_opset2_attrs", model(
        [helper.make_node("Pad", ["x"], ["y"], pads=[1, 0, 0, 2], value=1.5)], [vi("x", [2, 3])],
        [vi("y", [3, 5])], opset=2), "ok"))
    for op, opset, axes_as_input in (("ReduceMean", 13, False), ("ReduceMean", 18, True), ("ReduceSum", 13, True),
                                     ("ReduceMax", 13, False)):
        for keep in (0, 1):
            ins = ["x", "a"] if axes_as_input else ["x"]
            attrs = {"keepdims": keep} if axes_as_input else {"keepdims": keep, "axes": [0, 2]}
            out = [3] if not keep else [1, 3, 1]
            c.append((f"{op.lower()}_opset{opset}_keep{keep}", model(
                [helper.make_node(op, ins, ["y"], **attrs)], [vi("x", [2, 3, 4])], [vi("y", out)],
                [ints("a", [0, -1])] if axes_as_input else [], opset=opset), "ok"))
    for op, opset, attrs in (("Sqrt", 13, {}), ("Exp", 13, {}), ("Neg", 13, {}), ("Reciprocal", 13, {}),
                             ("Abs", 13, {}), ("Floor", 13, {}), ("Ceil", 13, {}), ("Erf", 13, {}),
                             ("LeakyRelu", 13, {"alpha": 0.2}), ("HardSigmoid", 13, {"alpha": 0.3, "beta": 0.4}),
                             ("HardSwish", 14, {}), ("Elu", 13, {"alpha": 0.7}), ("Softplus", 13, {}),
                             ("Gelu", 20, {}), ("Gelu", 20, {"approximate": "tanh"})):
        name = f"{op.lower()}{'_' + attrs['approximate'] if 'approximate' in attrs else ''}"
        if op in ("Sqrt", "Reciprocal"):  # on |x| + 0.5
            m = model([helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Add", ["a", "h"], ["b"]),
                       helper.make_node(op, ["b"], ["y"])], [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])],
                      [scalar("h", 0.5)])
        else:
            m = unary(op, opset, **attrs)
        c.append((name, m, "ok"))
    for op in ("Sub", "Div", "Pow", "Max", "Min"):
        inits = [f32("b", 4, lo=0.5, hi=2.0)]
        pre = [helper.make_node("Abs", ["x"], ["xa"])] if op == "Pow" else []
        c.append((f"{op.lower()}_broadcast", model(
            pre + [helper.make_node(op, ["xa" if op == "Pow" else "x", "b"], ["y"])], [vi("x", [2, 3, 4])],
            [vi("y", [2, 3, 4])], inits), "ok"))
    # LayerNorm and GELU as PyTorch exports them.
    ln = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1]), helper.make_node("Sub", ["x", "m"], ["d"]),
          helper.make_node("Pow", ["d", "two"], ["p"]), helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
          helper.make_node("Add", ["v", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["s"]),
          helper.make_node("Div", ["d", "s"], ["n"]), helper.make_node("Mul", ["n", "g"], ["ng"]),
          helper.make_node("Add", ["ng", "b"], ["y"])]
    c.append(("layernorm_export", model(ln, [vi("x", [4, 16])], [vi("y", [4, 16])],
                                        [scalar("two", 2.0), scalar("eps", 1e-5), f32("g", 16), f32("b", 16)]), "ok"))
    gelu = [helper.make_node("Div", ["x", "r2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
            helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
            helper.make_node("Mul", ["m", "half"], ["y"])]
    c.append(("gelu_export", model(gelu, [vi("x", [4, 16])], [vi("y", [4, 16])],
                                   [scalar("r2", 2 ** 0.5), scalar("one", 1.0), scalar("half", 0.5)]), "ok"))
    c.append(("gather_axis1", model(
        [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [vi("x", [2, 5, 3])], [vi("y", [2, 2, 2, 3])],
        [ints("i", [[-1, 0], [2, 2]])]), "ok"))
    # x.reshape(x.shape[0], -1) as PyTorch exports it (Shape is a constant for static shapes).
    # The Reshape's output shape is declared (value_info), as exporters do: ONNX 1.12's shape
    # inference, which the importer runs, does not propagate the values through this chain.
    shape_chain = model(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         helper.make_node("Unsqueeze", ["n", "ax"], ["u"]), helper.make_node("Concat", ["u", "m1"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["r"]), helper.make_node("Relu", ["r"], ["y"])],
        [vi("x", [2, 3, 4])], [vi("y", [2, 12])], [ints("zero", 0), ints("ax", [0]), ints("m1", [-1])])
    shape_chain.graph.value_info.append(vi("r", [2, 12]))
    c.append(("shape_gather_unsqueeze_concat_reshape", shape_chain, "ok"))
    c.append(("slice_negative_step", model(
        [helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])], [vi("x", [4, 6])], [vi("y", [4, 2])],
        [ints("s", [-1]), ints("e", [-6]), ints("a", [1]), ints("t", [-3])]), "ok"))
    c.append(("slice_opset9", model(
        [helper.make_node("Slice", ["x"], ["y"], starts=[1, 0], ends=[3, 100], axes=[0, 1])], [vi("x", [4, 6])],
        [vi("y", [2, 6])], opset=9), "ok"))
    for kind, attrs, out in (("MaxPool", {"ceil_mode": 1}, [1, 2, 4, 4]),
                             ("AveragePool", {"ceil_mode": 1}, [1, 2, 4, 4]),
                             ("AveragePool", {"ceil_mode": 1, "pads": [1, 1, 1, 1], "count_include_pad": 1}, [1, 2, 5, 5]),
                             ("AveragePool", {"ceil_mode": 1, "pads": [1, 0, 0, 1]}, [1, 2, 4, 4]),
                             ("MaxPool", {"ceil_mode": 1, "pads": [0, 1, 1, 0]}, [1, 2, 4, 4])):
        name = f"{kind.lower()}_ceil_{'_'.join(str(v) for v in attrs.get('pads', []))}_{attrs.get('count_include_pad', 0)}"
        c.append((name, model(
            [helper.make_node(kind, ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], **attrs)],
            [vi("x", [1, 2, 8, 8])], [vi("y", out)]), "ok"))
    c.append(("globalmaxpool_3d", model(
        [helper.make_node("GlobalMaxPool", ["x"], ["y"])], [vi("x", [2, 3, 5])], [vi("y", [2, 3, 1])]), "ok"))
    c.append(("expand_unsqueeze_squeeze", model(
        [helper.make_node("Unsqueeze", ["x", "a0"], ["u"]), helper.make_node("Expand", ["u", "shape"], ["e"]),
         helper.make_node("Squeeze", ["e", "a1"], ["y"])],
        [vi("x", [3, 1])], [vi("y", [2, 3, 4])], [ints("a0", [0]), ints("shape", [2, 1, 3, 4]), ints("a1", [1])]), "ok"))
    c.append(("concat_of_opaque_results", model(
        [helper.make_node("Sqrt", ["x"], ["s"]), helper.make_node("Neg", ["x"], ["n"]),
         helper.make_node("Concat", ["s", "n", "s"], ["y"], axis=0)],
        [vi("x", [2, 3])], [vi("y", [6, 3])]), "ok"))
    c.append(("where_is_refused", model(
        [helper.make_node("Greater", ["x", "z"], ["c"]), helper.make_node("Where", ["c", "x", "z"], ["y"])],
        [vi("x", [2, 3])], [vi("y", [2, 3])], [scalar("z", 0.0)]), "refused"))
    return c


def transformer_block():
    d, t, h = 32, 8, 4
    nodes, inits = [], []

    def lin(x, name, n_in, n_out):
        inits.extend([f32(name + ".w", n_in, n_out, lo=-0.3, hi=0.3), f32(name + ".b", n_out, lo=-0.1, hi=0.1)])
        nodes.append(helper.make_node("MatMul", [x, name + ".w"], [name + ".mm"]))
        nodes.append(helper.make_node("Add", [name + ".mm", name + ".b"], [name]))
        return name

    def heads(x, name):
        inits.append(ints(name + ".shape", [t, h, d // h]))
        nodes.append(helper.make_node("Reshape", [x, name + ".shape"], [name + ".r"]))
        nodes.append(helper.make_node("Transpose", [name + ".r"], [name], perm=[1, 0, 2]))
        return name

    q, k, v = (heads(lin("x", n, d, d), n + "h") for n in ("q", "k", "v"))
    nodes.append(helper.make_node("Transpose", [k], ["kt"], perm=[0, 2, 1]))
    nodes.append(helper.make_node("MatMul", [q, "kt"], ["s"]))
    inits.append(scalar("scale", float((d // h) ** 0.5)))
    nodes.append(helper.make_node("Div", ["s", "scale"], ["ss"]))
    nodes.append(helper.make_node("Softmax", ["ss"], ["p"], axis=-1))
    nodes.append(helper.make_node("MatMul", ["p", v], ["att"]))
    nodes.append(helper.make_node("Transpose", ["att"], ["att_t"], perm=[1, 0, 2]))
    inits.append(ints("flat", [t, d]))
    nodes.append(helper.make_node("Reshape", ["att_t", "flat"], ["att_f"]))
    o = lin("att_f", "o", d, d)
    nodes.append(helper.make_node("Add", [o, "x"], ["res"]))
    nodes.extend([helper.make_node("ReduceMean", ["res"], ["ln.m"], axes=[-1]),
                  helper.make_node("Sub", ["res", "ln.m"], ["ln.d"]),
                  helper.make_node("Pow", ["ln.d", "two"], ["ln.p"]),
                  helper.make_node("ReduceMean", ["ln.p"], ["ln.v"], axes=[-1]),
                  helper.make_node("Add", ["ln.v", "eps"], ["ln.ve"]),
                  helper.make_node("Sqrt", ["ln.ve"], ["ln.s"]),
                  helper.make_node("Div", ["ln.d", "ln.s"], ["ln"])])
    inits.extend([scalar("two", 2.0), scalar("eps", 1e-5)])
    f = lin("ln", "ff1", d, 2 * d)
    nodes.extend([helper.make_node("Div", [f, "r2"], ["g.d"]), helper.make_node("Erf", ["g.d"], ["g.e"]),
                  helper.make_node("Add", ["g.e", "one"], ["g.a"]), helper.make_node("Mul", [f, "g.a"], ["g.m"]),
                  helper.make_node("Mul", ["g.m", "half"], ["gelu"])])
    inits.extend([scalar("r2", 2 ** 0.5), scalar("one", 1.0), scalar("half", 0.5)])
    lin("gelu", "y", 2 * d, d)
    return model(nodes, [vi("x", [t, d])], [vi("y", [t, d])], inits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exec_bin")
    ap.add_argument("tool")
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    failures = count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, expect in cases():
            if a.filter not in name:
                continue
            count += 1
            src = os.path.join(tmp, name + ".onnx")
            onnx.checker.check_model(m)
            onnx.save(m, src)
            sess = tl.session(src)
            feeds = tl.random_inputs(sess, seed=5)
            names = [o.name for o in sess.get_outputs()]
            p, got = run_exec(a.exec_bin, src, feeds, names, tmp, [])
            err = ""
            if expect == "refused":
                if p.returncode != 2 or "Where" not in p.stderr:
                    err = f"expected exit 2 naming Where, got {p.returncode}: {p.stderr.strip()[-300:]}"
            elif p.returncode != 0:
                err = f"exit {p.returncode}: {p.stderr.strip()[-400:]}"
            else:
                ref = sess.run(None, feeds)
                for n, r, g in zip(names, ref, got):
                    err = err or tl.compare(n, r, g)
            print(f"{'FAIL' if err else 'ok  '} {name}{': ' + err if err else ''}", flush=True)
            failures += bool(err)

        if a.filter in "transformer_block":
            count += 1
            src, dst, rep = (os.path.join(tmp, f) for f in ("block.onnx", "block.opt.onnx", "block.json"))
            onnx.save(transformer_block(), src)
            p = tl.run_tool(a.tool, src, dst, "--verify", "cpu", "--measure", "off", "--report", rep)
            err = ""
            if p.returncode != 0:
                err = f"onnx-tensat exit {p.returncode}: {p.stderr.strip()[-400:]}"
            else:
                r = json.load(open(rep))
                v = r["verify"]
                if not v["passed"] or v["opaque_regions"] != 0 or v["opaque_computed"] < 8:
                    err = f"verification did not run through the opaque nodes: {v}"
                elif "measured" in r:
                    err = "--measure off timed the models"
                else:
                    sess = tl.session(src)
                    err = tl.compare_models(src, dst, tl.random_inputs(sess, seed=9))
            print(f"{'FAIL' if err else 'ok  '} transformer_block_verified_through_opaque_nodes{': ' + err if err else ''}")
            failures += bool(err)

            count += 1
            p = tl.run_tool(a.tool, src, dst, "--measure", "on", "--report", rep)
            if p.returncode == 2:  # no GPU here: a usage error naming the flag
                err = "" if "--measure on" in p.stderr else f"exit 2 without naming --measure: {p.stderr.strip()}"
            elif p.returncode == 0:  # a GPU: both models were timed
                err = "" if "measured" in json.load(open(rep)) else "--measure on did not time the models"
            else:
                err = f"--measure on: exit {p.returncode}: {p.stderr.strip()[-300:]}"
            print(f"{'FAIL' if err else 'ok  '} measure_on{': ' + err if err else ''}")
            failures += bool(err)
    print(f"{count - failures} passed, {failures} failed")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
