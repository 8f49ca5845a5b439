#!/usr/bin/env python3
"""Checks the dependency graph between the parts against ARCHITECTURE.md.

ARCHITECTURE.md's table "Allowed dependencies" names each part (a folder) and the parts it may
depend on. This script fails when a source file of a part includes a header of a part it may
not depend on, or when a part's CMakeLists.txt links a tensat_* library of such a part.

usage: check_deps.py [REPO_DIR]        check the tree
       check_deps.py --self-test       check that a planted forbidden include is caught
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ROW = re.compile(r"^\|\s*`([a-z_/]+)`\s*\|\s*([^|]*)\|", re.M)
LINK = re.compile(r"target_link_libraries\s*\(\s*(tensat_\w+)([^)]*)\)", re.S)
SOURCES = (".h", ".hpp", ".cpp", ".cu", ".cuh")
# Library targets -> the part that builds them.
TARGETS = {
    "tensat_support": "support", "tensat_lang": "lang", "tensat_exec": "exec", "tensat_egraph": "egraph",
    "tensat_refexec": "refexec", "tensat_onnx_model": "onnx_model", "tensat_importer": "importer",
    "tensat_exporter": "exporter", "tensat_rules": "rules", "tensat_rule_check": "rules/check",
    "tensat_taso_rules": "rules/taso", "tensat_taso_instances": "rules/taso", "tensat_taso_proto": "rules/taso",
    "tensat_extract": "extract", "tensat_gpu_cost": "gpu_cost", "tensat_pipeline": "pipeline",
}
EXTERNAL_TARGETS = {"tensat_cudnn"}


def read_rules(repo):
    text = open(os.path.join(repo, "ARCHITECTURE.md")).read()
    section = text.split("## Allowed dependencies", 1)[1].split("\n## ", 1)[0]
    allowed = {}
    for part, deps in ROW.findall(section):
        deps = deps.strip()
        allowed[part] = set() if deps in ("", "—", "-") else {d.strip(" `") for d in deps.split(",")}
        if "*" in allowed[part]:
            allowed[part] = {"*"}
    if not allowed:
        raise SystemExit("check_deps: ARCHITECTURE.md has no 'Allowed dependencies' table")
    return allowed


def part_of(path, parts):
    """The deepest part whose folder contains `path` (a repository-relative path), or None."""
    best = None
    for p in parts:
        if path == p or path.startswith(p + "/"):
            if best is None or len(p) > len(best):
                best = p
    return best


def check(repo, extra=None):
    """Violations as strings. `extra` maps repository-relative paths to file contents that are
    checked as if they were in the tree (the self-test plants one)."""
    allowed = read_rules(repo)
    parts = sorted(allowed)
    files = dict(extra or {})
    for part in parts:
        root = os.path.join(repo, part)
        for dirpath, dirnames, names in os.walk(root):
            rel_dir = os.path.relpath(dirpath, repo)
            # A nested part (rules/check inside rules) is checked as itself.
            dirnames[:] = [d for d in dirnames if os.path.join(rel_dir, d) not in allowed or part == os.path.join(rel_dir, d)]
            for n in names:
                rel = os.path.join(rel_dir, n)
                if part_of(rel, parts) != part:
                    continue
                if n.endswith(SOURCES) or n == "CMakeLists.txt":
                    files.setdefault(rel, None)
    errors = []
    for rel, content in sorted(files.items()):
        part = part_of(rel, parts)
        if part is None:
            continue
        ok = allowed[part]
        if content is None:
            with open(os.path.join(repo, rel), errors="replace") as f:
                content = f.read()
        if rel.endswith("CMakeLists.txt"):
            for target, args in LINK.findall(content):
                if TARGETS.get(target) != part:
                    continue
                for lib in re.findall(r"\btensat_\w+", args):
                    dep = TARGETS.get(lib)
                    if lib in EXTERNAL_TARGETS or dep is None or dep == part or "*" in ok or dep in ok:
                        continue
                    errors.append(f"{rel}: {target} links {lib} (part '{dep}'), which '{part}' may not depend on")
            continue
        for lineno, line in enumerate(content.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            dep = part_of(m.group(1), parts)
            if dep is None or dep == part or "*" in ok or dep in ok:
                continue
            errors.append(f"{rel}:{lineno}: includes \"{m.group(1)}\" (part '{dep}'), which '{part}' may not "
                          f"depend on (ARCHITECTURE.md allows: {', '.join(sorted(ok)) or 'nothing'})")
    return errors


def self_test(repo):
    planted = {"exporter/zz_planted.cpp": '#include "importer/importer.h"\n',
               "lang/CMakeLists.txt": "target_link_libraries(tensat_lang PUBLIC tensat_egraph)\n"}
    errors = check(repo, planted)
    want = ["exporter/zz_planted.cpp:1: includes \"importer/importer.h\"", "tensat_lang links tensat_egraph"]
    missing = [w for w in want if not any(w in e for e in errors)]
    if missing:
        print("check_deps self-test: planted violations not reported:", missing)
        return 1
    print("check_deps self-test: planted violations reported:")
    for e in errors:
        print("  ", e)
    return 0


def main():
    args = sys.argv[1:]
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    if args and args[0] == "--self-test":
        return self_test(repo)
    if args:
        repo = args[0]
    errors = check(repo)
    for e in errors:
        print("check_deps:", e)
    n = len(read_rules(repo))
    print(f"check_deps: {n} parts, {len(errors)} forbidden dependencies")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
