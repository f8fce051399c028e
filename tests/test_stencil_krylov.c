/* Krylov form of the stencil on the host: y = A x against a dense 5/7-point
 * matrix; the face layout; and a box cut into parts that exchange faces by
 * hand must give exactly the whole box's y. For that last check the spacings
 * are powers of two and x small integers, so every sum is exact in fp32 and
 * fp64 and the order of the terms cannot matter. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/stencil.h"
#include "unit.h"

static int64_t points(const int64_t n[3]) { return n[0] * n[1] * n[2]; }

/* A vector of precision p from doubles, and back. */
static void *to_prec(coop_precision p, const double *v, int64_t n) {
  void *out = malloc((size_t)n * coop_prec_size(p));
  for (int64_t i = 0; i < n; i++)
    if (p == COOP_FP32)
      ((float *)out)[i] = (float)v[i];
    else
      ((double *)out)[i] = v[i];
  return out;
}

static double at(coop_precision p, const void *v, int64_t i) {
  return p == COOP_FP32 ? (double)((const float *)v)[i] : ((const double *)v)[i];
}

/* y = A x with A assembled as a dense matrix from the stencil's definition. */
static void dense_apply(const coop_stencil *s, const double *x, double *y) {
  const int64_t *n = s->grid.n, np = points(n);
  double *A = calloc((size_t)(np * np), sizeof *A);
  const int64_t st[3] = {1, n[0], n[0] * n[1]};
  for (int64_t k = 0; k < n[2]; k++)
    for (int64_t j = 0; j < n[1]; j++)
      for (int64_t i = 0; i < n[0]; i++) {
        const int64_t idx[3] = {i, j, k}, p = i + st[1] * j + st[2] * k;
        for (int a = 0; a < s->grid.ndim; a++) {
          A[p * np + p] += 2.0 * s->w[a];
          if (idx[a] > 0) A[p * np + p - st[a]] -= s->w[a];
          if (idx[a] + 1 < n[a]) A[p * np + p + st[a]] -= s->w[a];
        }
      }
  for (int64_t p = 0; p < np; p++) {
    y[p] = 0.0;
    for (int64_t q = 0; q < np; q++) y[p] += A[p * np + q] * x[q];
  }
  free(A);
}

static void check_apply(int ndim, coop_precision p, const int64_t n[3], const double h[3]) {
  coop_stencil s;
  coop_stencil_init(&s, ndim, p, n, 1, h);
  const int64_t np = points(s.grid.n);
  double *x = malloc(sizeof *x * (size_t)np), *want = malloc(sizeof *want * (size_t)np);
  for (int64_t i = 0; i < np; i++) x[i] = cos(0.37 * (double)i) + 0.5;
  void *xp = to_prec(p, x, np), *yp = malloc((size_t)np * coop_prec_size(p));
  for (int64_t i = 0; i < np; i++) x[i] = at(p, xp, i); /* the values A sees */
  dense_apply(&s, x, want);
  CU_ASSERT_FATAL(coop_stencil_apply_host(&s, xp, yp) == 0);
  double err = 0.0, scale = 2.0 * (s.w[0] + s.w[1] + s.w[2]);
  for (int64_t i = 0; i < np; i++) err = fmax(err, fabs(at(p, yp, i) - want[i]) / scale);
  CU_ASSERT(err < (p == COOP_FP32 ? 1e-6 : 1e-14));
  free(x);
  free(want);
  free(xp);
  free(yp);
}

static void test_apply_2d(void) {
  const int64_t n[3] = {7, 5, 1};
  const double h[3] = {0.3, 0.7, 1.0};
  check_apply(2, COOP_FP64, n, h);
  check_apply(2, COOP_FP32, n, h);
  const int64_t line[3] = {1, 6, 1}; /* one point along x */
  check_apply(2, COOP_FP64, line, h);
}

static void test_apply_3d(void) {
  const int64_t n[3] = {5, 4, 6};
  const double h[3] = {0.3, 0.7, 0.45};
  check_apply(3, COOP_FP64, n, h);
  check_apply(3, COOP_FP32, n, h);
}

/* face[a][side][p + m0 q] is x at index 0 / n_a - 1 along a, the other axes
 * (lower first) at p and q. */
static void check_faces(int ndim, coop_precision p, const int64_t n[3]) {
  coop_stencil s;
  const double h[3] = {1.0, 1.0, 1.0};
  coop_stencil_init(&s, ndim, p, n, 1, h);
  const int64_t *m = s.grid.n, np = points(m), st[3] = {1, m[0], m[0] * m[1]};
  double *x = malloc(sizeof *x * (size_t)np);
  for (int64_t i = 0; i < np; i++) x[i] = (double)i;
  void *xp = to_prec(p, x, np), *face[3][2] = {{NULL}};
  for (int a = 0; a < ndim; a++) {
    CU_ASSERT_EQUAL(coop_stencil_face_points(&s, a), np / m[a]);
    for (int side = 0; side < 2; side++)
      face[a][side] = calloc((size_t)(np / m[a]), coop_prec_size(p));
  }
  CU_ASSERT_FATAL(coop_stencil_pack_faces_host(&s, xp, face) == 0);
  for (int a = 0; a < ndim; a++) {
    const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
    int ok = 1;
    for (int side = 0; side < 2; side++)
      for (int64_t q = 0; q < m[c]; q++)
        for (int64_t r = 0; r < m[b]; r++) {
          const int64_t src = (side ? m[a] - 1 : 0) * st[a] + r * st[b] + q * st[c];
          ok &= at(p, face[a][side], r + m[b] * q) == (double)src;
        }
    CU_ASSERT(ok);
    free(face[a][0]);
    free(face[a][1]);
  }
  free(x);
  free(xp);
}

static void test_face_layout(void) {
  const int64_t n2[3] = {5, 3, 1}, n3[3] = {4, 3, 5};
  check_faces(2, COOP_FP64, n2);
  check_faces(2, COOP_FP32, n2);
  check_faces(3, COOP_FP64, n3);
  check_faces(3, COOP_FP32, n3);
}

/* One part of a box cut along the axes: its stencil, its offset in the
 * whole box, its x and y, and the faces it packs. */
typedef struct {
  coop_stencil s;
  int64_t off[3];
  void *x, *y, *face[3][2];
} part;

/* Copy the part's points between its own vector and the whole box's. */
static void copy_part(const part *pt, const int64_t N[3], void *whole, int to_whole) {
  const int64_t *m = pt->s.grid.n;
  const size_t e = coop_prec_size(pt->s.grid.prec);
  for (int64_t k = 0; k < m[2]; k++)
    for (int64_t j = 0; j < m[1]; j++)
      for (int64_t i = 0; i < m[0]; i++) {
        const int64_t l = i + m[0] * (j + m[1] * k);
        const int64_t g = (i + pt->off[0]) + N[0] * ((j + pt->off[1]) + N[1] * (k + pt->off[2]));
        char *w = (char *)whole + e * (size_t)g;
        char *own = (char *)(to_whole ? pt->y : pt->x) + e * (size_t)l;
        if (to_whole)
          memcpy(w, own, e);
        else
          memcpy(own, w, e);
      }
}

/* Part c of the box N cut into cuts[a] parts (1 or 2) per axis; the lower
 * part along a holds N_a / 2 points. */
static void part_init(part *pt, int ndim, coop_precision p, const int64_t N[3], const int cuts[3],
                      const int c[3], const double h[3], void *xwhole) {
  int64_t m[3];
  for (int a = 0; a < 3; a++) {
    const int64_t lo = N[a] / 2;
    m[a] = cuts[a] == 1 ? N[a] : (c[a] ? N[a] - lo : lo);
    pt->off[a] = cuts[a] == 1 || !c[a] ? 0 : lo;
  }
  coop_stencil_init(&pt->s, ndim, p, m, 1, h);
  const size_t bytes = (size_t)points(pt->s.grid.n) * coop_prec_size(p);
  pt->x = malloc(bytes);
  pt->y = malloc(bytes);
  copy_part(pt, N, xwhole, 0);
  memset(pt->face, 0, sizeof pt->face);
  for (int a = 0; a < ndim; a++)
    for (int side = 0; side < 2; side++)
      pt->face[a][side] = malloc((size_t)coop_stencil_face_points(&pt->s, a) * coop_prec_size(p));
}

static void part_free(part *pt) {
  free(pt->x);
  free(pt->y);
  for (int a = 0; a < 3; a++) free(pt->face[a][0]), free(pt->face[a][1]);
}

/* The box N cut into cuts[a] parts along each axis: each part applies A to
 * its own points, packs its faces and adds the faces its neighbours packed;
 * the parts' y put together must equal the whole box's y exactly. */
static void check_split(int ndim, coop_precision p, const int64_t N[3], const int cuts[3]) {
  const double h[3] = {0.5, 0.25, 1.0}; /* w = 4, 16, 1: every sum exact */
  coop_stencil whole;
  coop_stencil_init(&whole, ndim, p, N, 1, h);
  const int64_t np = points(whole.grid.n);
  double *x = malloc(sizeof *x * (size_t)np);
  for (int64_t i = 0; i < np; i++) x[i] = (double)((i * 7) % 11) - 5.0;
  void *xw = to_prec(p, x, np), *yw = malloc((size_t)np * coop_prec_size(p));
  void *yparts = calloc((size_t)np, coop_prec_size(p));
  CU_ASSERT_FATAL(coop_stencil_apply_host(&whole, xw, yw) == 0);

  part pt[8];
  const int nparts = cuts[0] * cuts[1] * cuts[2];
  for (int q = 0; q < nparts; q++) {
    const int c[3] = {q % cuts[0], q / cuts[0] % cuts[1], q / (cuts[0] * cuts[1])};
    part_init(&pt[q], ndim, p, whole.grid.n, cuts, c, h, xw);
    CU_ASSERT_FATAL(coop_stencil_apply_host(&pt[q].s, pt[q].x, pt[q].y) == 0);
    CU_ASSERT_FATAL(coop_stencil_pack_faces_host(&pt[q].s, pt[q].x, pt[q].face) == 0);
  }
  for (int q = 0; q < nparts; q++) {
    const int c[3] = {q % cuts[0], q / cuts[0] % cuts[1], q / (cuts[0] * cuts[1])};
    const int step[3] = {1, cuts[0], cuts[0] * cuts[1]};
    const void *ghost[3][2] = {{NULL}};
    for (int a = 0; a < ndim; a++) {
      if (c[a] > 0) ghost[a][0] = pt[q - step[a]].face[a][1];
      if (c[a] + 1 < cuts[a]) ghost[a][1] = pt[q + step[a]].face[a][0];
    }
    CU_ASSERT_FATAL(coop_stencil_add_faces_host(&pt[q].s, ghost, pt[q].y) == 0);
    copy_part(&pt[q], whole.grid.n, yparts, 1);
  }
  int same = 1;
  for (int64_t i = 0; i < np; i++) same &= at(p, yparts, i) == at(p, yw, i);
  CU_ASSERT(same);
  for (int q = 0; q < nparts; q++) part_free(&pt[q]);
  free(x);
  free(xw);
  free(yw);
  free(yparts);
}

static void test_split_2d(void) {
  const int64_t n[3] = {7, 6, 1};
  const int cuts[3][3] = {{2, 1, 1}, {1, 2, 1}, {2, 2, 1}};
  for (int t = 0; t < 3; t++) {
    check_split(2, COOP_FP64, n, cuts[t]);
    check_split(2, COOP_FP32, n, cuts[t]);
  }
}

static void test_split_3d(void) {
  const int64_t n[3] = {5, 4, 6};
  const int cuts[5][3] = {{2, 1, 1}, {1, 2, 1}, {1, 1, 2}, {2, 2, 1}, {2, 2, 2}};
  for (int t = 0; t < 5; t++) {
    check_split(3, COOP_FP64, n, cuts[t]);
    check_split(3, COOP_FP32, n, cuts[t]);
  }
}

/* Without ghosts add_faces leaves y alone; NULL faces are skipped. */
static void test_no_faces(void) {
  const int64_t n[3] = {4, 3, 1};
  const double h[3] = {1.0, 1.0, 1.0};
  coop_stencil s;
  coop_stencil_init(&s, 2, COOP_FP64, n, 1, h);
  double y[12], x[12];
  for (int i = 0; i < 12; i++) y[i] = x[i] = (double)i;
  const void *ghost[3][2] = {{NULL}};
  void *face[3][2] = {{NULL}};
  CU_ASSERT_FATAL(coop_stencil_add_faces_host(&s, ghost, y) == 0);
  CU_ASSERT_FATAL(coop_stencil_pack_faces_host(&s, x, face) == 0);
  int same = 1;
  for (int i = 0; i < 12; i++) same &= y[i] == (double)i;
  CU_ASSERT(same);
}

COOP_UNIT_MPI_MAIN("stencil_krylov",
                   {"2D apply against a dense matrix", test_apply_2d},
                   {"3D apply against a dense matrix", test_apply_3d},
                   {"face layout", test_face_layout},
                   {"2D parts exchanging faces equal the whole box", test_split_2d},
                   {"3D parts exchanging faces equal the whole box", test_split_3d},
                   {"no faces", test_no_faces})
