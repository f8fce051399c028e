/* The tile and strip plans of the relaxation kernels (relax_geom_try,
 * ring3_plan, queue_tickets: kernels/stencil_relax.cuh) on the host: no GPU
 * is needed, the plans are host code. 2D: warp tasks of at most kRing2Rows
 * rows cover the box once, and the persistent kernel's queue takes the
 * tickets its warps will draw. 3D: Every box's strips cover its
 * planes exactly once and stay within kStripPlanes where the task bound
 * allows; the per-step kernel's 32-bit thread numbers never wrap; the rows
 * bench/results/2026-12-02-h200-3d-strips.md measured keep their plans. */
#include <algorithm>
#include <vector>

#include "kernels/stencil_relax.cuh"
#include "tests/unit.h"

namespace {

struct Box {
  int nch, qn, mn;
  long long blocks;
};

/* the plan of one box, checked against the invariants every plan keeps */
RelaxGeom plan(const Box &b) {
  RelaxGeom g = {};
  g.nch = b.nch;
  g.qn = b.qn;
  g.mn = b.mn;
  CU_ASSERT_EQUAL_FATAL(ring3_plan(&g, b.blocks), 0);
  const long long tx = (b.nch + kTileX - 1LL) / kTileX, ty = (b.qn + kTileY - 1LL) / kTileY;
  CU_ASSERT_EQUAL(g.tx, tx);
  CU_ASSERT_EQUAL(g.ty, ty);
  CU_ASSERT_FATAL(g.rz >= 1 && g.rz <= b.mn);
  const long long strips = (b.mn + g.rz - 1LL) / g.rz;
  /* the kernel's strips: strip k covers [k rz, min((k + 1) rz, mn)), none empty */
  CU_ASSERT((strips - 1) * g.rz < b.mn && strips * g.rz >= b.mn);
  CU_ASSERT_EQUAL((long long)g.btasks, tx * ty * strips);
  /* launch mode: a block a task, thread numbers blockIdx.x x RELAX_THREADS in 32 bits */
  CU_ASSERT(((long long)g.btasks + b.blocks) * RELAX_THREADS < (1LL << 32));
  return g;
}

void test_short_strips(void) {
  /* boxes whose tasks fit the bound: strips of at most kStripPlanes planes */
  const Box boxes[] = {{257, 512, 512, 528}, {129, 256, 256, 528}, {129, 512, 512, 528}, {256, 511, 511, 528},
                       {3, 4, 13, 528},      {21, 36, 30, 528},    {35, 30, 25, 3},      {67, 17, 21, 1},
                       {1025, 2048, 300, 528}};
  for (const Box &b : boxes) CU_ASSERT(plan(b).rz <= kStripPlanes);
}

void test_measured_rows(void) {
  /* the plans the H200 rows ran (132 SMs x 4 blocks): 512^3 fp64 257 chunks,
   * 43 strips of 12 planes; 256^3 fp64 and 512^3 fp32 129 chunks */
  CU_ASSERT_EQUAL(plan({257, 512, 512, 528}).rz, 12);
  CU_ASSERT_EQUAL(plan({257, 512, 512, 528}).btasks, 9u * 64u * 43u);
  CU_ASSERT_EQUAL(plan({129, 256, 256, 528}).rz, 10);
  CU_ASSERT_EQUAL(plan({129, 512, 512, 528}).rz, 12);
}

void test_small_boxes(void) {
  /* one plane, two planes, and a box smaller than the resident blocks: strips
   * of one plane fill the blocks */
  CU_ASSERT_EQUAL(plan({1, 1, 1, 528}).btasks, 1u);
  CU_ASSERT_EQUAL(plan({1, 1, 2, 528}).rz, 1);
  CU_ASSERT_EQUAL(plan({21, 36, 30, 528}).rz, 1);
}

void test_thin_tall_boxes(void) {
  /* one tile over 2.1e8 and 2e9 planes: 12-plane strips would take more than
   * 2^24 tasks, so the strips grow instead of the thread numbers wrapping */
  const RelaxGeom a = plan({1, 1, 210000000, 528}), b = plan({1, 1, 2000000000, 528});
  CU_ASSERT(a.rz > kStripPlanes);
  CU_ASSERT(b.rz > a.rz);
  /* a cross-section of 4097 chunks x 16384 rows: 264,192 tiles */
  CU_ASSERT(plan({4097, 16384, 16384, 528}).rz > kStripPlanes);
}

void test_too_many_tiles(void) {
  /* more tiles than the per-step kernel can number: refused (the caller
   * names the box and asks for more ranks) */
  RelaxGeom g = {};
  g.nch = 1 << 20;
  g.qn = 1 << 20;
  g.mn = 4;
  CU_ASSERT_EQUAL(ring3_plan(&g, 528), -1);
}

/* 3D two sweeps a pass (ring3_pair_plan): tiles of kPairTileY rows whose
 * strips cover the planes once, beside the one-sweep plan it leaves alone
 * (the pass's stop at an odd iteration takes one plain sweep on it) */
void test_pair_tiles(void) {
  const Box boxes[] = {{257, 512, 512, 396}, {67, 23, 21, 3}, {33, 20, 33, 396}, {1, 1, 1, 396},
                       {4097, 16384, 16384, 396}};
  for (const Box &b : boxes) {
    RelaxGeom g = plan(b);
    const RelaxGeom one = g;
    CU_ASSERT_EQUAL_FATAL(ring3_pair_plan(&g, b.blocks, 2), 0);
    const long long ty = (b.qn + kPairTileY - 1LL) / kPairTileY;
    CU_ASSERT_EQUAL(g.pty, ty);
    CU_ASSERT_EQUAL(g.tx, one.tx);
    CU_ASSERT_EQUAL(g.pabsorb, 0); /* x1 unset: no last column of one point */
    CU_ASSERT_EQUAL(g.ptx, g.tx);
    CU_ASSERT(g.ty == one.ty && g.rz == one.rz && g.btasks == one.btasks);
    CU_ASSERT_FATAL(g.prz >= 1 && g.prz <= b.mn);
    const long long strips = (b.mn + g.prz - 1LL) / g.prz;
    CU_ASSERT((strips - 1) * g.prz < b.mn && strips * g.prz >= b.mn);
    CU_ASSERT_EQUAL((long long)g.pbtasks, g.ptx * ty * strips);
    /* the tiles' written rows cover the box's rows once: tile t writes
     * [t kPairTileY, min((t + 1) kPairTileY, qn)) */
    CU_ASSERT((ty - 1) * kPairTileY < b.qn && ty * kPairTileY >= b.qn);
    if (b.mn >= 4 * COOP_PAIR3_PLANES && b.nch < 1000) CU_ASSERT(g.prz <= COOP_PAIR3_PLANES);
  }
}

/* The last tile along x sweeps the region's last point as its outer column
 * where that point is alone in its chunk and the chunks before it fill whole
 * tiles: 512^3 with ghost 1 (fp64 257 chunks, fp32 129), not 511 or 33 chunks */
void test_pair_absorb(void) {
  struct Case {
    int nch, x1, V, absorb, ptx;
  } cases[] = {{257, 513, 2, 1, 8}, {129, 513, 4, 1, 4}, {257, 512, 2, 0, 9}, {33, 65, 2, 0, 2},
               {65, 129, 2, 1, 2}, {65, 257, 4, 1, 2}, {66, 131, 2, 0, 3}, {256, 514, 2, 0, 8}};
  for (const Case &k : cases) {
    RelaxGeom g = {};
    g.nch = k.nch;
    g.x1 = k.x1;
    g.qn = 512;
    g.mn = 512;
    CU_ASSERT_EQUAL_FATAL(ring3_pair_plan(&g, 264, k.V), 0);
    CU_ASSERT_EQUAL(g.pabsorb, k.absorb);
    CU_ASSERT_EQUAL(g.ptx, k.ptx);
    /* the tiles cover the chunks but the absorbed one, the last tile whole */
    CU_ASSERT(g.ptx * kTileX >= k.nch - g.pabsorb && (g.ptx - 1) * kTileX < k.nch - g.pabsorb);
    if (g.pabsorb) CU_ASSERT_EQUAL(g.ptx * kTileX, k.nch - 1);
  }
}

/* the 2D geometry of an n0 x n1 box of precision p, ghost 1, for `blocks`
 * resident blocks */
RelaxGeom geom2(int64_t n0, int64_t n1, coop_precision p, long long blocks) {
  coop_stencil s = {};
  const int64_t n[3] = {n0, n1, 1};
  coop_grid_init(&s.grid, 2, p, n, 1);
  const coop_region own = coop_region_owned(&s.grid);
  RelaxGeom g;
  CU_ASSERT_EQUAL_FATAL(relax_geom_try(&s, &own, blocks * RELAX_THREADS, &g), 0);
  return g;
}

/* The persistent solve's warps over `sweeps` sweeps, as relax_range_ring
 * runs them: warp w starts at task w, then draws (ring2_drawn, ring2_task)
 * or steps by the warps; the warps finish tasks in a random order. Every
 * task runs once a sweep, and a sweep takes exactly queue_tickets()
 * tickets, so the next sweep's base is right. */
void play_sweeps(const RelaxGeom &G, unsigned blocks, int sweeps, unsigned seed) {
  const unsigned nw = blocks * (RELAX_THREADS / 32), wtasks = G.wtasks;
  const unsigned long long per = queue_tickets(G, 2, blocks);
  const bool drawn = ring2_drawn(wtasks, nw);
  unsigned long long ctr = 0;
  std::vector<unsigned> cur(nw), live, ran(wtasks);
  /* rows of each warp column the tasks cover, the strips reversed every
   * other sweep (sweep_reversed) */
  const unsigned nxs = (unsigned)(G.nch + 31) / 32, nst = nxs ? wtasks / nxs : 0;
  const bool whole = wtasks == (unsigned)ring2_wtasks(G, G.wry); /* not a hand-set task count */
  std::vector<unsigned> cov((size_t)nxs * G.mn);
  for (int k = 0; k < sweeps; k++) {
    const unsigned long long base = (unsigned long long)k * per;
    std::fill(ran.begin(), ran.end(), 0u);
    std::fill(cov.begin(), cov.end(), 0u);
    live.clear();
    for (unsigned w = 0; w < nw; w++) {
      cur[w] = w;
      if (w < wtasks) live.push_back(w);
    }
    while (!live.empty()) {
      seed = seed * 1664525u + 1013904223u;
      const size_t i = (seed >> 8) % live.size();
      const unsigned w = live[i];
      ran[cur[w]]++;
      if (whole) {
        const unsigned strip = ring2_strip(cur[w], nxs, nst, (k & 1) != 0), col = cur[w] % nxs;
        CU_ASSERT_FATAL(strip < nst);
        for (long long r = (long long)strip * G.wry; r < G.mn && r < (long long)(strip + 1) * G.wry; r++)
          cov[(size_t)col * G.mn + (size_t)r]++;
      }
      cur[w] = drawn ? ring2_task(wtasks, nw, ctr++ - base) : cur[w] + nw;
      if (cur[w] >= wtasks) {
        live[i] = live.back();
        live.pop_back();
      }
    }
    CU_ASSERT_EQUAL_FATAL(ctr, base + per);
    CU_ASSERT_EQUAL(std::count(ran.begin(), ran.end(), 1u), (long)wtasks);
    if (whole) CU_ASSERT_EQUAL(std::count(cov.begin(), cov.end(), 1u), (long)cov.size());
  }
}

/* 16384^2 fp32 on `blocks` blocks: 4097 chunks a row (the first ghost's
 * chunk too), 129 warp columns x 1024 strips of 16 rows (the long strips ry
 * rows), far more tasks than warps: every task past the first wave is drawn,
 * one failed draw a warp */
RelaxGeom drawn_16k(unsigned blocks, int ry, unsigned seed) {
  const RelaxGeom g = geom2(16384, 16384, COOP_FP32, blocks);
  CU_ASSERT_EQUAL(g.ry, ry);
  CU_ASSERT_EQUAL(g.wry, 16);
  CU_ASSERT_EQUAL(g.wtasks, 129u * 1024u);
  CU_ASSERT_EQUAL(queue_tickets(g, 2, blocks), 129ULL * 1024ULL);
  play_sweeps(g, blocks, 2, seed);
  return g;
}

void test_ring2_tasks(void) {
  /* 528 blocks (4224 warps) */
  const RelaxGeom a = drawn_16k(528, 512, 1);
  /* the n-step kernel deals tasks in turn: one long task a warp again */
  RelaxGeom l = a;
  ring2_long_tasks(&l);
  CU_ASSERT_EQUAL(l.wry, 512);
  CU_ASSERT_EQUAL(l.wtasks, 129u * 32u);
  CU_ASSERT_EQUAL(queue_tickets(l, 2, 528), 0ULL); /* 4128 tasks, 4224 warps */
  /* the same box on 396 blocks (3 a SM, the 2D kernels' occupancy): 3168
   * warps, strips of 16 still (ry 683), so the same tasks, more of them drawn */
  drawn_16k(396, 683, 3);
  /* 1024^2 fp32: 257 chunks (9 warp columns), strips of 3 rows fill the
   * threads once, fewer tasks than warps: nobody draws, no tickets */
  const RelaxGeom b = geom2(1024, 1024, COOP_FP32, 528);
  CU_ASSERT_EQUAL(b.wry, 3);
  CU_ASSERT_EQUAL(b.wtasks, 9u * 342u);
  CU_ASSERT_EQUAL(queue_tickets(b, 2, 528), 0ULL);
  play_sweeps(b, 528, 2, 2);
  /* the gpu.sh case g2d-queue: 203 x 1201 fp64 on 2 blocks (16 warps):
   * 102 chunks (4 warp columns) x 76 strips, the last of 1 row */
  const RelaxGeom c = geom2(203, 1201, COOP_FP64, 2);
  CU_ASSERT_EQUAL(c.wry, 16);
  CU_ASSERT_EQUAL(c.wtasks, 4u * 76u);
  for (unsigned seed = 0; seed < 50; seed++) play_sweeps(c, 2, 3, seed);
  /* the boundary: as many tasks as warps (nobody draws), one more (all do) */
  RelaxGeom e = c;
  e.wtasks = 16;
  CU_ASSERT_EQUAL(queue_tickets(e, 2, 2), 0ULL);
  play_sweeps(e, 2, 3, 7);
  e.wtasks = 17;
  CU_ASSERT_EQUAL(queue_tickets(e, 2, 2), 17ULL);
  play_sweeps(e, 2, 3, 7);
  /* 3D: every task and one failed draw a block */
  const RelaxGeom d = plan({257, 512, 512, 528});
  CU_ASSERT_EQUAL(queue_tickets(d, 3, 528), (unsigned long long)d.btasks + 528ULL);
}

void test_ring2_bound(void) {
  /* 4 x (2^30 - 8192) fp32 (one warp column): 2^26 tasks of 16 rows would
   * pass the launch kernel's 32-bit thread numbers; the plan keeps the long
   * strips rather than refusing the box */
  const RelaxGeom g = geom2(4, (1LL << 30) - 8192, COOP_FP32, 528);
  CU_ASSERT_EQUAL(g.wry, g.ry);
  CU_ASSERT(g.ry > kRing2Rows);
}

}  // namespace

int main(void) {
  unsetenv("COOP_RING2_ROWS"); /* read once, at the first plan */
  unsetenv("COOP_RING3_STRIPS"); /* the benchmarks' override: the plan's own choice here */
  static const coop_unit_test tests[] = {
      {"strips of at most kStripPlanes planes", test_short_strips},
      {"the measured rows keep their plans", test_measured_rows},
      {"small boxes fill the blocks", test_small_boxes},
      {"thin tall boxes: longer strips, no wrapped thread numbers", test_thin_tall_boxes},
      {"too many tiles refused", test_too_many_tiles},
      {"3D two-sweep tiles", test_pair_tiles},
      {"3D two-sweep: the last column absorbed", test_pair_absorb},
      {"2D warp tasks and the queue's tickets", test_ring2_tasks},
      {"2D: long tasks where short ones would not fit", test_ring2_bound},
  };
  return coop_unit_run("relax_plan", tests, sizeof tests / sizeof tests[0]);
}
