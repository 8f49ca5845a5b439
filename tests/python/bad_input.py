#!/usr/bin/env python3
"""Bad input: every case must exit 2 with a clear one-line message and write nothing.

usage: bad_input.py TOOL [-- EXTRA TOOL FLAGS]
  e.g. bad_input.py build/tools/onnx-tensat
       bad_input.py build/tools/onnx-tensat-exec -- --convert
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402


def vi(name, shape, et=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, et, shape)


def model(nodes, inputs, outputs, inits=(), opsets=(("", 13),)):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m


def good_model():
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    return model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c"], ["y"])], [vi("x", [1, 3, 16, 16])], [vi("y", [1, 8, 16, 16])], [w])


def fingerprint(path):
    """The file's bytes, or for a large one (the sparse 2 GiB case) its size and modification time."""
    st = os.stat(path)
    if st.st_size > 64 << 20:
        return (st.st_size, st.st_mtime_ns)
    with open(path, "rb") as f:
        return f.read()


def cases(tmp):
    """(name, input path, extra flags, substrings the message must contain, output path or None)."""
    out = []

    def write(name, data):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    good = good_model().SerializeToString()
    out.append(("missing file", os.path.join(tmp, "does_not_exist.onnx"), [], ["does_not_exist.onnx"]))
    out.append(("empty file", write("empty.onnx", b""), [], ["empty.onnx", "empty"]))
    out.append(("truncated", write("truncated.onnx", good[: len(good) * 2 // 3]), [], ["truncated.onnx"]))
    out.append(("random bytes", write("random.onnx", np.random.default_rng(1).bytes(4096)), [], ["random.onnx"]))
    out.append(("text file", write("text.onnx", b"this is not an onnx model\n" * 20), [], ["text.onnx"]))
    out.append(("directory", tmp, [], [os.path.basename(tmp)]))
    big = os.path.join(tmp, "over_2gib.onnx")  # sparse: no disk space taken
    with open(big, "wb") as f:
        f.write(good)
        f.truncate(2**31)
    out.append(("over 2 GiB", big, [], ["over_2gib.onnx", "larger than 2 GiB", "external data"]))
    m = model([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")], [vi("x", [2, 3])], [vi("y", [2, 3])])
    out.append(("undefined tensor", write("undefined.onnx", m.SerializeToString()), [], ["adder", "ghost"]))
    m = model([helper.make_node("Add", ["x", "b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2"),
               helper.make_node("Relu", ["b"], ["y"], name="n3")], [vi("x", [2, 3])], [vi("y", [2, 3])])
    out.append(("cyclic graph", write("cycle.onnx", m.SerializeToString()), [], ["cycle"]))
    m = model([helper.make_node("Foo", ["x"], ["y"], name="foo", domain="my.domain")], [vi("x", [2, 3])],
              [vi("y", [2, 3])])
    out.append(("undeclared domain", write("domain.onnx", m.SerializeToString()), [], ["foo", "my.domain"]))
    m = model([helper.make_node("Relu", ["data"], ["y"])], [vi("data", ["batch", 3])], [vi("y", ["batch", 3])])
    sym = write("symbolic.onnx", m.SerializeToString())
    out.append(("symbolic dimension", sym, [], ["'data'", "--input-shape data:1x3 ", "batch"]))
    # Nodes that break the operator spec (ONNX Runtime refuses them too): an error naming the
    # node, not an opaque pass-through.
    rng = np.random.default_rng(1)
    wg = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="bad_group", group=2, pads=[1, 1, 1, 1])],
              [vi("x", [1, 4, 8, 8])], [vi("y", [1, 8, 8, 8])], [wg])
    out.append(("conv group mismatch", write("group.onnx", m.SerializeToString()), [], ["bad_group", "group 2"]))
    shp = numpy_helper.from_array(np.array([1, 5, 7], dtype=np.int64), "shp")
    m = model([helper.make_node("Reshape", ["x", "shp"], ["y"], name="bad_reshape")],
              [vi("x", [1, 4, 8])], [vi("y", [1, 5, 7])], [shp])
    out.append(("reshape element count", write("reshape.onnx", m.SerializeToString()), [], ["bad_reshape", "35"]))
    spl = numpy_helper.from_array(np.array([3, 3], dtype=np.int64), "spl")
    m = model([helper.make_node("Split", ["x", "spl"], ["a", "b"], name="bad_split", axis=1)],
              [vi("x", [1, 8])], [vi("a", [1, 3]), vi("b", [1, 3])], [spl])
    out.append(("split sizes sum", write("split.onnx", m.SerializeToString()), [], ["bad_split", "sum to 6"]))
    goodp = write("good.onnx", good)
    out.append(("--input-shape wrong name", goodp, ["--input-shape", "nope:1x3x16x16"], ["nope"]))
    out.append(("--input-shape wrong rank", goodp, ["--input-shape", "x:1x3x16"], ["rank"]))
    out.append(("--input-shape malformed", goodp, ["--input-shape", "x:1xfoo"], ["foo"]))
    out.append(("output == input", goodp, [], ["input"], goodp))
    out.append(("output == input (other spelling)", goodp, [], ["input"], os.path.join(tmp, ".", "good.onnx")))
    return out


def main():
    args = sys.argv[1:]
    args, extra = tl.split_tool_flags(args)
    tool = args[0]
    failures = 0
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "in")
        outdir = os.path.join(tmp, "out")
        os.makedirs(work)
        os.makedirs(outdir)
        for case in cases(work):
            total += 1
            name, src, flags, needles = case[:4]
            dst = case[4] if len(case) > 4 else os.path.join(outdir, "out.onnx")
            before = fingerprint(src) if os.path.isfile(src) else None
            p = subprocess.run([tool, src, dst, *extra, *flags], capture_output=True, text=True, timeout=120)
            lines = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
            err = ""
            if p.returncode != 2:
                err = f"exit {p.returncode}, expected 2: {p.stderr.strip()[-300:]}"
            elif len(lines) != 1:
                err = f"expected a one-line message, got {len(lines)} lines: {p.stderr.strip()[-400:]}"
            else:
                missing = [s for s in needles if s not in lines[0]]
                if missing:
                    err = f"message does not name {missing}: {lines[0]}"
            if not err and dst.startswith(outdir) and os.path.exists(dst):
                err = "the output file was written"
            leftovers = [f for f in os.listdir(outdir)] + [f for f in os.listdir(work) if ".tmp" in f]
            if not err and leftovers:
                err = f"files left behind: {leftovers}"
            if not err and before is not None and fingerprint(src) != before:
                err = "the input file was modified"
            if err:
                failures += 1
                print(f"FAIL {name}: {err}")
            else:
                print(f"ok   {name}: {lines[0]}")
            shutil.rmtree(outdir)
            os.makedirs(outdir)
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
