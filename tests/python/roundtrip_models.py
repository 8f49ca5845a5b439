#!/usr/bin/env python3
"""Round trip: onnx-tensat IN OUT on every model given; ONNX Runtime outputs must match.

With the full pipeline (the binary accepts --report), also checks the end-to-end acceptance:
exit 0, verification passed, cost_after <= cost_before (same cost model).

usage: roundtrip_models.py ONNX_TENSAT MODEL.onnx... [-- EXTRA FLAGS]
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402


def main():
    args = sys.argv[1:]
    args, extra = tl.split_tool_flags(args)
    binary, models = args[0], args[1:]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            out = os.path.join(tmp, os.path.basename(m))
            rep = os.path.join(tmp, "report.json")
            pipeline = "--convert" not in extra
            t = time.time()
            p = tl.run_tool(binary, m, out, *extra, *(["--report", rep] if pipeline else []))
            dt = time.time() - t
            if p.returncode != 0:
                print(f"FAIL {m}: exit {p.returncode}: {p.stderr.strip()[-500:]}")
                failures += 1
                continue
            if pipeline:
                with open(rep) as f:
                    r = json.load(f)
                if r["verify"]["method"] != "off" and not r["verify"]["passed"]:
                    print(f"FAIL {m}: verification failed: {r['verify']}")
                    failures += 1
                    continue
                if r["cost_after"] > r["cost_before"] * (1 + 1e-9):
                    print(f"FAIL {m}: cost went up: {r['cost_before']} -> {r['cost_after']}")
                    failures += 1
                    continue
            sess = tl.session(m)
            feeds = tl.random_inputs(sess, seed=1)
            err = tl.compare_models(m, out, feeds)
            if err:
                print(f"FAIL {m}: {err}")
                failures += 1
            else:
                extra_info = ""
                if pipeline:
                    extra_info = f", cost {r['cost_before']:.4f} -> {r['cost_after']:.4f} ms ({r['cost_model']})"
                print(f"ok   {os.path.basename(m)} ({dt:.2f} s{extra_info})")
            os.remove(out)
    print(f"{len(models) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
