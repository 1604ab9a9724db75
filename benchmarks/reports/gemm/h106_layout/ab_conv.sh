#!/bin/bash
# ab_conv.sh ROUNDS CASES PKG_A PKG_B : alternating processes, A first in even rounds
R=$1; C=$2; A=$3; B=$4
for r in $(seq 0 $((R-1))); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  if (( r % 2 == 0 )); then order="A B"; else order="B A"; fi
  for x in $order; do
    if [ $x = A ]; then P=$A; else P=$B; fi
    PYTHONPATH=$P:${REPO:-.} python3 "$(dirname "$0")/conv_time.py" $C | sed "s/^/round $r load $load $x /"
  done
done
