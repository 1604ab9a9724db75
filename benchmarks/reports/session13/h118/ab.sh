#!/bin/bash
B=/work/h118/bazel-bin/native/kernels/nchwc/nchwc_conv_ab
for s in "40 240 28 1" "240 40 28 1" "112 672 14 1" "1152 320 7 1" "64 256 56 1" "512 2048 7 1" "64 64 56 3" "512 512 7 3"; do
  echo "== $s threads ${1:-1}"
  $B $s ${1:-1} 6 20
done
