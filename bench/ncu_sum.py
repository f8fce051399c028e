#!/usr/bin/env python3
"""Per-kernel sums of an ncu --csv run of coopsolve multigrid (.devkit call scripts:
ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,
dram__bytes_write.sum,launch__registers_per_thread -k 'regex:step_kernel|sweep_kernel' ...):
launches, time, DRAM bytes a launch and bandwidth by (op, grid size), longest first.
  bench/ncu_sum.py FILE.csv [ROWS]"""
import csv, sys, re, collections
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')))
k = collections.OrderedDict()
for r in rows:
    k.setdefault(r['ID'], {'name': r['Kernel Name'], 'grid': r.get('Grid Size',''), 'block': r.get('Block Size','')})[r['Metric Name']] = (r['Metric Value'].replace(',',''), r['Metric Unit'])
agg = collections.OrderedDict()
tot = 0
for i, d in k.items():
    m = re.search(r'step_kernel<(\w+), (\d+)>', d['name'])
    op = m.group(2) if m else ('RB_SWEEP' if 'sweep_kernel' in d['name'] else d['name'][:30])
    t, tu = d['gpu__time_duration.sum']; t = float(t) * {'nsecond':1e-3,'ns':1e-3,'us':1,'usecond':1,'ms':1e3,'msecond':1e3}[tu]
    def b(x):
        v, u = d[x]; return float(v) * {'byte':1,'Kbyte':1e3,'Mbyte':1e6,'Gbyte':1e9,'B':1,'KB':1e3,'MB':1e6,'GB':1e9}[u]
    rd, wr = b('dram__bytes_read.sum'), b('dram__bytes_write.sum')
    key = (op, d['grid'])
    a = agg.setdefault(key, [0, 0.0, 0.0, 0.0, d['launch__registers_per_thread'][0]])
    a[0] += 1; a[1] += t; a[2] += rd; a[3] += wr
    tot += t
# step_kernel's ops in mg_steps.cuh's enum order (op 0 was RB_COLOUR, one colour in place, before the tile sweep)
ops = 'RB_COLOUR SMOOTH_JAC COPY NORM RESTRICT PROLONG COARSE_B COARSE_X UNPACK PACK SHIFTED_RHS'.split()
print('total us', round(tot,1), 'kernels', len(k))
for (op, g), a in sorted(agg.items(), key=lambda x: -x[1][1])[:int(sys.argv[2]) if len(sys.argv)>2 else 25]:
    name = ops[int(op)] if op.isdigit() else op
    print(f"{name:10s} grid {g:>14s} n {a[0]:3d} us {a[1]:9.1f} per {a[1]/a[0]:8.1f} rdMB {a[2]/a[0]/1e6:8.1f} wrMB {a[3]/a[0]/1e6:8.1f} GB/s {(a[2]+a[3])/a[1]/1e3:7.0f} regs {a[4]}")
