#!/usr/bin/env python3
"""Self-test of tensat_testlib.compare, the comparison every ONNX Runtime cross-check uses:
equal NaN patterns and equal infinities pass, anything else fails, within the float tolerance."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import tensat_testlib as tl  # noqa: E402

nan, inf = np.nan, np.inf
CASES = [  # (reference, result, passes)
    ([nan, inf, -inf, 1.0], [nan, inf, -inf, 1.0], True),      # ONNX's fmod edge cases: NaN where NaN
    ([nan, 1.0], [1.0, 1.0], False),                            # NaN pattern differs
    ([inf, 1.0], [-inf, 1.0], False),                           # sign of an infinity
    ([inf, 1.0], [nan, 1.0], False),
    ([inf, 1.0], [3.0e38, 1.0], False),
    ([1.0, 2.0], [1.0, 2.0 + 1e-5], True),                      # within rtol 1e-3
    ([1.0, 2.0], [1.0, 2.1], False),
]
failed = 0
for ref, got, ok in CASES:
    err = tl.compare("t", np.array(ref, np.float32), np.array(got, np.float32))
    if (err == "") != ok:
        failed += 1
        print(f"FAIL {ref} vs {got}: expected {'pass' if ok else 'failure'}, got {err!r}")
print(f"{len(CASES) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
