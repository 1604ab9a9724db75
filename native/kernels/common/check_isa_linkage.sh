#!/bin/bash
# The linkage check of isa_library (../kernel_family.bzl): an archive compiled with an ISA's
# flags must define no symbol with vague linkage (nm types W, V, u: inline functions and
# template instances emitted as COMDAT). The linker keeps one copy of such a symbol for the
# whole program, so a std::log(float) or header helper compiled here with AVX-512 could be
# the one every baseline caller runs. One exception: DW.ref.__gxx_personality_v0, the
# pointer to the C++ personality routine that exception tables refer to (ThreadSanitizer's
# instrumentation adds them): data, the same in every object, no ISA-specific code.
# Arguments: the library's output files.
set -uo pipefail
status=0
checked=0
for lib in "$@"; do
  case "$lib" in
    *.a) ;;
    *) continue ;;
  esac
  checked=$((checked + 1))
  if ! symbols=$(nm -C --defined-only "$lib"); then
    echo "FAIL: nm could not read $lib"
    status=1
    continue
  fi
  vague=$(echo "$symbols" | awk '$2 ~ /^[WVu]$/ && $3 != "DW.ref.__gxx_personality_v0"')
  if [ -n "$vague" ]; then
    echo "FAIL: $lib defines symbols with vague linkage (use C functions, builtins or an"
    echo "unnamed namespace instead; see native/kernels/common/README.md):"
    echo "$vague"
    status=1
  else
    echo "ok: $lib"
  fi
done
if [ "$checked" -eq 0 ]; then
  echo "FAIL: no archive among: $*"
  status=1
fi
exit $status
