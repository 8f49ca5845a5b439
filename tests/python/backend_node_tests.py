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
ConstantOfShape), on their own inputs, or on random ones where they have none.

usage: backend_node_tests.py ONNX_TENSAT [--summary FILE.json] [--filter SUBSTR] [-- EXTRA TOOL FLAGS]
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


def run_case(args):
    binary, name, model_bytes, inputs, tmp, extra = args
    src = os.path.join(tmp, name.replace("/", "_") + ".onnx")
    dst = os.path.join(tmp, name.replace("/", "_") + ".out.onnx")
    with open(src, "wb") as f:
        f.write(model_bytes)
    try:
        s1 = tl.session(src)
        feeds = {i.name: v for i, v in zip(s1.get_inputs(), inputs)}
        ref = s1.run(None, feeds)
    except Exception:  # noqa: BLE001 - ORT cannot run it: not counted
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
    return name, "ok", ""


def data_dir_cases(name_filter):
    """(name, model bytes, inputs) of the models under onnx/backend/test/data."""
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
                yield name, model, inputs
                continue
            model_path = os.path.join(path, "model.onnx")
            name = f"{sub}/{os.path.basename(path)}"
            if not os.path.exists(model_path) or name_filter not in name:
                continue
            inputs = []
            for f in sorted(glob.glob(os.path.join(path, "test_data_set_0", "input_*.pb")),
                            key=lambda p: int(p.rsplit("_", 1)[1][:-3])):
                t = onnx.TensorProto()
                with open(f, "rb") as fh:
                    t.ParseFromString(fh.read())
                inputs.append(numpy_helper.to_array(t))
            with open(model_path, "rb") as f:
                yield name, f.read(), inputs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--summary")
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=2)
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import onnx.backend.test.case.node as node_cases

    cases = node_cases.collect_testcases(None)
    counts = {"ok": 0, "refused": 0, "ort-skip": 0, "fail": 0}
    refusals = {}
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        work = []
        for c in cases:
            if a.filter not in c.name or not c.data_sets:
                continue
            inputs, _ = c.data_sets[0]
            work.append((a.binary, c.name, c.model.SerializeToString(), list(inputs), tmp, extra))
        data_cases = 0
        for name, model, inputs in data_dir_cases(a.filter):
            work.append((a.binary, name, model, inputs, tmp, extra))
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
    runnable = counts["ok"] + counts["refused"] + counts["fail"]
    print(f"backend node tests and data models: {len(work)} cases ({data_cases} model files), "
          f"{counts['ort-skip']} not runnable by ONNX Runtime, "
          f"{runnable} runnable: {counts['ok']} optimized and equal, {counts['refused']} refused with exit 2, "
          f"{counts['fail']} failed")
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump({"counts": counts, "failures": failures,
                       "refusals": {k: v for k, v in sorted(refusals.items())}}, f, indent=1)
    print(f"{counts['ok'] + counts['refused']} passed, {counts['fail']} failed")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
