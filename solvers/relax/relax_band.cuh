/* What the two on-chip whole solves (solvers/relax/relax_resident.cu: the field in
 * registers; solvers/relax/relax_smem.cu: in shared memory) share: one band of
 * consecutive owned rows per block, a thread per 16-byte chunk of a row
 * (ghost columns included), the chunk update, the band geometry. */
#ifndef COOP_RELAX_BAND_CUH
#define COOP_RELAX_BAND_CUH

#include <type_traits>

#include "kernels/stencil_relax.cuh"
#include "solvers/relax/relax_cuda.h"

namespace {

struct ResGeom {
  long long sy;     /* storage row stride */
  int a0, nch;      /* first chunk (storage x / V), chunks per row */
  int ox0, ox1;     /* owned x, storage coordinates */
  int om0;          /* first owned row (storage) */
  int base, extra;  /* rows of band b: base + (b < extra) */
  int groups, tg;   /* thread groups per block (a group's rows split likewise), threads per group */
  int f_smem;       /* f copied into shared memory (else read from L2 each sweep) */
  int save;         /* shared-memory kernel: room for the measured field of a check */
  int nsave;        /* register kernel: norm steps' fields a round keeps aside */
};

template <typename T>
__device__ __forceinline__ typename Vec16<T>::type vzero() {
  typename Vec16<T>::type z;
#pragma unroll
  for (int e = 0; e < Vec16<T>::n; e++) vset(z, e, (T)0);
  return z;
}

/* The band's edge rows (first, last) into dst at storage index q of the first
 * row's chunk, for the neighbouring bands to load after the barrier. */
template <typename T>
__device__ __forceinline__ void publish(T *dst, long long q, long long sy, int rows, unsigned om,
                                        bool below, bool above, const typename Vec16<T>::type &first,
                                        const typename Vec16<T>::type &last) {
  if (below) vstore_mask<T>(dst + q, first, om);
  if (above) vstore_mask<T>(dst + q + sy * (rows - 1), last, om);
}

/* A chunk's owned elements as word masks (all ones: owned, else zero).
 * Laundered through a mov so that the compiler cannot see they are 0 or ~0
 * and turn the LOP3 selects back into predicated ones. */
template <typename T>
struct ChunkMask {
  unsigned m[Vec16<T>::n];
};
template <typename T>
__device__ __forceinline__ ChunkMask<T> chunk_mask(unsigned om) {
  ChunkMask<T> k;
#pragma unroll
  for (int e = 0; e < Vec16<T>::n; e++) {
    const unsigned b = (om >> e) & 1u ? ~0u : 0u;
    asm("mov.b32 %0, %1;" : "=r"(k.m[e]) : "r"(b));
  }
  return k;
}
/* x where m is all ones, y where it is zero, bit by bit: one LOP3 a word */
__device__ __forceinline__ unsigned mask_sel(unsigned x, unsigned y, unsigned m) {
  unsigned d;
  asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(d) : "r"(x), "r"(y), "r"(m));
  return d;
}
__device__ __forceinline__ float mask_sel(float x, float y, unsigned m) {
  return __uint_as_float(mask_sel(__float_as_uint(x), __float_as_uint(y), m));
}
__device__ __forceinline__ double mask_sel(double x, double y, unsigned m) {
  return __hiloint2double((int)mask_sel((unsigned)__double2hiint(x), (unsigned)__double2hiint(y), m),
                          (int)mask_sel((unsigned)__double2loint(x), (unsigned)__double2loint(y), m));
}
/* x if element e is owned, else y: by a bit of om (a predicate each), or
 * by a word mask (a LOP3 each, no predicate). The four predicates took more
 * than the shared-memory kernel's row loop had left, so ptxas kept them in
 * a register's bits and unpacked them every row; in the register kernel
 * the masks spilled instead. */
template <typename T>
__device__ __forceinline__ T own_sel(unsigned om, int e, T x, T y) {
  return (om >> e) & 1u ? x : y;
}
template <typename T>
__device__ __forceinline__ T own_sel(const ChunkMask<T> &mk, int e, T x, T y) {
  return mask_sel(x, y, mk.m[e]);
}
/* Every element of the chunk owned (the warps between a row's first and
 * last): no select at all. */
struct AllOwned {};
template <typename T>
__device__ __forceinline__ T own_sel(const AllOwned &, int, T x, T) {
  return x;
}
/* Whether every chunk of the warp is owned (om: the thread's chunk's owned
 * elements), warp-uniform: such a warp takes the pass with AllOwned. */
template <typename T>
__device__ __forceinline__ bool warp_owns_all(unsigned om) {
  return __all_sync(0xffffffffu, om == (1u << Vec16<T>::n) - 1u);
}

/* One chunk of one row: the new values of its owned elements (own: om or
 * ChunkMask; the others keep ce) and, NORM, their squared residuals added
 * to sum; left and right are the x neighbours beyond the chunk, prev and
 * nxt the rows beside it. The same operands as relax_range, so the same
 * bits. */
template <typename T, bool HAS_F, bool UPDATE, bool NORM, bool SKIP0 = true, typename OWN = unsigned>
__device__ __forceinline__ typename Vec16<T>::type band_chunk(
    const typename Vec16<T>::type &cur, const typename Vec16<T>::type &prev,
    const typename Vec16<T>::type &nxt, const typename Vec16<T>::type &fv, T left, T right, const OWN &own,
    T w0, T w1, T diag, T c, double &sum) {
  constexpr int V = Vec16<T>::n;
  constexpr bool MASKS = !std::is_same<OWN, unsigned>::value;
  typename Vec16<T>::type out = cur;
  T sq[V];
#pragma unroll
  for (int e = 0; e < V; e++) {
    const T ce = vget(cur, e), l = vleft(cur, left, e), rr = vright(cur, right, e);
    const T res = relax_res2<T, HAS_F>(ce, l, rr, vget(prev, e), vget(nxt, e), HAS_F ? vget(fv, e) : (T)0, w0, w1, diag);
    if (UPDATE) vset(out, e, own_sel<T>(own, e, ce + c * res, ce));
    /* word masks without f: res is -A u; square A u, the same bits, so
     * that the negation stays folded into the update's FFMA */
    sq[e] = own_sel<T>(own, e, HAS_F || !MASKS ? res : -res, (T)0);
  }
  if (NORM) chunk_sq_add<T, V, SKIP0>(sq, sum);
  return out;
}

/* Chunks a row of the owned box spans, its ghost columns included (a
 * thread each): the plans' and the kernels' count. */
inline long long band_chunks(const coop_grid *gr) {
  const long long V = 16 / (long long)coop_prec_size(gr->prec);
  return (gr->g[0] + gr->n[0]) / V - (gr->g[0] - 1) / V + 1;
}

inline ResGeom make_geom(const coop_stencil *s, const coop_relax_resident *p) {
  const coop_grid *gr = &s->grid;
  const int V = 16 / (int)coop_prec_size(gr->prec);
  ResGeom g = {};
  g.sy = gr->ext[0];
  g.ox0 = (int)gr->g[0];
  g.ox1 = (int)(gr->g[0] + gr->n[0]);
  g.a0 = (g.ox0 - 1) / V;
  g.nch = (int)band_chunks(gr);
  g.om0 = (int)gr->g[1];
  g.base = (int)(gr->n[1] / p->blocks);
  g.extra = (int)(gr->n[1] % p->blocks);
  g.groups = p->groups;
  g.tg = p->threads / p->groups;
  g.f_smem = p->f_smem;
  g.save = p->save;
  g.nsave = p->nsave > 0 ? p->nsave : 1;
  return g;
}

}  // namespace

#endif
