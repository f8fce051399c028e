/* Single-reduction CG (Chronopoulos-Gear) as one cooperative persistent kernel,
 * and its entry in the method table (solvers/krylov/krylov_grid.cuh). */
#include "solvers/krylov/krylov_grid.cuh"

namespace {

/* Barrier and residency: Red::sync (krylov_grid.cuh). CG in the Chronopoulos-Gear form, as
 * solvers/krylov/cg.c runs it with solver.cg_single_reduction: one barrier an
 * iteration. Every update is pointwise except w = A z, whose columns' new z
 * each row recomputes from the old r, w, s (two buffers of each):
 *   z_new_j = M_j (r_j - alpha (w_j + beta s_j)),
 * so the reduction of gamma = (r,z), delta = (w,z) and (r,r) shares its
 * barrier with the SpMV. Setup: two barriers (r | w = A M r).
 * Vectors: r[2], w[2], s[2], p. Cached: x, p and M's diagonal. Carried from
 * an iteration's check to its update: x, r, w, s, p, gamma, delta,
 * gamma_old, alpha_old. */
constexpr int kCached = 3;
/* resident blocks an SM on CSR, stencil: 85, 128 registers (the stencil spills at 85) */
constexpr int kMinBlocks[] = {3, 2};

template <int KIND>
__global__ void __launch_bounds__(kThreads, kMinBlocks[KIND]) cgsr_kernel(const Params P) {
  cg::grid_group grid = cg::this_grid();
  const Rows rows = make_rows<KIND>(P);
  const bool cached = P.cached;
  /* r, w, s buffers: [0] old in even iterations, [1] in odd ones */
  double *const R0 = P.v[0], *const R1 = P.v[1], *const W0 = P.v[2], *const W1 = P.v[3],
                *const S0 = P.v[4], *const S1 = P.v[5], *const Pv = P.v[6];
  Red red{P.part, 0};
  Track t{0.0, 0, COOP_REASON_NONE};
  double gamma = 0.0, delta = 0.0, rr = 0.0, gamma_old = 0.0, alpha_old = 1.0;
  bool odd = false;
  const auto own_rows = [&](bool save) {
    cached_rows<KIND>(P, rows, [&](int k, long long i) {
      keep_rows(save, k, P.x[i], Pv[i]);
      if (!save) own(2, k) = dget(P, i);
    });
  };

  long long it0 = 0; /* the last iteration checked before the loop */
  if (P.resume) {
    own_rows(false);
    it0 = load_state(P, t, odd, gamma, delta, gamma_old, alpha_old);
  } else { /* setup: two barriers */
    /* r = b - A x; p = s = 0 */
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi;
      R0[i] = residual_row<KIND>(P, i, p, xi);
      S0[i] = 0.0;
      if (cached) {
        own_put(k, 0, xi, 0.0, dget(P, i));
      } else {
        Pv[i] = 0.0;
      }
    }, P.x, P.b);
    red.sync(grid);
    /* z = M r; w = A z; gamma, delta, rr */
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int, long long i, const Pos &p) {
      const double ri = R0[i], zi = mul(dget(P, i), ri);
      const double wi = apply_row<KIND>(P, i, p, zi, [&](long long j) { return mul(dget(P, j), R0[j]); });
      W0[i] = wi;
      acc[0] = dacc(acc[0], ri, zi);
      acc[1] = dacc(acc[1], wi, zi);
      acc[2] = dacc(acc[2], ri, ri);
    });
    double s[3];
    all_sum<3>(grid, red, acc, s);
    gamma = s[0];
    delta = s[1];
    rr = s[2];
  }

  bool due = !P.resume; /* a resumed launch made its first iteration's check before */
  for (long long it = it0;; it++) {
    double alpha, beta;
    if (cg1_top(P, t, it, due, rr, gamma, delta, gamma_old, alpha_old, alpha, beta)) break;
    const double *const R = odd ? R1 : R0, *const W = odd ? W1 : W0, *const S = odd ? S1 : S0;
    /* s_new and r_new of row j, as its owner computes them */
    const auto snew = [&](long long j) { return add(W[j], mul(beta, S[j])); };
    double *const Rn = odd ? R0 : R1, *const Wn = odd ? W0 : W1, *const Sn = odd ? S0 : S1;
    double acc[3] = {0.0, 0.0, 0.0};
    for_rows<KIND>(P, rows, [&](int k, long long i, const Pos &p) {
      double xi, pi, di;
      if (cached) {
        own_load(k, xi, pi, di);
      } else {
        xi = P.x[i];
        pi = Pv[i];
        di = dget(P, i);
      }
      const double ri = R[i], si = snew(i);
      pi = add(mul(di, ri), mul(beta, pi)); /* p = z + beta p */
      xi = add(xi, mul(alpha, pi));
      const double rni = sub(ri, mul(alpha, si)), zi = mul(di, rni);
      const double wi = apply_row<KIND>(P, i, p, zi, [&](long long j) {
        return mul(dget(P, j), sub(R[j], mul(alpha, snew(j))));
      });
      Rn[i] = rni;
      Wn[i] = wi;
      Sn[i] = si;
      if (cached) {
        own(0, k) = xi;
        own(1, k) = pi;
      } else {
        P.x[i] = xi;
        Pv[i] = pi;
      }
      acc[0] = dacc(acc[0], rni, zi);
      acc[1] = dacc(acc[1], wi, zi);
      acc[2] = dacc(acc[2], rni, rni);
    }, R, W, S, P.d ? P.d : R, P.x, Pv);
    cg1_end(grid, red, acc, alpha, gamma, delta, rr, gamma_old, alpha_old, odd);
  }
  save_state(P, t, own_rows, odd, gamma, delta, gamma_old, alpha_old);
}

/* save_state's order */
const char *const kScalars[] = {"gamma", "delta", "gamma_old", "alpha_old"};
const KgCarried kCarried[] = {
    {"r", {0, 1}, false}, {"w", {2, 3}, false}, {"s", {4, 5}, false}, {"p", {6, 6}, false}};

}  // namespace

/* 7 work vectors (r[2], w[2], s[2], p), 1 barrier an iteration */
const KgMethod coop_kg_cgsr = {COOP_KG_CGSR, {(void *)cgsr_kernel<COOP_KG_CSR>, (void *)cgsr_kernel<COOP_KG_STENCIL>},
                               7, kCached, 1, std::size(kScalars), kScalars, std::size(kCarried), kCarried};
