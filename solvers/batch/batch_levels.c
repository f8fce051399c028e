/* The order in which a GPU hands out a batch's problems, and the levels of
 * the row groups that split for ragged batches (solvers/batch/batch.h says what
 * they are). Host arithmetic only, so the unit tests can check the rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/batch/batch.h"

#include "core/error.h"

double coop_batch_work(const coop_batch *bt, const coop_batch_ctl *ctl, int64_t p) {
  const double n = (double)(bt->row_off[p + 1] - bt->row_off[p]);
  const double nnz = (double)(bt->rowptr[bt->row_off[p + 1]] - bt->rowptr[bt->row_off[p]]);
  double it;
  if (ctl->method == COOP_BATCH_HEAT) it = bt->steps ? (double)bt->steps[p] : 1.0;
  else {
    /* a 2D-like operator: kappa ~ rows; Jacobi needs ~kappa sweeps, CG ~sqrt */
    it = ctl->method == COOP_BATCH_JACOBI ? n : sqrt(n);
    if (ctl->max_iter > 0 && it > (double)ctl->max_iter) it = (double)ctl->max_iter;
  }
  if (it < 1.0) it = 1.0;
  return (nnz > n ? nnz : n + 1.0) * it; /* an empty problem still has its stop test */
}

int coop_batch_is_ragged(const double *work, int64_t count) {
  if (count < 2) return 0;
  double sum = 0.0, mx = 0.0;
  for (int64_t p = 0; p < count; p++) sum += work[p], mx = work[p] > mx ? work[p] : mx;
  return mx >= COOP_BATCH_RAGGED * (sum / (double)count);
}

/* Largest power of two <= v (v >= 1), and smallest >= v. */
static int64_t pow2_floor(int64_t v) {
  int64_t b = 1;
  while (b <= v / 2) b *= 2;
  return b;
}
static int64_t pow2_ceil(double v) {
  int64_t b = 1;
  while ((double)b < v && b < ((int64_t)1 << 40)) b *= 2;
  return b;
}

/* Blocks problem p can use well: enough that it takes at most 1 / SHARE of
 * the even share of the whole batch (so it is never the last one running),
 * but no fewer than COOP_BATCH_GROUP_ROWS rows a block. */
static int64_t blocks_wanted(const coop_batch *bt, int64_t p, double work, double total, int64_t resident) {
  const int64_t need = pow2_ceil(COOP_BATCH_SPLIT_SHARE * work * (double)resident / total);
  const int64_t rows = bt->row_off[p + 1] - bt->row_off[p];
  const int64_t cap = pow2_floor(rows / COOP_BATCH_GROUP_ROWS > 1 ? rows / COOP_BATCH_GROUP_ROWS : 1);
  return need < cap ? need : cap;
}

/* Level sizes: top, then halves while even, then 1; each divides the one
 * before, so a level's groups nest in the one above. */
static int level_sizes(int top, int *size) {
  int n = 0;
  size[n++] = top;
  for (int s = top; s > 1 && n < COOP_BATCH_MAX_LEVELS;) {
    s = s % 2 == 0 ? s / 2 : 1;
    size[n++] = s;
  }
  return n;
}

typedef struct {
  int level;
  double work;
  int64_t p;
} item;

static int by_level_work(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->level != y->level) return x->level - y->level;
  if (x->work != y->work) return x->work > y->work ? -1 : 1;
  return (x->p > y->p) - (x->p < y->p);
}

static int by_level_index(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->level != y->level) return x->level - y->level;
  return (x->p > y->p) - (x->p < y->p);
}

int coop_batch_plan_levels(const coop_batch *bt, const coop_batch_ctl *ctl, int64_t resident, int top,
                           int split, int largest_first, int64_t *order, coop_batch_levels *lv) {
  const int64_t count = bt->count;
  memset(lv, 0, sizeof *lv);
  if (resident < 1 || top < 0) return COOP_ERROR(COOP_ERR_RUNTIME, "coop_batch_plan_levels: %lld resident, top %d",
                                                 (long long)resident, top);
  item *it = malloc((size_t)(count > 0 ? count : 1) * sizeof *it);
  if (!it) return COOP_ERROR(COOP_ERR_RUNTIME, "out of host memory");
  double total = 0.0;
  for (int64_t p = 0; p < count; p++) {
    it[p] = (item){0, coop_batch_work(bt, ctl, p), p};
    total += it[p].work;
  }
  int64_t want_max = 1;
  if (split)
    for (int64_t p = 0; p < count; p++) {
      const int64_t w = blocks_wanted(bt, p, it[p].work, total, resident);
      want_max = w > want_max ? w : want_max;
    }
  if (top == 0) { /* auto: the most any problem wants, within what is resident */
    const int64_t r = pow2_floor(resident);
    top = (int)(want_max < r ? want_max : r);
  }
  lv->top_blocks = top;
  lv->levels = split ? level_sizes(top, lv->size) : 1;
  if (!split) lv->size[0] = top;
  for (int64_t p = 0; split && p < count; p++) {
    const int64_t w = blocks_wanted(bt, p, it[p].work, total, resident);
    int l = 0; /* the largest group it can use well */
    while (l + 1 < lv->levels && lv->size[l] > w) l++;
    it[p].level = l;
  }
  qsort(it, (size_t)count, sizeof *it, largest_first ? by_level_work : by_level_index);
  for (int l = 0; l <= lv->levels; l++) lv->start[l] = count;
  for (int64_t k = count - 1; k >= 0; k--) {
    order[k] = it[k].p;
    for (int l = 0; l <= it[k].level; l++) lv->start[l] = k;
  }
  lv->start[0] = 0;
  free(it);
  return 0;
}
