/* The multigrid cycle's steps on one rank (solvers/mg/mg_cuda.cu runs them on
 * the GPU): the device form of the levels, each step's work on item t,
 * t + T, ... (host and device code, so tests/test_mg_steps.cu runs the same
 * steps on the host against the host cycle), and the cycle's recording. */
#ifndef COOP_MG_STEPS_CUH
#define COOP_MG_STEPS_CUH

#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "solvers/mg/mg_level.h"

#define COOP_MG_HD __host__ __device__ __forceinline__

namespace coop_mg_steps {

/* n / d for 32-bit n and a fixed d (Granlund and Montgomery): a multiply-high
 * and two shifts instead of a division in every point's index. */
struct FastDiv {
  uint32_t d, m;
  int s1, s2;
};

inline FastDiv fast_div(uint32_t d) {
  int l = 0;
  while ((1ull << l) < d) l++;
  const uint64_t m = ((1ull << 32) * ((1ull << l) - d)) / d + 1;
  return {d, (uint32_t)m, l ? 1 : 0, l ? l - 1 : 0};
}

COOP_MG_HD uint32_t quot(const FastDiv &f, uint32_t n) {
#ifdef __CUDA_ARCH__
  const uint32_t t = __umulhi(f.m, n);
#else
  const uint32_t t = (uint32_t)(((uint64_t)f.m * n) >> 32);
#endif
  return (t + ((n - t) >> f.s1)) >> f.s2;
}

/* One axis of a level: coefficients, volumes and the transfers to the next
 * level (mg_level.h; one rank, so global indices are local ones). */
struct Axis {
  const double *wl, *wr, *vol;
  const int64_t *par[2];
  const double *p[2];
  const int *nkid;
  const int64_t *kid;
  const double *kq;
};

struct Lev {
  void *u, *f, *r;
  uint32_t n[3], points;
  int64_t sy, sz, base; /* strides of j and k, index of point (0, 0, 0) */
  double shift;         /* the operator is shift I + A (the implicit heat step) */
  FastDiv dx, dy;       /* by n[0], n[1] */
  Axis ax[3];
};

struct Dev {
  int ndim, nlev;
  double omega;
  Lev lev[COOP_MG_MAX_LEVELS];
  const double *cinv; /* the coarsest level's S^-1, cn x cn, in the band's numbering */
  double *cb;         /* its right-hand side, V f */
  int64_t cn, cs[3];
  double *part;       /* reduction partials, a block each */
  double *sum;
};

/* RB_COLOUR: one colour of a red-black sweep (arg bit 0), in place on u.
 * SMOOTH_JAC: one sweep from u to r or from r to u (arg bit 1), so a sweep
 * reads one array and writes another once; r's ghosts hold u's. */
enum Op { RB_COLOUR, SMOOTH_JAC, COPY, NORM, RESTRICT, PROLONG, COARSE_B, COARSE_X, UNPACK, PACK, SHIFTED_RHS };

struct Step {
  int op, lev, arg; /* arg: bit 0 the colour of RB_COLOUR, bit 1 from r to u (SMOOTH_JAC) */
};

COOP_MG_HD void point_of(const Lev &L, uint32_t item, uint32_t &i, uint32_t &j, uint32_t &k) {
  const uint32_t q = quot(L.dx, item);
  i = item - q * L.n[0];
  k = quot(L.dy, q);
  j = q - k * L.n[1];
}

COOP_MG_HD int64_t index_of(const Lev &L, uint32_t i, uint32_t j, uint32_t k) {
  return L.base + (int64_t)i + L.sy * j + L.sz * k;
}

/* The neighbours' pull and the diagonal, as the host's pull_ (mg_host_impl.h). */
template <class R>
COOP_MG_HD R pull(const Lev &L, int ndim, const R *u, int64_t p, uint32_t i, uint32_t j,
                                  uint32_t k, R &d) {
  const R lx = (R)L.ax[0].wl[i], rx = (R)L.ax[0].wr[i], ly = (R)L.ax[1].wl[j], ry = (R)L.ax[1].wr[j];
  R s = lx * u[p - 1] + rx * u[p + 1] + (ly * u[p - L.sy] + ry * u[p + L.sy]);
  d = (lx + rx) + (ly + ry);
  if (ndim == 3) {
    const R lz = (R)L.ax[2].wl[k], rz = (R)L.ax[2].wr[k];
    s += lz * u[p - L.sz] + rz * u[p + L.sz];
    d += lz + rz;
  }
  d += (R)L.shift;
  return s;
}

/* Items of a step: what its threads share out. */
COOP_MG_HD uint32_t items_of(const Dev &D, const Step &s) {
  if (s.op == RESTRICT) return D.lev[s.lev + 1].points;
  if (s.op == COARSE_X) return D.lev[s.lev].points * 32u; /* a warp a row */
  return D.lev[s.lev].points;
}

/* Item t, t + T, ... of step s; returns this thread's sum of squares (NORM).
 * OP >= 0: the step's op known when compiled, so a kernel of one op holds
 * only its registers. */
template <class R, int OP = -1>
COOP_MG_HD double run_step(const Dev &D, const Step &s, uint32_t t, uint32_t T, const R *vin,
                                           R *vout) {
  const int op = OP >= 0 ? OP : s.op;
  const Lev &L = D.lev[s.lev];
  const uint32_t items = items_of(D, s);
  const int ndim = D.ndim;
  R *u = (R *)L.u, *r = (R *)L.r;
  const R *f = (const R *)L.f;
  double sum = 0.0;
  const R *src = s.arg & 2 ? r : u;
  R *dst = s.arg & 2 ? u : r;
  for (uint32_t item = t; item < items; item += T) {
    uint32_t i, j, k;
    if (op == RESTRICT) { /* f(C) = R (f - A u)(F), u(C) = 0, kids in ascending order */
      const Lev &C = D.lev[s.lev + 1];
      uint32_t I, J, K;
      point_of(C, item, I, J, K);
      R acc = 0;
      for (int c = 0; c < L.ax[2].nkid[K]; c++) {
        const int64_t kk = L.ax[2].kid[3 * K + c];
        const double qz = L.ax[2].kq[3 * K + c];
        for (int b = 0; b < L.ax[1].nkid[J]; b++) {
          const int64_t jj = L.ax[1].kid[3 * J + b];
          const double qyz = L.ax[1].kq[3 * J + b] * qz;
          const int64_t row = L.base + L.sy * jj + L.sz * kk;
          for (int a = 0; a < L.ax[0].nkid[I]; a++) {
            const double w = L.ax[0].kq[3 * I + a] * qyz;
            const int64_t ii = L.ax[0].kid[3 * I + a], p = row + ii;
            R d;
            const R sn = pull(L, ndim, u, p, (uint32_t)ii, (uint32_t)jj, (uint32_t)kk, d);
            acc += (R)w * (f[p] - (d * u[p] - sn));
          }
        }
      }
      const int64_t pc = index_of(C, I, J, K);
      ((R *)C.f)[pc] = acc;
      ((R *)C.u)[pc] = 0;
      continue;
    }
    if (op == COARSE_X) { /* u = S^-1 b, a warp a point: its row (S^-1 is symmetric) read whole */
      const uint32_t lane = item & 31u;
      point_of(L, item >> 5, i, j, k);
      const int64_t m = i * D.cs[0] + j * D.cs[1] + k * D.cs[2];
      double acc = 0.0;
#ifdef __CUDA_ARCH__
      for (int64_t c = lane; c < D.cn; c += 32) acc += D.cinv[m * D.cn + c] * D.cb[c];
      for (int w = 16; w > 0; w >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, w);
#else /* the host's tests run one item at a time: lane 0 sums the row */
      if (lane) continue;
      for (int64_t c = 0; c < D.cn; c++) acc += D.cinv[m * D.cn + c] * D.cb[c];
#endif
      if (lane == 0) u[index_of(L, i, j, k)] = (R)acc;
      continue;
    }
    point_of(L, item, i, j, k);
    const int64_t p = index_of(L, i, j, k);
    switch (op) {
      case RB_COLOUR: /* the points of one colour, from their neighbours (the other colour) */
        if (((i + j + k) & 1) == (uint32_t)(s.arg & 1)) {
          R d;
          const R sn = pull(L, ndim, u, p, i, j, k, d);
          u[p] = (f[p] + sn) / d;
        }
        break;
      case SMOOTH_JAC: {
        R d;
        const R sn = pull(L, ndim, src, p, i, j, k, d);
        dst[p] = src[p] + (R)D.omega * (f[p] - (d * src[p] - sn)) / d;
        break;
      }
      case COPY: u[p] = r[p]; break;
      case NORM: {
        R d;
        const R sn = pull(L, ndim, u, p, i, j, k, d);
        const R res = f[p] - (d * u[p] - sn);
        sum += (double)res * (double)res;
        break;
      }
      case PROLONG: { /* u(F) += P u(C) */
        const Lev &C = D.lev[s.lev + 1];
        const R *uc = (const R *)C.u;
        R e = 0;
        for (int c = 0; c < 2; c++) {
          const double pz = L.ax[2].p[c][k];
          if (pz == 0.0) continue;
          for (int b = 0; b < 2; b++) {
            const double pyz = L.ax[1].p[b][j] * pz;
            if (pyz == 0.0) continue;
            for (int a = 0; a < 2; a++) {
              const double w = L.ax[0].p[a][i] * pyz;
              if (w == 0.0) continue;
              e += (R)w * uc[index_of(C, (uint32_t)L.ax[0].par[a][i], (uint32_t)L.ax[1].par[b][j],
                                      (uint32_t)L.ax[2].par[c][k])];
            }
          }
        }
        u[p] += e;
        break;
      }
      case COARSE_B:
        D.cb[i * D.cs[0] + j * D.cs[1] + k * D.cs[2]] =
            L.ax[0].vol[i] * L.ax[1].vol[j] * L.ax[2].vol[k] * (double)f[p];
        break;
      case UNPACK:
        ((R *)L.f)[p] = vin[item];
        u[p] = 0;
        break;
      case PACK: vout[item] = u[p]; break;
      case SHIFTED_RHS: /* f = shift u + source, as mg_host_impl.h's shifted_rhs_ */
        ((R *)L.f)[p] = (R)L.shift * u[p] + (vin ? vin[p] : (R)0);
        break;
    }
  }
  return sum;
}

/* Level l's sizes, strides and shift (its arrays are the caller's to set). */
inline void lev_shape(const coop_mg_hier *h, int l, Lev *d) {
  const coop_mg_level *L = &h->lev[l];
  for (int a = 0; a < 3; a++) d->n[a] = (uint32_t)L->grid.n[a];
  d->points = (uint32_t)coop_mg_level_points(h, l);
  d->sy = L->grid.ext[0];
  d->sz = L->grid.ext[0] * L->grid.ext[1];
  d->base = coop_grid_index(&L->grid, 0, 0, 0);
  d->shift = L->shift;
  d->dx = fast_div(d->n[0]);
  d->dy = fast_div(d->n[1]);
}

/* The cycle being recorded (steps: calloc'd, the caller frees them). */
struct Recorder {
  const coop_mg_hier *h;
  Step *steps;
  int n;
};

inline int add_step(Recorder *g, int op, int lev, int arg) {
  const coop_mg_hier *h = g->h;
  const int cap = 4096;
  if (!g->steps && !(g->steps = (Step *)calloc(cap, sizeof(Step))))
    return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  if (g->n == cap)
    return coop_error_input("solver.mg_cycle: the cycle has more than %d steps on the GPU (a W-cycle over %d levels); "
                            "use solver.mg_cycle = v or f", cap, h->nlev);
  g->steps[g->n++] = Step{op, lev, arg};
  return 0;
}

/* Red-black: two colours a sweep in place (reverse: black first). Jacobi:
 * sweeps from u to r and back; an odd last one is copied back. */
inline int record_smooth(Recorder *g, int l, int sweeps, int reverse) {
  if (g->h->smoother != COOP_MG_JACOBI) {
    for (int s = 0; s < sweeps; s++)
      for (int c = 0; c < 2; c++) COOP_CHECK(add_step(g, RB_COLOUR, l, reverse ? 1 - c : c));
    return 0;
  }
  for (int s = 0; s < sweeps; s++) COOP_CHECK(add_step(g, SMOOTH_JAC, l, (s & 1) << 1));
  return sweeps & 1 ? add_step(g, COPY, l, 0) : 0;
}

/* The steps of coop_mg_cycle (mg_level.c's cycle_at), one rank. */
inline int record_cycle(Recorder *g, int l, coop_mg_cycle_type type) {
  const coop_mg_hier *h = g->h;
  if (l == h->nlev - 1) {
    COOP_CHECK(add_step(g, COARSE_B, l, 0));
    return add_step(g, COARSE_X, l, 0);
  }
  COOP_CHECK(record_smooth(g, l, h->pre, 0));
  COOP_CHECK(add_step(g, RESTRICT, l, 0));
  COOP_CHECK(record_cycle(g, l + 1, type));
  if (type != COOP_MG_V && l + 1 < h->nlev - 1)
    COOP_CHECK(record_cycle(g, l + 1, type == COOP_MG_W ? COOP_MG_W : COOP_MG_V));
  COOP_CHECK(add_step(g, PROLONG, l, 0));
  return record_smooth(g, l, h->post, h->symmetric);
}

} // namespace coop_mg_steps

#endif
