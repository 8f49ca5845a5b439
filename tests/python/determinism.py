#!/usr/bin/env python3
"""The same input and flags give the same output bytes, also on a loaded machine.

Each model is optimized twice: once as it comes, once while busy processes keep every core
occupied. The extraction's budget is counted work, not seconds (extract/README.md,
"Budget"), so the second run must write the same bytes and report the same extraction.

usage: determinism.py ONNX_TENSAT MODEL.onnx...
"""
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile


def spin(stop):
    x = 0
    while not stop.is_set():
        for _ in range(10000):
            x = (x * 6364136223846793005 + 1) & 0xFFFFFFFFFFFFFFFF


def run(binary, model, out, report):
    p = subprocess.run([binary, model, out, "-q", "--report", report], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        return f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    return None


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def extraction(report):
    with open(report) as f:
        e = json.load(f)["extraction"]
    return {k: e.get(k) for k in ("status", "gap", "work_budget", "work_used")}


def main():
    binary, models = sys.argv[1], sys.argv[2:]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            results = []
            for k, loaded in enumerate((False, True)):
                out, report = os.path.join(tmp, f"out{k}.onnx"), os.path.join(tmp, f"report{k}.json")
                stop = multiprocessing.Event()
                load = [multiprocessing.Process(target=spin, args=(stop,))
                        for _ in range(2 * os.cpu_count() if loaded else 0)]
                for p in load:
                    p.start()
                try:
                    err = run(binary, m, out, report)
                finally:
                    stop.set()
                    for p in load:
                        p.join()
                if err:
                    print(f"FAIL {m}: {err}")
                    break
                results.append((digest(out), extraction(report)))
            if len(results) != 2:
                failures += 1
            elif results[0] != results[1]:
                print(f"FAIL {m}: idle and loaded runs differ: {results[0]} vs {results[1]}")
                failures += 1
            else:
                print(f"ok   {os.path.basename(m)}: {results[0][1]}")
    print(f"{len(models) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
