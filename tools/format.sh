#!/usr/bin/env bash
# Formats the tree in place: C++ (clang-format, .clang-format), BUILD/.bzl (buildifier),
# Python (ruff format + the safe fixes of ruff check, ruff.toml). Then `git diff` shows
# what changed. Install: apt-get install clang-format; npm install -g @bazel/buildifier@8.2.1;
# pip install -r requirements-dev.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z 'native/*.cc' 'native/*.h' 'native/*.inc' | xargs -0 clang-format -i
git ls-files -z '*BUILD' '*BUILD.bazel' '*.bzl' 'MODULE.bazel' | xargs -0 buildifier
ruff format .
ruff check --fix .
