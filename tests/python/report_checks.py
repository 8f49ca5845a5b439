"""What the end-to-end tests of onnx-tensat's flags share (standard library only): one run of
the tool that returns its JSON report, and a list of named checks printed as they go."""
from __future__ import annotations

import json
import os
import subprocess


def run_report(tool, model, tmp, flags):
    """onnx-tensat MODEL TMP/out.onnx with `flags` (no verification or measurement): its JSON
    report; a failing run ends the test with its command and stderr."""
    out = os.path.join(tmp, "out.onnx")
    report = os.path.join(tmp, "report.json")
    cmd = [tool, model, out, "--verify", "off", "--measure", "off", "-q", "--report", report] + flags
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr}")
    with open(report) as f:
        return json.load(f)


class Checks:
    """check(cond, what) prints "ok" or "FAIL" and the description; done() prints the summary
    and returns the exit status."""

    def __init__(self):
        self.failures = []

    def __call__(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)

    def done(self):
        if self.failures:
            print(f"{len(self.failures)} check(s) failed")
            return 1
        print("all checks passed")
        return 0
