/* Bookkeeping of the row-tile CSR product (kernels/csr_tiles.cu): plain C
 * that nvcc compiles for host and device and the C tests (tests/test_csr.c)
 * and the launcher share, so what the tests check is what the kernel does.
 *
 * A work item is a tile of consecutive rows. A block of COOP_TILE_THREADS
 * threads works in groups of `lanes` threads, one row per group, so one pass
 * of the block covers COOP_TILE_THREADS / lanes rows; a tile is `passes` such
 * passes. Rows longer than COOP_TILE_LONG_ITERS x lanes nonzeros are taken
 * by a whole warp instead (a group would loop too long beside short rows).
 * Which tile a row falls in never changes its sum: the order of a row's
 * additions depends on lanes (from the matrix) and the row only. */
#ifndef COOP_CSR_TILES_CUH
#define COOP_CSR_TILES_CUH

#ifdef __CUDACC__
#define COOP_TILE_HD __host__ __device__
#else
#define COOP_TILE_HD
#endif

enum {
  COOP_TILE_THREADS = 256, /* 8 warps, the block of csr.cu's vector kernel */
  COOP_TILE_MAX_PASSES = 4,
  COOP_TILE_LONG_ITERS = 8,
  /* tiles per resident block that the pass count aims at: enough for a
   * block that drew a heavy tile to take fewer of the rest */
  COOP_TILE_PER_BLOCK = 8
};

/* Lanes per row from the mean row length x 100: about half the mean, a power
 * of two from 1 to 32 (the rule of csr.cu's vector plan), so most rows take
 * two strides of their group. */
static COOP_TILE_HD inline int coop_tile_lanes(long long mean_x100) {
  int l = 1;
  while (l < 32 && mean_x100 > 200LL * l) l *= 2;
  return l;
}

/* A row of len nonzeros goes to a whole warp (lanes < 32 only). */
static COOP_TILE_HD inline int coop_tile_long_row(long long len, int lanes) {
  return lanes < 32 && len > (long long)COOP_TILE_LONG_ITERS * lanes;
}

/* Passes per tile: 1 to COOP_TILE_MAX_PASSES, the most that still leaves
 * COOP_TILE_PER_BLOCK tiles to each of `resident` blocks. Small matrices get
 * one-pass tiles (all the parallelism there is); large ones up to four, so a
 * tile of a regular matrix holds about 256 x 4 x 2 = 2 K nonzeros (24 KB),
 * which hides the scheduler's one round trip to L2 per tile. */
static COOP_TILE_HD inline int coop_tile_passes(long long nrows, int lanes, long long resident) {
  const long long per_pass = COOP_TILE_THREADS / lanes;
  const long long want = (resident > 0 ? resident : 1) * COOP_TILE_PER_BLOCK * per_pass;
  long long p = nrows / (want > 0 ? want : 1);
  if (p < 1) p = 1;
  return (int)(p < COOP_TILE_MAX_PASSES ? p : COOP_TILE_MAX_PASSES);
}

static COOP_TILE_HD inline long long coop_tile_rows(int lanes, int passes) {
  return (long long)(COOP_TILE_THREADS / lanes) * passes;
}

static COOP_TILE_HD inline long long coop_tile_count(long long nrows, long long tile_rows) {
  return (nrows + tile_rows - 1) / tile_rows;
}

/* Rows [*r0, *r1) of tile t; the last tile ends at nrows. */
static COOP_TILE_HD inline void coop_tile_range(long long t, long long tile_rows, long long nrows,
                                                long long *r0, long long *r1) {
  *r0 = t * tile_rows;
  *r1 = *r0 + tile_rows < nrows ? *r0 + tile_rows : nrows;
}

/* Blocks a launch takes: static and atomic a persistent grid of at most the
 * resident blocks (no more than tiles); clc one block per tile. */
static COOP_TILE_HD inline long long coop_tile_blocks(long long tiles, long long resident, int one_per_tile) {
  if (one_per_tile) return tiles;
  return tiles < resident ? tiles : resident;
}

/* Static: tiles block g of `blocks` takes (g, g + blocks, ...); the rule of
 * coop_sched::static_share (kernels/sched.cuh), which the kernel runs. */
static COOP_TILE_HD inline long long coop_tile_static_share(long long g, long long blocks, long long tiles) {
  return g < tiles ? (tiles - g + blocks - 1) / blocks : 0;
}

/* Atomic: counter values one launch takes. Every block takes until it draws
 * one past the last tile, so a launch takes every tile once and one more per
 * block; the counter is never reset, and the next launch starts there. */
static COOP_TILE_HD inline long long coop_tile_atomic_takes(long long tiles, long long blocks) {
  return tiles + blocks;
}

#endif
