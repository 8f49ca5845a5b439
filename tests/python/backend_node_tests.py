#!/usr/bin/env python3
"""ONNX backend node tests through onnx-tensat.

For every node test that ONNX Runtime can run in its original form, onnx-tensat must either
exit 0 with a model whose outputs equal the original's (under ONNX Runtime, on the test's own
inputs), or exit 2 with a message. Anything else (a crash, exit 1, wrong outputs) fails.

Besides the node tests, the same for the model files the onnx package ships as backend test
data: PyTorch exports of modules and operators from 2017-2018 (pytorch-converted,
pytorch-operator: IR version 3, opset 6 and 9), small multi-node models (simple), and the
"light" versions of the old model zoo's networks (AlexNet, DenseNet-121, Inception v1/v2,
ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512: IR 3, opset 9, their weights computed by
ConstantOfShape), on their own inputs, or on random ones where they have none. A model file that
ONNX Runtime cannot run (opset 6 Add, Mul, BatchNormalization: it implements them from opset
7) is checked with --exec: onnx-tensat-exec must compute the stored outputs from the original
(the importer's reading of the old semantics: legacy broadcasting, Sum) and from the tool's
output.

With --constant-inputs, each node test's inputs become initializers holding the test's input
values (the model files are left out): every node then has constant operands, so the importer's
constant folding (importer/const_eval.h) computes whatever it covers, and its values must be
ONNX Runtime's on the same model. The summary counts the cases whose nodes were all folded away.

usage: backend_node_tests.py ONNX_TENSAT [--exec ONNX_TENSAT_EXEC] [--constant-inputs] [--summary FILE.json]
                             [--filter SUBSTR] [-- EXTRA TOOL FLAGS]
  (e.g. `backend_node_tests.py build/tools/onnx-tensat-exec -- --convert` tests importer+exporter alone)
"""
import argparse
import glob
import json
import os
import sys
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402


def run_exec(exec_bin, model, inputs, work):
    """Runs a model on onnx-tensat-exec (the CPU reference executor): its outputs, or None
    where it refuses (an opaque node it cannot compute, exit 2)."""
    import subprocess

    import onnx
    from onnx import numpy_helper

    m = onnx.load(model)
    inits = {t.name for t in m.graph.initializer}
    real = [i.name for i in m.graph.input if i.name not in inits]
    ind, outd = work + ".in", work + ".out"
    os.makedirs(ind, exist_ok=True)
    for i, (n, v) in enumerate(zip(real, inputs)):
        with open(os.path.join(ind, f"input_{i}.pb"), "wb") as fh:
            fh.write(numpy_helper.from_array(v, n).SerializeToString())
    p = subprocess.run([exec_bin, model, ind, outd, "-q"], capture_output=True, text=True, timeout=300)
    if p.returncode == 2:
        return None
    if p.returncode != 0:
        raise RuntimeError(f"onnx-tensat-exec exit {p.returncode}: {p.stderr.strip()[-300:]}")
    outs = []
    for i in range(len(m.graph.output)):
        t = onnx.TensorProto()
        with open(os.path.join(outd, f"output_{i}.pb"), "rb") as fh:
            t.ParseFromString(fh.read())
        outs.append(numpy_helper.to_array(t))
    return outs


def check_by_reference(binary, exec_bin, name, src, dst, inputs, expected, extra):
    """For a model file ONNX Runtime cannot run (opset 6 Add, Mul, BatchNormalization, ...):
    the reference executor on the original must give the outputs stored beside it (the
    importer's reading of the old semantics), and on the tool's output too."""
    try:
        ref = run_exec(exec_bin, src, inputs, dst + ".a")
    except Exception as e:  # noqa: BLE001
        return name, "fail", f"original: {e}"
    if ref is None:
        return name, "ort-skip", ""  # an opaque node neither runtime here computes
    for i, (a, b) in enumerate(zip(expected, ref)):
        err = tl.compare(f"output {i} (reference executor vs stored)", a, b)
        if err:
            return name, "fail", err
    p = tl.run_tool(binary, src, dst, *extra, timeout=120)
    if p.returncode == 2:
        return name, "refused", (p.stderr.strip().splitlines() or ["(no message)"])[-1].replace(src, "MODEL")
    if p.returncode != 0:
        return name, "fail", f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    try:
        got = run_exec(exec_bin, dst, inputs, dst + ".b")
    except Exception as e:  # noqa: BLE001
        return name, "fail", f"output: {e}"
    if got is None:
        return name, "fail", "the reference executor refuses the output but not the original"
    for i, (a, b) in enumerate(zip(expected, got)):
        err = tl.compare(f"output {i} (written model vs stored)", a, b)
        if err:
            return name, "fail", err
    return name, "ok-reference", ""


def with_constant_inputs(model, inputs):
    """The node test's model with its graph inputs turned into initializers holding `inputs`;
    None where that cannot be written (a sequence or optional input, IR < 4)."""
    from onnx import numpy_helper

    m = model.__class__()
    m.CopyFrom(model)
    if m.ir_version < 4 or len(m.graph.input) != len(inputs):
        return None
    for i, v in zip(m.graph.input, inputs):
        if not i.type.HasField("tensor_type") or not hasattr(v, "dtype") or v.dtype == object:
            return None
        m.graph.initializer.append(numpy_helper.from_array(v, i.name))
    del m.graph.input[:]
    return m


def run_case(args):
    binary, name, model_bytes, inputs, tmp, extra, exec_bin, expected = args
    src = os.path.join(tmp, name.replace("/", "_") + ".onnx")
    dst = os.path.join(tmp, name.replace("/", "_") + ".out.onnx")
    with open(src, "wb") as f:
        f.write(model_bytes)
    try:
        s1 = tl.session(src)
        feeds = {i.name: v for i, v in zip(s1.get_inputs(), inputs)}
        ref = s1.run(None, feeds)
    except Exception:  # noqa: BLE001 - ORT cannot run it: the stored outputs, if any, decide
        if exec_bin and expected:
            return check_by_reference(binary, exec_bin, name, src, dst, inputs, expected, extra)
        return name, "ort-skip", ""
    try:
        p = tl.run_tool(binary, src, dst, *extra, timeout=120)
    except Exception as e:  # noqa: BLE001
        return name, "fail", f"tool did not finish: {e}"
    if p.returncode == 2:
        msg = p.stderr.strip().splitlines()
        return name, "refused", (msg[-1] if msg else "(no message)").replace(src, "MODEL")
    if p.returncode != 0:
        return name, "fail", f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    if glob.glob(glob.escape(dst) + ".tmp*"):
        return name, "fail", "temporary file left behind"
    try:
        s2 = tl.session(dst)
        got = s2.run(None, feeds)
    except Exception as e:  # noqa: BLE001
        return name, "fail", f"ORT cannot run the output: {str(e)[:300]}"
    names = [o.name for o in s1.get_outputs()]
    if names != [o.name for o in s2.get_outputs()]:
        return name, "fail", "output names changed"
    for n, a, b in zip(names, ref, got):
        err = tl.compare(n, a, b)
        if err:
            return name, "fail", err
    if not feeds:  # --constant-inputs: were the nodes folded away?
        import onnx
        if len(onnx.load(dst, load_external_data=False).graph.node) == 0:
            return name, "ok-folded", ""
    return name, "ok", ""


def data_dir_cases(name_filter):
    """(name, model bytes, inputs, stored outputs or None) of the models under
    onnx/backend/test/data."""
    import onnx
    from onnx import numpy_helper

    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    for sub in ("light", "pytorch-converted", "pytorch-operator", "simple"):
        for path in sorted(glob.glob(os.path.join(root, sub, "*"))):
            if path.endswith(".onnx"):  # light: no inputs stored
                name = f"{sub}/{os.path.basename(path)[:-5]}"
                if name_filter not in name:
                    continue
                with open(path, "rb") as f:
                    model = f.read()
                try:
                    inputs = list(tl.random_inputs(tl.session(model)).values())
                except Exception:  # noqa: BLE001 - ORT cannot run it: run_case counts it
                    inputs = []
                yield name, model, inputs, None
                continue
            model_path = os.path.join(path, "model.onnx")
            name = f"{sub}/{os.path.basename(path)}"
            if not os.path.exists(model_path) or name_filter not in name:
                continue
            def stored(kind):
                values = []
                for f in sorted(glob.glob(os.path.join(path, "test_data_set_0", kind + "_*.pb")),
                                key=lambda p: int(p.rsplit("_", 1)[1][:-3])):
                    t = onnx.TensorProto()
                    with open(f, "rb") as fh:
                        t.ParseFromString(fh.read())
                    values.append(numpy_helper.to_array(t))
                return values
            with open(model_path, "rb") as f:
                yield name, f.read(), stored("input"), stored("output")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--summary")
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--constant-inputs", action="store_true",
                    help="node tests only, with their inputs as initializers (tests constant folding)")
    ap.add_argument("--exec", dest="exec_bin",
                    help="onnx-tensat-exec: model files ONNX Runtime cannot run are checked on it against their stored outputs")
    argv = sys.argv[1:]
    argv, extra = tl.split_tool_flags(argv)
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import onnx.backend.test.case.node as node_cases

    cases = node_cases.collect_testcases(None)
    counts = {"ok": 0, "ok-folded": 0, "ok-reference": 0, "refused": 0, "ort-skip": 0, "fail": 0}
    refusals = {}
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        work = []
        for c in cases:
            if a.filter not in c.name or not c.data_sets:
                continue
            inputs, _ = c.data_sets[0]
            if a.constant_inputs:
                m = with_constant_inputs(c.model, list(inputs))
                if m is not None:
                    work.append((a.binary, c.name, m.SerializeToString(), [], tmp, extra, None, None))
                continue
            work.append((a.binary, c.name, c.model.SerializeToString(), list(inputs), tmp, extra, None, None))
        data_cases = 0
        for name, model, inputs, outputs in ([] if a.constant_inputs else data_dir_cases(a.filter)):
            work.append((a.binary, name, model, inputs, tmp, extra, a.exec_bin, outputs))
            data_cases += 1
        with ProcessPoolExecutor(max_workers=a.jobs) as ex:
            for name, status, msg in ex.map(run_case, work, chunksize=8):
                counts[status] += 1
                if status == "fail":
                    failures.append((name, msg))
                    print(f"FAIL {name}: {msg}", flush=True)
                elif status == "refused":
                    key = msg.split(": error: ")[-1][:300]
                    refusals.setdefault(key, []).append(name)
    runnable = counts["ok"] + counts["ok-folded"] + counts["ok-reference"] + counts["refused"] + counts["fail"]
    mode = " (inputs as constants)" if a.constant_inputs else ""
    print(f"backend node tests and data models{mode}: {len(work)} cases ({data_cases} model files), "
          f"{counts['ort-skip']} not runnable here, "
          f"{runnable} runnable: {counts['ok'] + counts['ok-folded']} optimized and equal under ONNX Runtime "
          f"({counts['ok-folded']} of them folded to constants), "
          f"{counts['ok-reference']} equal to their stored outputs on the reference executor (ONNX Runtime cannot "
          f"run them), {counts['refused']} refused with exit 2, {counts['fail']} failed")
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump({"counts": counts, "failures": failures,
                       "refusals": {k: v for k, v in sorted(refusals.items())}}, f, indent=1)
    print(f"{counts['ok'] + counts['ok-folded'] + counts['ok-reference'] + counts['refused']} passed, "
          f"{counts['fail']} failed")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
