#!/usr/bin/env python3
"""Round trip: onnx-tensat IN OUT on every model given; ONNX Runtime outputs must match.

usage: roundtrip_models.py ONNX_TENSAT MODEL.onnx... [-- EXTRA FLAGS]
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        k = args.index("--")
        args, extra = args[:k], args[k + 1:]
    binary, models = args[0], args[1:]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            out = os.path.join(tmp, os.path.basename(m))
            t = time.time()
            p = tl.run_tool(binary, m, out, *extra)
            dt = time.time() - t
            if p.returncode != 0:
                print(f"FAIL {m}: exit {p.returncode}: {p.stderr.strip()[-500:]}")
                failures += 1
                continue
            sess = tl.session(m)
            feeds = tl.random_inputs(sess, seed=1)
            err = tl.compare_models(m, out, feeds)
            if err:
                print(f"FAIL {m}: {err}")
                failures += 1
            else:
                print(f"ok   {os.path.basename(m)} ({dt:.2f} s)")
            os.remove(out)
    print(f"{len(models) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
