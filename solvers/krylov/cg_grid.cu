/* CG (Hestenes-Stiefel) as one cooperative persistent kernel, and its entry in
 * the method table (solvers/krylov/krylov_grid.cuh). */
#include "solvers/krylov/krylov_grid.cuh"

namespace {

/* Barrier and residency: Red::sync (krylov_grid.cuh). Two barriers an iteration:
 *  A: p_new = z + beta p_old (two p buffers), q = A p_new with the columns'
 *     p_new recomputed from z and p_old; partial (p_new, q).
 *  B: alpha = rz / pq; x += alpha p_new; r -= alpha q; z = M r; partials
 *     (r, z), (r, r); then the stop test and beta.
 * Vectors: r, z (unused when M = I: z is r), p[2], q (streamed CSR only; the
 * stencil recomputes q in B from the stored p_new). Cached: x, p_new, q, r
 * and M's diagonal (then r itself is stored only when z is r).
 * Carried to the next iteration: x, r, z, p_new (as p_old), rz, beta. */
constexpr int kCached = 5;
constexpr int kMinBlocks[] = {3, 4}; /* resident blocks an SM on CSR, stencil: 85, 64 registers */

template <int KIND>
__global__ void __launch_bounds__(kThreads, kMinBlocks[KIND]) cg_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  double *const R = P.v[0], *const Z = P.d ? P.v[1] : P.v[0], *const Q = P.v[4];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  double rz, beta = 0.0;
  bool first = !P.resume, odd = false;
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep(save, P.x[i], own(0, k));
      keep(save, R[i], own(3, k));
      if (!save) own(4, k) = dget(P, i);
    });
  };

  long long it0 = 0; /* the last iteration checked before the loop */
  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, rz, beta);
  } else { /* r = b - A x; z = M r; p = z (in the first phase A) */
    double acc[2] = {0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double ri = residual_row<KIND>(P, i, p, xi), zi = mul(dget(P, i), ri);
      R[i] = ri;
      if (P.d) Z[i] = zi;
      acc[0] = dacc(acc[0], ri, zi);
      acc[1] = dacc(acc[1], ri, ri);
      if (cached) {
        own(0, k) = xi;
        own(3, k) = ri;
        own(4, k) = dget(P, i);
      }
    }, P.x, P.b, P.d ? P.d : P.b);
    double s[2];
    all_sum<2>(grid, red, acc, s);
    rz = s[0];
    first_check(P, t, s[1]);
  }

  for (long long it = it0 + 1; !t.reason; it++) {
    double *const pn = odd ? P.v[3] : P.v[2];
    const double *const po = odd ? P.v[2] : P.v[3];
    { /* phase A */
      const auto pnew = [&](long long j) {
        const double zj = Z[j];
        return first ? zj : add(zj, mul(beta, po[j]));
      };
      double acc[1] = {0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double pi = pnew(i), qi = apply_row<KIND>(P, i, p, pi, pnew);
        pn[i] = pi;
        acc[0] = dacc(acc[0], pi, qi);
        if (cached)
          own_put(k, 1, pi, qi);
        else if constexpr (KIND == COOP_KG_CSR)
          Q[i] = qi;
      }, Z, po);
      block_partial<1>(acc, red);
    }
    double pq[1];
    grid_sum<1>(grid, red, pq);
    if (!(pq[0] > 0.0)) { /* no update; NaN is NaN, as in solvers/krylov/cg.c */
      t.reason = isnan(pq[0]) ? COOP_DIVERGED_NAN : COOP_DIVERGED_INDEFINITE_MAT;
      break;
    }
    const double alpha = dvd(rz, pq[0]);
    { /* phase B */
      double acc[2] = {0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        double xi, pi, qi, ri, di;
        if (cached) {
          own_load(k, xi, pi, qi, ri, di);
        } else {
          xi = P.x[i];
          pi = pn[i];
          if constexpr (KIND == COOP_KG_STENCIL) /* phase A's q, bit for bit */
            qi = apply_row<KIND>(P, i, p, pi, [&](long long j) { return pn[j]; });
          else
            qi = Q[i];
          ri = R[i];
          di = dget(P, i);
        }
        xi = add(xi, mul(alpha, pi));
        ri = sub(ri, mul(alpha, qi));
        const double zi = mul(di, ri);
        if (P.d) Z[i] = zi;
        if (cached) {
          own(0, k) = xi;
          own(3, k) = ri;
        } else {
          P.x[i] = xi;
        }
        if (!cached || !P.d) R[i] = ri;
        acc[0] = dacc(acc[0], ri, zi);
        acc[1] = dacc(acc[1], ri, ri);
      }, pn, P.x, R, P.d ? P.d : R, KIND == COOP_KG_CSR ? Q : pn);
      block_partial<2>(acc, red);
    }
    double s[2];
    grid_sum<2>(grid, red, s);
    const double rn = sqrt(s[1]);
    t.reason = check(P, t, it, rn);
    if (!t.reason && s[0] < 0.0) t.reason = COOP_DIVERGED_INDEFINITE_PC;
    beta = dvd(s[0], rz);
    rz = s[0];
    first = false;
    odd = !odd;
    if (it == P.stop_at) break;
  }
  save_state(P, t, own_rows, odd, rz, beta);
}

/* save_state's order */
const char *const kScalars[] = {"rz", "beta"};
const KgCarried kCarried[] = {{"r", {0, 0}, false}, {"z", {1, 1}, true}, {"p", {3, 2}, false}};

}  // namespace

/* 5 work vectors (r, z, p[2], q), 2 barriers an iteration */
const KgMethod coop_kg_cg = {COOP_KG_CG, {(void *)cg_kernel<COOP_KG_CSR>, (void *)cg_kernel<COOP_KG_STENCIL>},
                             5, kCached, 2, std::size(kScalars), kScalars, std::size(kCarried), kCarried};
