#!/usr/bin/env python3
"""Fails when the repository carries large files it should not: a tracked file over the limit
(5 MB) that scripts/large-files.allow does not list as data, or tracked non-data files that add
up to more than the limit. Build outputs, wheels and downloads do not belong in the repository.

usage: check-repo-size.py [REPO_DIR] [--limit-mb 5]
Lists tracked files with `git ls-files` (every file below REPO_DIR when it is not a git checkout).
"""
import argparse
import fnmatch
import os
import subprocess
import sys


def tracked(repo):
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True, check=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(repo):
            dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(root, n), repo) for n in names]
        return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--limit-mb", type=float, default=5.0)
    a = ap.parse_args()
    limit = int(a.limit_mb * 1e6)
    allow_file = os.path.join(a.repo, "scripts", "large-files.allow")
    patterns = [l.strip() for l in open(allow_file) if l.strip() and not l.startswith("#")]
    errors, source_total, data_total = [], 0, 0
    for path in tracked(a.repo):
        full = os.path.join(a.repo, path)
        if not os.path.isfile(full):
            continue  # deleted in the working tree
        size = os.path.getsize(full)
        if any(fnmatch.fnmatch(path, p) for p in patterns):
            data_total += size
            continue
        source_total += size
        if size > limit:
            errors.append(f"{path}: {size / 1e6:.1f} MB, over {a.limit_mb:g} MB and not listed as data in "
                          f"scripts/large-files.allow")
    if source_total > limit:
        errors.append(f"tracked non-data files add up to {source_total / 1e6:.1f} MB, over {a.limit_mb:g} MB")
    for e in errors:
        print("check-repo-size:", e)
    print(f"check-repo-size: {source_total / 1e6:.2f} MB of source, {data_total / 1e6:.2f} MB of allow-listed data"
          f"{'' if not errors else ', FAILED'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
