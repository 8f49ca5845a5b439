#!/usr/bin/env python3
"""The same input and flags give the same output bytes.

usage: determinism.py ONNX_TENSAT MODEL.onnx...
"""
import hashlib
import os
import subprocess
import sys
import tempfile


def main():
    binary, models = sys.argv[1], sys.argv[2:]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            digests = []
            for k in range(2):
                out = os.path.join(tmp, f"out{k}.onnx")
                p = subprocess.run([binary, m, out, "-q"], capture_output=True, text=True, timeout=600)
                if p.returncode != 0:
                    print(f"FAIL {m}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
                    failures += 1
                    break
                with open(out, "rb") as f:
                    digests.append(hashlib.sha256(f.read()).hexdigest())
            if len(digests) == 2:
                if digests[0] != digests[1]:
                    print(f"FAIL {m}: two runs wrote different bytes")
                    failures += 1
                else:
                    print(f"ok   {os.path.basename(m)}")
    print(f"{len(models) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
