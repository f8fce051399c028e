/* The 3D tile march's plan (ring3_plan, kernels/stencil_relax.cuh) on the
 * host: no GPU is needed, the plan is host code. Every box's strips cover its
 * planes exactly once and stay within kStripPlanes where the task bound
 * allows; the per-step kernel's 32-bit thread numbers never wrap; the rows
 * bench/results/2026-12-02-h200-3d-strips.md measured keep their plans. */
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

}  // namespace

int main(void) {
  unsetenv("COOP_RING3_STRIPS"); /* the benchmarks' override: the plan's own choice here */
  static const coop_unit_test tests[] = {
      {"strips of at most kStripPlanes planes", test_short_strips},
      {"the measured rows keep their plans", test_measured_rows},
      {"small boxes fill the blocks", test_small_boxes},
      {"thin tall boxes: longer strips, no wrapped thread numbers", test_thin_tall_boxes},
      {"too many tiles refused", test_too_many_tiles},
  };
  return coop_unit_run("relax_plan", tests, sizeof tests / sizeof tests[0]);
}
