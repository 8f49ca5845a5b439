#!/usr/bin/env python3
"""onnx-tensat-extract's command line: results, --repeat and exit codes.

1. FILE --repeat 3: exit 0, one JSON object with "runs": 3, the median time (time_s_min <= time_s),
   the same extraction cost and status as a single run.
2. Bad input, each exit 2 with a message naming the file: a missing file, invalid JSON, a node
   with an unknown child.
3. Usage errors, each exit 2: --repeat 0, an unknown flag, no file.

usage: extract_cli.py ONNX_TENSAT_EXTRACT EGRAPH.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def expect(cond, what, proc=None):
    if not cond:
        extra = f"\n  exit {proc.returncode}\n  stdout: {proc.stdout}\n  stderr: {proc.stderr}" if proc else ""
        raise SystemExit(f"FAIL: {what}{extra}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("egraph")
    a = ap.parse_args()

    once = run([a.tool, a.egraph])
    expect(once.returncode == 0, "a single run exits 0", once)
    single = json.loads(once.stdout)
    expect("runs" not in single, "a single run reports no 'runs'", once)

    rep = run([a.tool, a.egraph, "--repeat", "3"])
    expect(rep.returncode == 0, "--repeat 3 exits 0", rep)
    lines = [l for l in rep.stdout.splitlines() if l.strip()]
    expect(len(lines) == 1, "--repeat 3 prints one JSON object", rep)
    r = json.loads(lines[0])
    expect(r.get("runs") == 3, "--repeat 3 reports runs = 3", rep)
    expect(r["time_s_min"] <= r["time_s"], "time_s_min <= time_s (the median)", rep)
    expect(r["cost"] == single["cost"] and r["status"] == single["status"],
           "--repeat gives the single run's cost and status", rep)
    print(f"ok   --repeat 3: cost {r['cost']}, status {r['status']}, median {r['time_s']:.4f} s")

    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "no-such-egraph.json")
        invalid = os.path.join(tmp, "invalid.json")
        with open(invalid, "w") as f:
            f.write('{"nodes": {"a": {"op": "x"')
        unknown = os.path.join(tmp, "unknown-child.json")
        with open(unknown, "w") as f:
            json.dump({"nodes": {"a": {"op": "x", "children": ["zz"], "eclass": "c1", "cost": 1.0}},
                       "root_eclasses": ["c1"]}, f)
        for path, words in [(missing, "cannot open file"), (invalid, "invalid JSON"), (unknown, "unknown child")]:
            p = run([a.tool, path, "--repeat", "2"])
            expect(p.returncode == 2, f"{os.path.basename(path)} exits 2", p)
            expect(path in p.stderr and words in p.stderr, f"{os.path.basename(path)}: the message names the file "
                   f"and says '{words}'", p)
            expect(p.stdout.strip() == "", f"{os.path.basename(path)}: nothing on stdout", p)
            print(f"ok   {os.path.basename(path)}: exit 2, {p.stderr.strip()}")

    for args, words in [([a.egraph, "--repeat", "0"], "--repeat"), ([a.egraph, "--bogus"], "bogus"), ([], "file")]:
        p = run([a.tool] + args)
        expect(p.returncode == 2, f"usage error {args} exits 2", p)
        expect(words in p.stderr, f"usage error {args}: the message mentions '{words}'", p)
        print(f"ok   usage error {args}: exit 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
