#include "io/xdmf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

/* Field and file names are user data; escape them for XML text and attributes. */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default: fputc(*s, f);
    }
  }
}

static void put_dims(FILE *f, const coop_io_result *r) {
  for (int d = 0; d < r->ndim; d++) fprintf(f, "%s%lld", d ? " " : "", (long long)r->global_shape[d]);
}

static void put_vector(FILE *f, const char *name, const double *v, int n) {
  fprintf(f, "        <DataItem Name=\"%s\" Dimensions=\"%d\" NumberType=\"Float\" Precision=\"8\" "
             "Format=\"XML\">", name, n);
  for (int d = 0; d < n; d++) fprintf(f, "%s%.17g", d ? " " : "", v[d]);
  fputs("</DataItem>\n", f);
}

static void put_field(FILE *f, const char *h5_name, const coop_io_result *r, const coop_io_field *fl) {
  fputs("      <Attribute Name=\"", f);
  put_escaped(f, fl->name);
  fputs("\" AttributeType=\"Scalar\" Center=\"Node\">\n        <DataItem Dimensions=\"", f);
  put_dims(f, r);
  fprintf(f, "\" NumberType=\"Float\" Precision=\"%d\" Format=\"HDF\">", fl->is_float ? 4 : 8);
  put_escaped(f, h5_name);
  fputs(":/fields/", f);
  put_escaped(f, fl->name);
  fputs("</DataItem>\n      </Attribute>\n", f);
}

static void put_document(FILE *f, const char *h5_name, const coop_io_result *r) {
  const int three = r->ndim == 3;
  fputs("<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
        "<Xdmf Version=\"3.0\">\n  <Domain>\n    <Grid Name=\"coopsolve\" GridType=\"Uniform\">\n",
        f);
  fprintf(f, "      <Topology TopologyType=\"%s\" Dimensions=\"", three ? "3DCoRectMesh" : "2DCoRectMesh");
  put_dims(f, r);
  fprintf(f, "\"/>\n      <Geometry GeometryType=\"%s\">\n", three ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY");
  put_vector(f, "Origin", r->origin, r->ndim);
  put_vector(f, "Spacing", r->spacing, r->ndim);
  fputs("      </Geometry>\n", f);
  for (int i = 0; i < r->nfields; i++) put_field(f, h5_name, r, &r->fields[i]);
  fputs("    </Grid>\n  </Domain>\n</Xdmf>\n", f);
}

int coop_xdmf_write(const char *xmf_path, const char *h5_name, const coop_io_result *r) {
  FILE *f = fopen(xmf_path, "w");
  if (!f) return COOP_ERROR(COOP_ERR_RUNTIME, "cannot create %s: %s", xmf_path, strerror(errno));
  put_document(f, h5_name, r);
  const int bad = ferror(f);
  const int err = errno;
  if (fclose(f) != 0 || bad)
    return COOP_ERROR(COOP_ERR_RUNTIME, "cannot write %s: %s", xmf_path, strerror(bad ? err : errno));
  return 0;
}
