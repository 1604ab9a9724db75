#!/bin/bash
# ab_kchunk.sh ROUNDS CASES PKG PANEL_BYTES_A PANEL_BYTES_B : alternating processes of one build, A first in even rounds
R=$1; C=$2; P=$3; A=$4; B=$5
for r in $(seq 0 $((R-1))); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  if (( r % 2 == 0 )); then order="A B"; else order="B A"; fi
  for x in $order; do
    if [ $x = A ]; then K=$A; else K=$B; fi
    PYTHONPATH=$P:${REPO:-.} python3 "$(dirname "$0")/kchunk_time.py" $K $C | sed "s/^/round $r load $load $x /"
  done
done
