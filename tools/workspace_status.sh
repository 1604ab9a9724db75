#!/usr/bin/env bash
# Bazel's --workspace_status_command: the source revision the wheel records (STABLE_ keys
# re-run only the stamped actions that read them: the wheel's zip step).
rev=$(git rev-parse HEAD 2>/dev/null) || rev=unknown
if [ "$rev" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  rev="$rev-dirty"
fi
echo "STABLE_ONNX_LIGHT_REVISION $rev"
