/* The GPU multigrid's steps (solvers/mg/mg_steps.cuh) run on the host, one
 * item at a time, against the host cycle (coop_mg_cycle): the same field to
 * rounding after a few cycles, as a solver and as a preconditioner, with
 * the operator shift of the implicit heat step, on odd and thin sizes, 2D
 * and 3D, V, W and F cycles, both smoothers, odd sweep counts, fp64 and
 * fp32. Items run forward and backward: a step whose items read what
 * another item of the same step writes gives two answers. No GPU needed. */
#include <math.h>
#include <string.h>

#include <vector>

#include "kernels/stencil.h"
#include "solvers/mg/mg_steps.cuh"
#include "tests/unit.h"

using namespace coop_mg_steps;

namespace {

struct Case {
  int ndim;
  int64_t n[3];
  coop_mg_smoother smoother;
  int pre, post;
  coop_mg_cycle_type cycle;
  int symmetric, pc, fp32;
  double shift;
};

double rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 9007199254740992.0 - 0.5;
}

/* A field with random interior values and boundary values in its ghosts. */
template <class R>
std::vector<R> field(const coop_grid *g, uint64_t *seed, double boundary) {
  std::vector<R> v(coop_grid_points(g), (R)0);
  for (int64_t k = g->ndim == 3 ? -1 : 0; k < g->n[2] + (g->ndim == 3 ? 1 : 0); k++)
    for (int64_t j = -1; j <= g->n[1]; j++)
      for (int64_t i = -1; i <= g->n[0]; i++) {
        const int inside = i >= 0 && i < g->n[0] && j >= 0 && j < g->n[1] && k >= 0 && k < g->n[2];
        v[coop_grid_index(g, i, j, k)] = (R)(inside ? rnd(seed) : boundary * (1.0 + 0.3 * sin(0.7 * i + 1.3 * j + 2.1 * k)));
      }
  return v;
}

/* The steps' view of host level arrays, as mg_cuda.cu's level_copy makes it
 * of device ones (r: a copy of u, so its ghosts hold u's). */
template <class R>
void describe(const coop_mg_hier *h, Dev *D, std::vector<std::vector<R>> *store, R *u0, R *f0) {
  memset(D, 0, sizeof *D);
  D->ndim = h->ndim;
  D->nlev = h->nlev;
  D->omega = h->omega;
  store->reserve(3 * h->nlev);
  for (int l = 0; l < h->nlev; l++) {
    const coop_mg_level *L = &h->lev[l];
    Lev *d = &D->lev[l];
    const size_t pts = coop_grid_points(&L->grid);
    const int own = !(l == 0 && u0);
    store->emplace_back(pts, (R)0);
    d->u = own ? store->back().data() : u0;
    store->emplace_back(pts, (R)0);
    d->f = own || !f0 ? store->back().data() : f0;
    store->emplace_back(own ? std::vector<R>(pts, (R)0) : std::vector<R>(u0, u0 + pts));
    d->r = store->back().data();
    lev_shape(h, l, d);
    for (int a = 0; a < 3; a++) {
      Axis *x = &d->ax[a];
      x->wl = L->wl[a];
      x->wr = L->wr[a];
      x->vol = L->vol[a];
      if (l == h->nlev - 1) continue;
      for (int s = 0; s < 2; s++) {
        x->par[s] = L->par[a][s];
        x->p[s] = L->p[a][s];
      }
      x->nkid = L->nkid[a];
      x->kid = L->kid[a];
      x->kq = L->kq[a];
    }
  }
}

/* Step s over all its items, forward or backward; the NORM's sum. */
template <class R>
double run(const Dev &D, const Step &s, int backward, const R *vin, R *vout) {
  const uint32_t n = items_of(D, s);
  double sum = 0.0;
  for (uint32_t q = 0; q < n; q++) {
    const uint32_t item = backward ? n - 1 - q : q;
    sum += run_step<R>(D, s, item, n, vin, vout);
  }
  return sum;
}

template <class R>
double max_rel(const coop_grid *g, const R *a, const R *b) {
  double d = 0.0, m = 0.0;
  for (int64_t k = 0; k < g->n[2]; k++)
    for (int64_t j = 0; j < g->n[1]; j++)
      for (int64_t i = 0; i < g->n[0]; i++) {
        const int64_t p = coop_grid_index(g, i, j, k);
        d = fmax(d, fabs((double)a[p] - (double)b[p]));
        m = fmax(m, fabs((double)b[p]));
      }
  return m > 0 ? d / m : d;
}

/* Three cycles of the recorded steps against three of the host's; the
 * largest difference relative to the host's field over both item orders. */
template <class R>
double compare(const Case &c) {
  const coop_precision prec = c.fp32 ? COOP_FP32 : COOP_FP64;
  double hs[3];
  for (int a = 0; a < 3; a++) hs[a] = 1.0 / (double)(c.n[a] + 1);
  coop_stencil st;
  coop_stencil_init(&st, c.ndim, prec, c.n, 1, hs);
  const coop_grid *g = &st.grid;
  uint64_t seed = 12345;
  const std::vector<R> u0 = field<R>(g, &seed, c.pc ? 0.0 : 1.0), f0 = field<R>(g, &seed, 0.0);
  const int64_t nown = (int64_t)coop_grid_owned(g);
  std::vector<R> rin(nown);
  for (R &x : rin) x = (R)rnd(&seed);
  const coop_region own = coop_region_owned(g);
  double worst = 0.0;
  for (int backward = 0; backward < 2; backward++) {
    coop_mg_hier href, hemu;
    std::vector<R> uref = u0, fref = f0, uemu = u0, femu = f0;
    CU_ASSERT_FATAL(coop_mg_hier_create(&href, &st, NULL, NULL, c.pc ? NULL : uref.data(), c.pc ? NULL : fref.data()) == 0);
    CU_ASSERT_FATAL(coop_mg_hier_create(&hemu, &st, NULL, NULL, NULL, NULL) == 0);
    for (coop_mg_hier *h : {&href, &hemu}) {
      h->smoother = c.smoother;
      h->pre = c.pre;
      h->post = c.post;
      h->cycle = c.cycle;
      h->symmetric = c.symmetric;
      if (c.shift > 0) CU_ASSERT_FATAL(coop_mg_hier_set_shift(h, c.shift) == 0);
    }
    Dev D;
    std::vector<std::vector<R>> store;
    describe<R>(&hemu, &D, &store, c.pc ? NULL : uemu.data(), c.pc ? NULL : femu.data());
    const int64_t cn = hemu.cn;
    std::vector<double> inv((size_t)(cn * cn), 0.0), cb((size_t)cn);
    for (int64_t m = 0; m < cn; m++) {
      inv[(size_t)(m * cn + m)] = 1.0;
      coop_mg_coarse_band_solve(&hemu, inv.data() + m * cn);
    }
    D.cinv = inv.data();
    D.cb = cb.data();
    D.cn = cn;
    for (int a = 0; a < 3; a++) D.cs[a] = hemu.cstride[a];
    Recorder rec = {&hemu, NULL, 0};
    CU_ASSERT_FATAL(record_cycle(&rec, 0, hemu.cycle) == 0);
    std::vector<R> zref(nown), zemu(nown);
    if (c.shift > 0 && !c.pc) { /* the implicit step's right-hand side from the field and f0 as its source */
      coop_mg_shifted_rhs_host(&href, f0.data());
      run<R>(D, Step{SHIFTED_RHS, 0, 0}, backward, f0.data(), (R *)NULL);
      worst = fmax(worst, max_rel<R>(g, (const R *)D.lev[0].f, (const R *)href.lev[0].f));
    }
    for (int cyc = 0; cyc < 3; cyc++) {
      if (c.pc) {
        const coop_mg_level *L = &href.lev[0];
        memset(L->u, 0, coop_grid_points(&L->grid) * sizeof(R));
        coop_unpack_host(&L->grid, &own, L->f, rin.data());
        CU_ASSERT_FATAL(coop_mg_cycle(&href, 0) == 0);
        coop_pack_host(&L->grid, &own, L->u, zref.data());
        run<R>(D, Step{UNPACK, 0, 0}, backward, rin.data(), (R *)NULL);
      } else {
        CU_ASSERT_FATAL(coop_mg_cycle(&href, 0) == 0);
      }
      for (int q = 0; q < rec.n; q++) run<R>(D, rec.steps[q], backward, (const R *)NULL, (R *)NULL);
      if (c.pc) {
        run<R>(D, Step{PACK, 0, 0}, backward, (const R *)NULL, zemu.data());
        double d = 0.0, m = 0.0;
        for (int64_t p = 0; p < nown; p++) {
          d = fmax(d, fabs((double)zemu[p] - (double)zref[p]));
          m = fmax(m, fabs((double)zref[p]));
        }
        worst = fmax(worst, d / m);
      }
    }
    if (!c.pc) worst = fmax(worst, max_rel<R>(g, (const R *)D.lev[0].u, uref.data()));
    /* the residual norm step against the host's */
    double sumsq_ref;
    CU_ASSERT_FATAL(href.ops->residual(&href, 0, &sumsq_ref) == 0);
    const double sumsq = run<R>(D, Step{NORM, 0, 0}, backward, (const R *)NULL, (R *)NULL);
    /* against |f|, not the residual: three cycles can take it down to where
     * rounding in f - A u is all that is left (thin grids: 1e-13 of f) */
    const coop_mg_level *L0 = &href.lev[0];
    double fsq = 0.0;
    for (int64_t k = 0; k < L0->grid.n[2]; k++)
      for (int64_t j = 0; j < L0->grid.n[1]; j++)
        for (int64_t i = 0; i < L0->grid.n[0]; i++) {
          const double v = (double)((const R *)L0->f)[coop_grid_index(&L0->grid, i, j, k)];
          fsq += v * v;
        }
    worst = fmax(worst, fabs(sqrt(sumsq) - sqrt(sumsq_ref)) / fmax(sqrt(fsq), sqrt(sumsq_ref)));
    free(rec.steps);
    coop_mg_hier_destroy(&href);
    coop_mg_hier_destroy(&hemu);
  }
  return worst;
}

void check(const Case &c, double bound) {
  const double w = c.fp32 ? compare<float>(c) : compare<double>(c);
  if (!(w <= bound))
    fprintf(stderr, "case %dD %lld x %lld x %lld, smoother %d, (%d,%d), cycle %d, symmetric %d, pc %d, fp32 %d, shift %g: "
                    "%.3g against %.1g\n", c.ndim, (long long)c.n[0], (long long)c.n[1], (long long)c.n[2], c.smoother,
            c.pre, c.post, c.cycle, c.symmetric, c.pc, c.fp32, c.shift, w, bound);
  CU_ASSERT(w <= bound);
}

void test_solver(void) {
  const Case cases[] = {
      {2, {37, 29, 1}, COOP_MG_RBGS, 2, 2, COOP_MG_V, 0, 0, 0, 0.0},
      {2, {64, 40, 1}, COOP_MG_RBGS, 1, 3, COOP_MG_F, 0, 0, 0, 0.0},
      {2, {101, 7, 1}, COOP_MG_JACOBI, 3, 1, COOP_MG_W, 0, 0, 0, 0.0},
      {3, {13, 10, 11}, COOP_MG_RBGS, 2, 1, COOP_MG_W, 0, 0, 0, 0.0},
      {3, {16, 9, 14}, COOP_MG_JACOBI, 2, 2, COOP_MG_V, 0, 0, 0, 0.0},
      {3, {5, 18, 12}, COOP_MG_RBGS, 0, 1, COOP_MG_V, 1, 0, 0, 0.0},
      {2, {129, 5, 1}, COOP_MG_RBGS, 2, 2, COOP_MG_V, 0, 0, 0, 0.0}, /* thin: the residual falls to rounding */
      {2, {2, 70, 1}, COOP_MG_RBGS, 2, 2, COOP_MG_V, 0, 0, 0, 0.0},
  };
  for (const Case &c : cases) check(c, 1e-12);
}

void test_pc(void) {
  const Case cases[] = {
      {2, {45, 38, 1}, COOP_MG_RBGS, 2, 2, COOP_MG_V, 1, 1, 0, 0.0},
      {3, {12, 15, 11}, COOP_MG_JACOBI, 1, 1, COOP_MG_W, 1, 1, 0, 0.0},
  };
  for (const Case &c : cases) check(c, 1e-12);
}

void test_fp32(void) {
  const Case cases[] = {
      {2, {50, 33, 1}, COOP_MG_RBGS, 2, 2, COOP_MG_V, 0, 0, 1, 0.0},
      {3, {11, 14, 9}, COOP_MG_JACOBI, 3, 2, COOP_MG_F, 0, 0, 1, 0.0},
  };
  for (const Case &c : cases) check(c, 1e-4);
}

void test_shift(void) {
  const Case cases[] = {
      {2, {40, 31, 1}, COOP_MG_RBGS, 2, 2, COOP_MG_V, 0, 0, 0, 250.0},
      {3, {14, 12, 13}, COOP_MG_JACOBI, 2, 2, COOP_MG_V, 0, 0, 0, 3.0e4},
  };
  for (const Case &c : cases) check(c, 1e-12);
}

} // namespace

int main(void) {
  static const coop_unit_test tests[] = {
      {"the steps as a solver: the host's cycles", test_solver},
      {"the steps as a preconditioner", test_pc},
      {"fp32", test_fp32},
      {"the implicit heat step's shifted operator and right-hand side", test_shift},
  };
  return coop_unit_run("mg_steps", tests, sizeof tests / sizeof tests[0]);
}
