#!/bin/bash
# tools/bench/fdm_gpu_docs.sh — FDM through the documents against C's rows on a GPU machine
# (tools/bench/fdm-results.md, "the documents sampler on a GPU"). Not a test. Prepare here:
#   jsmf vocab debdesc.txt.zst -o debdesc.vocab
#   sh ../shared/tools/gpu-bundle debdesc.vocab ../shared/corpora/debdesc/debdesc.txt.zst DSTORE
# (DSTORE: tools/bench/fit's N=100k K=100 documents store, named dstore), then on the device:
#   bash tools/bench/fdm_gpu_docs.sh    with .gpu carried; the log goes to $OUT/log.txt.
# Every unit test bundled runs first; then the rows of the table, then the default command.
set -u
. .gpu/env.sh
L=$OUT/log.txt
exec > >(tee -a "$L") 2>&1
D=$GPU_DATA; W=/tmp/w; mkdir -p $W $OUT/sum
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
( while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; sleep 0.5; done ) > $W/mem.log 2>/dev/null &
MP=$!
step() { # a command, timed, its exit status printed
    echo "== $(date +%T) $*"; /usr/bin/time -f "   [%e s wall, %U+%S cpu, %M KB]" timeout 150 "$@"; echo "   rc=$?"; }
peak() { sort -n $W/mem.log | tail -1; : > $W/mem.log; }
fdm() { # name store args...
  n=$1; s=$2; shift 2
  : > $W/mem.log
  step jsmf fdm $s -o $W/$n --force --checkpoint-every 0 "$@"
  echo "   gpu mem peak MiB: $(peak)"
  [ -f $W/$n/summary.json ] && cp $W/$n/summary.json $OUT/sum/$n.json
  [ -f $W/$n/summary.json ] && python3 - $W/$n/summary.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); f=d['fdm']; s=f['sampler']
print("   %s: loss %.5f heldout %.5f pairs/s %.0f steps %d train %.2fs total %.2fs sampler %s where=%s bytes=%d dropped=%s thinned=%s"%(
 f['device'],d['metrics']['loss'],d['metrics']['heldout_pair_loss'],f['pairs_per_second'],f['steps_done'],
 d['timings']['train'],d['timings']['total'],s['strategy'].split(' ')[0],s.get('where'),s.get('bytes',0),s.get('dropped_mass'),s.get('thinned')))
PY
}
echo "== unit tests"
for t in .gpu/bin/test_*; do step $t | tail -3; done
echo "== debdesc stores"
step jsmf ingest $W/dd.docs $D/debdesc.txt.zst --vocab $D/debdesc.vocab -q
step jsmf ingest $W/dd.rows $D/debdesc.txt.zst --vocab $D/debdesc.vocab --hold rows -q
R="--init random --starts 1"
fdm dd50.docs.cuda $W/dd.docs -k 50 $R --steps 5000 --device cuda
fdm dd50.rows.cuda $W/dd.rows -k 50 $R --steps 5000 --device cuda
fdm dd50.docs.cpu  $W/dd.docs -k 50 $R --steps 1000 --device cpu
fdm dd500.docs.cuda $W/dd.docs -k 500 $R --steps 2000 --device cuda
fdm dd500.rows.cuda $W/dd.rows -k 500 $R --steps 2000 --device cuda
fdm dd50.default.cuda $W/dd.docs -k 50 --device cuda
echo "== N=100k K=100 documents store"
jsmf info $D/dstore | head -8
fdm n100k.docs.cuda $D/dstore -k 100 $R --steps 5000 --device cuda
fdm n100k.docs.cuda.b64k $D/dstore -k 100 $R --steps 1000 --batch 65536 --device cuda
fdm n100k.docs.cpu $D/dstore -k 100 $R --steps 200 --device cpu
fdm n100k.default $D/dstore -k 100 --device cuda
kill $MP 2>/dev/null
tar czf $OUT/summaries.tgz -C $OUT sum && rm -rf $OUT/sum
echo "== done $(date +%T)"
