#!/bin/bash
# usage: run_grid.sh TIMEOUT_S "GPUS..." "MODELS..."
T=$1; GPUS=$2; MODELS=$3
cd /tmp/sailor_out
for g in $GPUS; do for m in $MODELS; do for k in a100 mixed; do
  c=${m}_${g}_${k}
  [ -f cells/$c.json ] && continue
  echo "=== $c start $(date +%T)"
  /usr/bin/time -f "%e s wall %U user %S sys %M KB maxrss" timeout $T /usr/bin/python3 run_cell.py $m $g $k cells/$c.json > logs/$c.log 2> logs/$c.err
  rc=$?; echo "rc=$rc" >> logs/$c.err
  [ $rc -ne 0 ] && echo "{\"model\":\"$m\",\"gpus\":$g,\"kind\":\"$k\",\"global_batch\":$((4*g)),\"error\":\"process exit code $rc (124 = killed by timeout ${T}s)\"}" > cells/$c.failed.json
  tail -3 logs/$c.err | cut -c1-400
  gzip -f logs/$c.log
done; done; done
