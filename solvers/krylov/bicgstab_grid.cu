/* Right-preconditioned BiCGStab as one cooperative persistent kernel, and its
 * entry in the method table (solvers/krylov/krylov_grid.cuh). */
#include "solvers/krylov/krylov_grid.cuh"

namespace {

/* Barrier and residency: Red::sync (krylov_grid.cuh). Three barriers an iteration:
 *  1: p = r + beta (p - omega v) (two p buffers), v = A M p with the columns'
 *     p recomputed from r, p_old, v_old (two v buffers); partial (rhat, v).
 *  2: alpha = rho / (rhat, v); s = r - alpha v, t = A M s with the columns' s
 *     recomputed from r and v; partials (s,s), (t,s), (t,t). If ||s|| passes
 *     the tolerance: x += alpha M p and stop (no barrier needed).
 *  3: omega = (t,s)/(t,t); x = (x + alpha M p) + omega M s (the two axpys of
 *     solvers/krylov/bicgstab.c); r = s - omega t into
 *     the other r buffer (so t can be recomputed from the old r and v while
 *     r is written); partials (r,r) and (rhat, r), the next iteration's rho.
 * Vectors: r[2], rhat, p[2], v[2], t (streamed CSR only). Cached: x, rhat,
 * p, s, t. Carried to the next iteration: x, r, rhat, p, v, rho, rho_old,
 * alpha, omega. */
constexpr int kCached = 5;
constexpr int kMinBlocks = 4; /* resident blocks an SM: 64 registers */

template <int KIND>
__global__ void __launch_bounds__(kThreads, kMinBlocks) bicgstab_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  double *const RH = P.v[2], *const T = P.v[7];
  /* r, p, v buffers: [0] current in even iterations, [1] in odd ones */
  double *const R0 = P.v[0], *const R1 = P.v[1], *const P0 = P.v[3], *const P1 = P.v[4],
                *const V0 = P.v[5], *const V1 = P.v[6];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  double rho, rho_old = 1.0, alpha = 1.0, omega = 1.0;
  bool odd = false;
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep_rows(save, k, P.x[i]);
      if (!save) own(1, k) = RH[i]; /* rhat is stored too */
    });
  };

  long long it0 = 0; /* the last iteration checked before the loop */
  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, rho, rho_old, alpha, omega);
  } else { /* r = b - A x; rhat = r; p_old = v_old = 0; rho = (rhat, r) */
    double acc[2] = {0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double ri = residual_row<KIND>(P, i, p, xi);
      R0[i] = ri;
      RH[i] = ri;
      P1[i] = 0.0;
      V1[i] = 0.0;
      acc[0] = dacc(acc[0], ri, ri);
      acc[1] = dacc(acc[1], ri, ri);
      if (cached) {
        own(0, k) = xi;
        own(1, k) = ri;
      }
    }, P.x, P.b);
    double s2[2];
    all_sum<2>(grid, red, acc, s2);
    rho = s2[1];
    first_check(P, t, s2[0]);
  }

  for (long long it = it0 + 1; !t.reason; it++) {
    if (rho == 0.0) {
      t.reason = COOP_DIVERGED_BREAKDOWN;
      break;
    }
    const double beta = mul(dvd(rho, rho_old), dvd(alpha, omega));
    const double *const r = odd ? R1 : R0;
    double *const pn = odd ? P1 : P0, *const vn = odd ? V1 : V0;
    { /* phase 1 */
      const double *const po = odd ? P0 : P1, *const vo = odd ? V0 : V1;
      const auto pnew = [&](long long j) { return add(r[j], mul(beta, sub(po[j], mul(omega, vo[j])))); };
      double acc[1] = {0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double pi = pnew(i);
        const double vi = apply_row<KIND>(P, i, p, mul(dget(P, i), pi),
                                          [&](long long j) { return mul(dget(P, j), pnew(j)); });
        pn[i] = pi;
        vn[i] = vi;
        if (cached) own(2, k) = pi;
        acc[0] = dacc(acc[0], cached ? own(1, k) : RH[i], vi);
      }, r, po, vo, RH, P.d ? P.d : r);
      block_partial<1>(acc, red);
    }
    double rv[1];
    grid_sum<1>(grid, red, rv);
    if (rv[0] == 0.0) {
      t.reason = COOP_DIVERGED_BREAKDOWN;
      break;
    }
    alpha = dvd(rho, rv[0]);
    const auto sval = [&](long long j) { return sub(r[j], mul(alpha, vn[j])); };
    const auto tval = [&](long long i, const Pos &p, double si) {
      return apply_row<KIND>(P, i, p, mul(dget(P, i), si),
                             [&](long long j) { return mul(dget(P, j), sval(j)); });
    };
    { /* phase 2 */
      double acc[3] = {0.0, 0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double si = sval(i), ti = tval(i, p, si);
        acc[0] = dacc(acc[0], si, si);
        acc[1] = dacc(acc[1], ti, si);
        acc[2] = dacc(acc[2], ti, ti);
        if (cached)
          own_put(k, 3, si, ti);
        else if constexpr (KIND == COOP_KG_CSR)
          T[i] = ti;
      }, r, vn, P.d ? P.d : r);
      block_partial<3>(acc, red);
    }
    double s3[3];
    grid_sum<3>(grid, red, s3);
    const double sn = sqrt(s3[0]);
    const int sr = stop(P, t, it, sn);
    if (sr == COOP_CONVERGED_RTOL || sr == COOP_CONVERGED_ATOL) { /* x += alpha M p */
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &) {
        const double pi = cached ? own(2, k) : pn[i];
        const double xi = add(cached ? own(0, k) : P.x[i], mul(alpha, mul(dget(P, i), pi)));
        if (cached)
          own(0, k) = xi;
        else
          P.x[i] = xi;
      });
      record(P, t, it, sn);
      t.reason = sr;
      break;
    }
    if (s3[2] == 0.0) {
      t.reason = COOP_DIVERGED_BREAKDOWN;
      break;
    }
    omega = dvd(s3[1], s3[2]);
    { /* phase 3 */
      double *const rnew = odd ? R0 : R1;
      double acc[2] = {0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        double xi, hi, pi, si, ti;
        if (cached) {
          own_load(k, xi, hi, pi, si, ti);
        } else {
          xi = P.x[i];
          hi = RH[i];
          pi = pn[i];
          si = sval(i);
          if constexpr (KIND == COOP_KG_STENCIL) /* phase 2's t, bit for bit */
            ti = tval(i, p, si);
          else
            ti = T[i];
        }
        const double di = dget(P, i); /* x += alpha M p; x += omega M s */
        xi = add(add(xi, mul(alpha, mul(di, pi))), mul(omega, mul(di, si)));
        const double ri = sub(si, mul(omega, ti));
        rnew[i] = ri;
        if (cached)
          own(0, k) = xi;
        else
          P.x[i] = xi;
        acc[0] = dacc(acc[0], ri, ri);
        acc[1] = dacc(acc[1], hi, ri);
      }, P.x, RH, pn, r, vn, P.d ? P.d : r, KIND == COOP_KG_CSR ? T : vn);
      block_partial<2>(acc, red);
    }
    double s2[2];
    grid_sum<2>(grid, red, s2);
    const double rn = sqrt(s2[0]);
    t.reason = check(P, t, it, rn);
    if (!t.reason && omega == 0.0) t.reason = COOP_DIVERGED_BREAKDOWN;
    rho_old = rho;
    rho = s2[1];
    odd = !odd;
    if (it == P.stop_at) break;
  }
  save_state(P, t, own_rows, odd, rho, rho_old, alpha, omega);
}

/* save_state's order */
const char *const kScalars[] = {"rho", "rho_old", "alpha", "omega"};
const KgCarried kCarried[] = {
    {"r", {0, 1}, false}, {"rhat", {2, 2}, false}, {"p", {4, 3}, false}, {"v", {6, 5}, false}};

}  // namespace

/* 8 work vectors (r[2], rhat, p[2], v[2], t), 3 barriers an iteration */
const KgMethod coop_kg_bicgstab = {
    COOP_KG_BICGSTAB, {(void *)bicgstab_kernel<COOP_KG_CSR>, (void *)bicgstab_kernel<COOP_KG_STENCIL>},
    8, kCached, 3, std::size(kScalars), kScalars, std::size(kCarried), kCarried};
