/* Pipelined CG (Ghysels-Vanroose) as one cooperative persistent kernel, and its
 * entry in the method table (solvers/krylov/krylov_grid.cuh). */
#include "solvers/krylov/krylov_grid.cuh"

namespace {

/* Barrier and residency: Red::sync (krylov_grid.cuh). One barrier an iteration: every
 * update of the iteration is pointwise, and n = A m needs the columns' new w,
 * which each row recomputes from the old w, n, z (two buffers of each):
 *   w_new_j = w_j - alpha (n_j + beta z_j),  m_j = M w_new_j,
 * so the reduction of gamma, delta and rr shares its barrier with the SpMV.
 * Setup: three barriers (r, u | w = A u | n = A M w).
 * Vectors: r, u, q, s, p, w[2], z[2], n[2]. Cached: x, r, u, q, s, p (then
 * only w, z, n and u's first value go through device memory). Carried from
 * an iteration's check to its update: x, r, u, q, s, p, w, z, n, gamma,
 * delta, gamma_old, alpha_old, floor, post.
 *
 * Residual replacement, as solvers/krylov/pipecg.c decides it: every kDriftEvery
 * iterations the drift (d, d), d = b - A x - r, is reduced (one pass and
 * one or two barriers); where it matters, r, u, w, s, q, z and n are
 * recomputed from x and p (three passes, three barriers) and gamma, delta
 * and rr with them. floor: the drift the check after a replacement found
 * (post = 1 until then). Without a replacement the bits are those of the
 * iteration alone. */
constexpr int kCached = 6;
constexpr int kMinBlocks = 2; /* resident blocks an SM: 128 registers */
constexpr long long kDriftEvery = 50;

template <int KIND>
__global__ void __launch_bounds__(kThreads, kMinBlocks) pipecg_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  double *const Rv = P.v[0], *const U = P.v[1], *const Qv = P.v[2], *const Sv = P.v[3],
                *const Pv = P.v[4];
  /* w, z, n buffers: [0] old in even iterations, [1] in odd ones */
  double *const W0 = P.v[5], *const W1 = P.v[6], *const Z0 = P.v[7], *const Z1 = P.v[8],
                *const N0 = P.v[9], *const N1 = P.v[10];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  double gamma = 0.0, delta = 0.0, rr = 0.0, gamma_old = 0.0, alpha_old = 1.0, floor = 0.0, post = 0.0;
  bool odd = false;
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep_rows(save, k, P.x[i], Rv[i], U[i], Qv[i], Sv[i], Pv[i]);
    });
  };

  /* The drift check after an iteration and, where it matters, the
   * replacement (see above). W, Z, N: the buffers the next iteration reads. */
  const auto replace_if_drifted = [&](double *const W, double *const Z, double *const N) {
    if (cached) { /* the neighbours' x and p (x in device memory otherwise) */
      cached_rows<KIND>(P, rows, [&](int k, long long i) {
        P.x[i] = own(0, k);
        Pv[i] = own(5, k);
      });
      red.sync(grid);
    }
    double dd[1] = {0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double di = sub(residual_row<KIND>(P, i, p, xi), cached ? own(1, k) : Rv[i]);
      dd[0] = dacc(dd[0], di, di);
    });
    block_partial<1>(dd, red);
    grid_sum<1>(grid, red, dd);
    if (post > 0.0) floor = dd[0], post = 0.0;
    const double tol = 0.1 * fmax(P.rtol * t.r0, P.atol);
    if (!(dd[0] > DBL_EPSILON * rr && dd[0] > tol * tol && dd[0] > 100.0 * floor)) return;
    /* r = b - A x, u = M r, s = A p, q = M s */
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      const double ri = residual_row<KIND>(P, i, p, xi), di = dget(P, i), ui = mul(di, ri);
      const double si = apply_row<KIND>(P, i, p, Pv[i], [&](long long j) { return Pv[j]; });
      const double qi = mul(di, si);
      U[i] = ui;
      Qv[i] = qi;
      if (cached) {
        own_put(k, 1, ri, ui, qi, si);
      } else {
        Rv[i] = ri;
        Sv[i] = si;
      }
    });
    red.sync(grid);
    /* w = A u, z = A q; gamma = (r, u), delta = (w, u), rr = (r, r) */
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      const double ri = cached ? own(1, k) : Rv[i], ui = U[i];
      const double wi = apply_row<KIND>(P, i, p, ui, [&](long long j) { return U[j]; });
      W[i] = wi;
      Z[i] = apply_row<KIND>(P, i, p, Qv[i], [&](long long j) { return Qv[j]; });
      acc[0] = dacc(acc[0], ri, ui);
      acc[1] = dacc(acc[1], wi, ui);
      acc[2] = dacc(acc[2], ri, ri);
    });
    block_partial<3>(acc, red);
    grid_sum<3>(grid, red, acc);
    gamma = acc[0];
    delta = acc[1];
    rr = acc[2];
    /* n = A M w */
    for_rows<KIND>(P, rows, [&](int, long long i, const Pos &p) {
      N[i] = apply_row<KIND>(P, i, p, mul(dget(P, i), W[i]), [&](long long j) { return mul(dget(P, j), W[j]); });
    });
    red.sync(grid);
    post = 1.0;
  };

  long long it0 = 0; /* the last iteration checked before the loop */
  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, gamma, delta, gamma_old, alpha_old, floor, post);
  } else { /* setup: three barriers */
    { /* r = b - A x; u = M r; z = q = s = p = 0; gamma = (r, u); rr = (r, r) */
      double acc[2] = {0.0, 0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        double xi;
        const double ri = residual_row<KIND>(P, i, p, xi), ui = mul(dget(P, i), ri);
        U[i] = ui;
        Z0[i] = 0.0;
        if (cached) {
          own_put(k, 0, xi, ri, ui, 0.0, 0.0, 0.0);
        } else {
          Rv[i] = ri;
          Qv[i] = Sv[i] = Pv[i] = 0.0;
        }
        acc[0] = dacc(acc[0], ri, ui);
        acc[1] = dacc(acc[1], ri, ri);
      }, P.x, P.b, P.d ? P.d : P.b);
      double s[2];
      all_sum<2>(grid, red, acc, s);
      gamma = s[0];
      rr = s[1];
    }
    { /* w = A u; delta = (w, u) */
      double acc[1] = {0.0};
      for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
        const double ui = cached ? own(2, k) : U[i];
        const double wi = apply_row<KIND>(P, i, p, ui, [&](long long j) { return U[j]; });
        W0[i] = wi;
        acc[0] = dacc(acc[0], wi, ui);
      });
      double s[1];
      all_sum<1>(grid, red, acc, s);
      delta = s[0];
    }
    /* m = M w; n = A m */
    for_rows<KIND>(P, rows, [&](int, long long i, const Pos &p) {
      N0[i] = apply_row<KIND>(P, i, p, mul(dget(P, i), W0[i]),
                              [&](long long j) { return mul(dget(P, j), W0[j]); });
    });
    red.sync(grid);
  }

  bool due = !P.resume; /* a resumed launch made its first iteration's check before */
  for (long long it = it0;; it++) {
    double alpha, beta;
    if (cg1_top(P, t, it, due, rr, gamma, delta, gamma_old, alpha_old, alpha, beta)) break;
    const double *const W = odd ? W1 : W0, *const Z = odd ? Z1 : Z0, *const N = odd ? N1 : N0;
    double *const Wn = odd ? W0 : W1, *const Zn = odd ? Z0 : Z1, *const Nn = odd ? N0 : N1;
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi, ri, ui, qi, si, pi;
      if (cached) {
        own_load(k, xi, ri, ui, qi, si, pi);
      } else {
        xi = P.x[i];
        ri = Rv[i];
        ui = U[i];
        qi = Qv[i];
        si = Sv[i];
        pi = Pv[i];
      }
      const double di = dget(P, i), wi = W[i], mi = mul(di, wi);
      const double zi = add(N[i], mul(beta, Z[i]));
      qi = add(mi, mul(beta, qi));
      si = add(wi, mul(beta, si));
      pi = add(ui, mul(beta, pi));
      xi = add(xi, mul(alpha, pi));
      ri = sub(ri, mul(alpha, si));
      ui = sub(ui, mul(alpha, qi));
      const double wn = sub(wi, mul(alpha, zi));
      acc[0] = dacc(acc[0], ri, ui);
      acc[1] = dacc(acc[1], wn, ui);
      acc[2] = dacc(acc[2], ri, ri);
      const double ni = apply_row<KIND>(P, i, p, mul(di, wn), [&](long long j) {
        return mul(dget(P, j), sub(W[j], mul(alpha, add(N[j], mul(beta, Z[j])))));
      });
      Zn[i] = zi;
      Wn[i] = wn;
      Nn[i] = ni;
      if (cached) {
        own_put(k, 0, xi, ri, ui, qi, si, pi);
      } else {
        P.x[i] = xi;
        Rv[i] = ri;
        U[i] = ui;
        Qv[i] = qi;
        Sv[i] = si;
        Pv[i] = pi;
      }
    }, W, Z, N, P.d ? P.d : W, P.x, Rv, U, Qv, Sv, Pv);
    cg1_end(grid, red, acc, alpha, gamma, delta, rr, gamma_old, alpha_old, odd);
    if ((it + 1) % kDriftEvery == 0) replace_if_drifted(Wn, Zn, Nn);
  }
  save_state(P, t, own_rows, odd, gamma, delta, gamma_old, alpha_old, floor, post);
}

/* save_state's order */
const char *const kScalars[] = {"gamma", "delta", "gamma_old", "alpha_old", "drift_floor", "drift_post"};
const KgCarried kCarried[] = {{"r", {0, 0}, false}, {"u", {1, 1}, false}, {"q", {2, 2}, false},
                              {"s", {3, 3}, false}, {"p", {4, 4}, false}, {"w", {5, 6}, false},
                              {"z", {7, 8}, false}, {"n", {9, 10}, false}};

}  // namespace

/* 11 work vectors (r, u, q, s, p, w[2], z[2], n[2]), 1 barrier an iteration */
const KgMethod coop_kg_pipecg = {
    COOP_KG_PIPECG, {(void *)pipecg_kernel<COOP_KG_CSR>, (void *)pipecg_kernel<COOP_KG_STENCIL>},
    11, kCached, 1, std::size(kScalars), kScalars, std::size(kCarried), kCarried};
