#!/usr/bin/env python3
"""External data through onnx-tensat, against ONNX Runtime.

A model saved by onnx with its tensors in an external file (onnx's layout, as every model over
2 GB and many LLM exports are) must optimize with exit 0, and its output must compute what the
input computes under ONNX Runtime: written inline when small, and with --external-data into
OUT.data beside it (re-read by ONNX Runtime from the output's folder). Locations that leave
the model's folder (`..`, absolute paths, symlinks) are refused with exit 2 and a message, and
nothing is written.

usage: external_data.py ONNX_TENSAT [-- EXTRA TOOL FLAGS]  (the full tool: it uses --external-data)
"""
import os
import shutil
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402
import zoo_models  # noqa: E402


def save_external(model, path, location):
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=location,
                    size_threshold=0, convert_attribute=True)


def uses_external(path):
    m = onnx.load(path, load_external_data=False)
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer)


def main():
    argv = sys.argv[1:]
    argv, extra = tl.split_tool_flags(argv)
    binary = argv[0]
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what, flush=True)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        src_dir = os.path.join(tmp, "in")
        out_dir = os.path.join(tmp, "out")
        os.makedirs(src_dir)
        os.makedirs(out_dir)
        src = os.path.join(src_dir, "mobilenet.onnx")
        save_external(zoo_models.mobilenet_block(3), src, "mobilenet.weights")
        check(uses_external(src) and os.path.exists(os.path.join(src_dir, "mobilenet.weights")),
              "the input keeps its tensors in mobilenet.weights")
        feeds = tl.random_inputs(tl.session(src), seed=5)

        # 1. Small output: written inline.
        dst = os.path.join(out_dir, "inline.onnx")
        p = tl.run_tool(binary, src, dst, *extra)
        check(p.returncode == 0, f"external-data input optimizes (exit {p.returncode}: {p.stderr.strip()[-300:]})")
        if p.returncode == 0:
            check(not uses_external(dst) and not os.path.exists(dst + ".data"), "a small output is written inline")
            e = tl.compare_models(src, dst, feeds)
            check(e == "", f"inline output equals the input under ONNX Runtime {e}")

        # 2. --external-data: OUT.data beside the output, read back by ONNX Runtime.
        dst = os.path.join(out_dir, "ext.onnx")
        p = tl.run_tool(binary, src, dst, "--external-data", *extra)
        check(p.returncode == 0, f"--external-data (exit {p.returncode}: {p.stderr.strip()[-300:]})")
        if p.returncode == 0:
            check(uses_external(dst) and os.path.exists(dst + ".data"), "the output's tensors are in ext.onnx.data")
            locs = {kv.value for t in onnx.load(dst, load_external_data=False).graph.initializer
                    for kv in t.external_data if kv.key == "location"}
            check(locs == {"ext.onnx.data"}, f"locations are relative to the output's folder: {locs}")
            e = tl.compare_models(src, dst, feeds)
            check(e == "", f"external-data output equals the input under ONNX Runtime {e}")
            left = [f for f in os.listdir(out_dir) if ".tmp" in f]
            check(not left, f"no temporary files left: {left}")
            # Moved elsewhere together, the pair still loads (the location is relative).
            moved = os.path.join(tmp, "moved")
            os.makedirs(moved)
            shutil.copy(dst, moved)
            shutil.copy(dst + ".data", moved)
            e = tl.compare_models(src, os.path.join(moved, "ext.onnx"), feeds)
            check(e == "", f"the output and its data file move together {e}")
            # And the output goes through the tool again (external data in and out).
            again = os.path.join(out_dir, "again.onnx")
            p = tl.run_tool(binary, dst, again, "--external-data", *extra)
            check(p.returncode == 0 and tl.compare_models(src, again, feeds) == "",
                  f"the external-data output round-trips once more (exit {p.returncode})")

        # 3. Locations outside the model's folder are refused.
        secret = os.path.join(tmp, "secret.bin")
        with open(secret, "wb") as f:
            f.write(b"\0" * (1 << 16))
        for label, loc in (("'..'", "../secret.bin"), ("an absolute path", secret), ("a symlink", "link.bin")):
            d = os.path.join(tmp, "evil_" + label.strip("'").replace(" ", "_").replace(".", "dot"))
            os.makedirs(d)
            m = onnx.load(src, load_external_data=False)
            for t in m.graph.initializer:
                if t.data_location == onnx.TensorProto.EXTERNAL:
                    for kv in t.external_data:
                        if kv.key == "location":
                            kv.value = loc
            if loc == "link.bin":
                os.symlink(secret, os.path.join(d, "link.bin"))
            evil = os.path.join(d, "evil.onnx")
            with open(evil, "wb") as f:
                f.write(m.SerializeToString())
            dst = os.path.join(d, "out.onnx")
            p = tl.run_tool(binary, evil, dst, *extra)
            msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
            check(p.returncode == 2 and "evil.onnx" in msg and not os.path.exists(dst),
                  f"a location through {label} is refused with exit 2 ({p.returncode}: {msg})")

    print(f"{'0 failed' if not failures else str(len(failures)) + ' failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
