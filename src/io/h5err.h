/* HDF5 calls under the project's error discipline: a failing call becomes a
 * run-time fault naming the call and HDF5's innermost reason. The *_TRY forms
 * need a local int st and a done: label that releases everything. */
#ifndef COOP_H5ERR_H
#define COOP_H5ERR_H

#include <hdf5.h>

#include "core/comm.h"
#include "core/error.h"

int coop_h5_fail(const char *file, int line, const char *call);
/* Close id if open; a failure counts only when nothing failed before. */
int coop_h5_close(int st, hid_t id, herr_t (*fn)(hid_t), const char *file, int line, const char *call);

/* Attributes of obj: a scalar variable-length UTF-8 string (h5py reads it as
 * str), and a number or 1D array of n numbers (n == 0: a scalar) of memory
 * type mtype stored as ftype. */
int coop_h5_attr_str(hid_t obj, const char *name, const char *value);
int coop_h5_attr_num(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *data, hsize_t n);

/* Our messages replace HDF5's printed stacks; the caller's handler comes back after. */
typedef struct {
  H5E_auto2_t func;
  void *data;
  int saved;
} coop_h5_quiet;
void coop_h5_quiet_begin(coop_h5_quiet *q);
void coop_h5_quiet_end(const coop_h5_quiet *q);

#define COOP_H5_TRY(call)                                  \
  do {                                                     \
    if ((call) < 0) {                                      \
      st = coop_h5_fail(__FILE__, __LINE__, #call);        \
      goto done;                                           \
    }                                                      \
  } while (0)
#define COOP_H5_ID(id, call)                               \
  do {                                                     \
    if (((id) = (call)) < 0) {                             \
      st = coop_h5_fail(__FILE__, __LINE__, #call);        \
      goto done;                                           \
    }                                                      \
  } while (0)
#define COOP_MPI_TRY(call)                                 \
  do {                                                     \
    const int mpi_e_ = (call);                             \
    if (mpi_e_ != MPI_SUCCESS) {                           \
      st = coop_error_mpi(mpi_e_, #call, __FILE__, __LINE__); \
      goto done;                                           \
    }                                                      \
  } while (0)
#define COOP_TRY(expr)                                     \
  do {                                                     \
    if ((st = (expr)) != 0) {                              \
      st = coop_error_trace(st, __FILE__, __LINE__);       \
      goto done;                                           \
    }                                                      \
  } while (0)
#define COOP_H5_CLOSE(id, fn) (st = coop_h5_close(st, (id), (fn), __FILE__, __LINE__, #fn "(" #id ")"))

#endif
