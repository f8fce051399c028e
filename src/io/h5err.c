#include "io/h5err.h"

#include <stdio.h>

static herr_t walk(unsigned n, const H5E_error2_t *e, void *text) {
  (void)n;
  /* walking downward, the last entry is the innermost: the one that says why */
  if (e->desc && e->desc[0]) snprintf(text, 512, "%s", e->desc);
  return 0;
}

int coop_h5_fail(const char *file, int line, const char *call) {
  char text[512] = "";
  if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk, text) < 0) text[0] = '\0';
  (void)H5Eclear2(H5E_DEFAULT); /* nothing left to report if clearing fails */
  return coop_error_raise(COOP_ERR_RUNTIME, file, line, "HDF5: %s failed%s%s", call,
                          text[0] ? ": " : "", text);
}

int coop_h5_close(int st, hid_t id, herr_t (*fn)(hid_t), const char *file, int line, const char *call) {
  if (id < 0) return st;
  if (fn(id) < 0 && st == 0) return coop_h5_fail(file, line, call);
  return st;
}

void coop_h5_quiet_begin(coop_h5_quiet *q) {
  q->saved = H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) >= 0;
  if (q->saved) (void)H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void coop_h5_quiet_end(const coop_h5_quiet *q) {
  if (q->saved) (void)H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* A fixed-length string would come back as bytes in h5py; h5dump prints
 * either as text. */
int coop_h5_attr_str(hid_t obj, const char *name, const char *value) {
  int st = 0;
  hid_t type = -1, space = -1, attr = -1;
  COOP_H5_ID(type, H5Tcopy(H5T_C_S1));
  COOP_H5_TRY(H5Tset_size(type, H5T_VARIABLE));
  COOP_H5_TRY(H5Tset_cset(type, H5T_CSET_UTF8));
  COOP_H5_ID(space, H5Screate(H5S_SCALAR));
  COOP_H5_ID(attr, H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
  COOP_H5_TRY(H5Awrite(attr, type, &value));
done:
  COOP_H5_CLOSE(attr, H5Aclose);
  COOP_H5_CLOSE(space, H5Sclose);
  COOP_H5_CLOSE(type, H5Tclose);
  return st;
}

int coop_h5_attr_num(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *data, hsize_t n) {
  int st = 0;
  hid_t space = -1, attr = -1;
  COOP_H5_ID(space, n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR));
  COOP_H5_ID(attr, H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT));
  COOP_H5_TRY(H5Awrite(attr, mtype, data));
done:
  COOP_H5_CLOSE(attr, H5Aclose);
  COOP_H5_CLOSE(space, H5Sclose);
  return st;
}
