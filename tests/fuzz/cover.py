#!/usr/bin/env python3
"""cover.py CONTROL OUT_DIR MAX [SIZE_WEIGHT] — cut a grown fuzz corpus to a small seed corpus.

CONTROL is the control file of a libFuzzer merge run with edge features only, e.g.
  fuzz_uci -merge=1 -use_counters=0 -use_cmp=0 -merge_control_file=CONTROL /tmp/empty SEEDS NEW
Run it where the merge ran (the file names inputs by the paths given to it). It lists each
input's features; this copies at most MAX inputs into OUT_DIR, chosen greedily by
new features per byte (size + SIZE_WEIGHT, default 2000), and says how many features they keep."""
import os
import shutil
import sys

ctl, out, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
size_weight = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
lines = open(ctl).read().split('\n')
n = int(lines[0])
files = lines[2:2 + n]
feats = {}
for line in lines[2 + n:]:
    p = line.split()
    if p and p[0] == 'FT':
        feats[int(p[1])] = set(map(int, p[2:]))
todo = set().union(*feats.values()) if feats else set()
total, chosen = len(todo), []
while todo and len(chosen) < cap:
    best = max(feats, key=lambda i: (len(feats[i] & todo) / (os.path.getsize(files[i]) + size_weight),
                                     -os.path.getsize(files[i])))
    if not feats[best] & todo:
        break
    chosen.append(best)
    todo -= feats[best]
os.makedirs(out, exist_ok=True)
for i in chosen:
    shutil.copy(files[i], os.path.join(out, os.path.basename(files[i])))
print(f"{len(chosen)} inputs keep {total - len(todo)} of {total} features")
