#include "io/xdmf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/files.h"

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

/* A 2D grid is described as a 3D one with a single z layer. VTK's XDMF readers
 * (ParaView 5.11: XDMFReader, Xdmf3ReaderS/T) map a 2DCoRectMesh's two
 * dimensions to z and y, so a 2D field came out edge-on in the YZ plane with
 * zero width; "1 ny nx" puts it in the XY plane with x fastest, as stored. */
static void put_dims(FILE *f, const coop_io_result *r) {
  if (r->ndim == 2) fputs("1 ", f);
  for (int d = 0; d < r->ndim; d++) fprintf(f, "%s%lld", d ? " " : "", (long long)r->global_shape[d]);
}

/* Origin or spacing in dataset order (z y x); a 2D grid's z layer sits at z = 0
 * with a spacing of the x spacing (a zero spacing upsets some VTK filters). */
static void put_vector(FILE *f, const char *name, const double *v, const coop_io_result *r) {
  fprintf(f, "        <DataItem Name=\"%s\" Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
             "Format=\"XML\">", name);
  if (r->ndim == 2) fprintf(f, "%.17g ", v == r->origin ? 0.0 : r->spacing[1]);
  for (int d = 0; d < r->ndim; d++) fprintf(f, "%s%.17g", d ? " " : "", v[d]);
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

static void put_mesh(FILE *f, const coop_io_result *r, const char *indent) {
  fprintf(f, "%s<Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"", indent);
  put_dims(f, r);
  fprintf(f, "\"/>\n%s<Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n", indent);
  put_vector(f, "Origin", r->origin, r);
  put_vector(f, "Spacing", r->spacing, r);
  fprintf(f, "%s</Geometry>\n", indent);
}

/* Snapshot k of /series/u: the hyperslab [k, 0, ...] of count [1, shape]. */
static void put_snapshot(FILE *f, const char *h5_name, const coop_io_result *r, const coop_xdmf_series *ts,
                         int64_t k) {
  const int rank = r->ndim + 1;
  fprintf(f, "      <Grid Name=\"step %lld\" GridType=\"Uniform\">\n        <Time Value=\"%.17g\"/>\n",
          (long long)ts->steps[k], ts->times[k]);
  put_mesh(f, r, "        ");
  fputs("        <Attribute Name=\"u\" AttributeType=\"Scalar\" Center=\"Node\">\n"
        "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"", f);
  put_dims(f, r);
  fprintf(f, "\" Type=\"HyperSlab\">\n            <DataItem Dimensions=\"3 %d\" Format=\"XML\">%lld", rank,
          (long long)k);
  for (int d = 0; d < r->ndim; d++) fputs(" 0", f); /* start */
  for (int d = 0; d < rank; d++) fputs(" 1", f);    /* stride */
  fputs(" 1", f);                                   /* count */
  for (int d = 0; d < r->ndim; d++) fprintf(f, " %lld", (long long)r->global_shape[d]);
  fprintf(f, "</DataItem>\n            <DataItem Dimensions=\"%lld", (long long)ts->count);
  for (int d = 0; d < r->ndim; d++) fprintf(f, " %lld", (long long)r->global_shape[d]);
  fprintf(f, "\" NumberType=\"Float\" Precision=\"%d\" Format=\"HDF\">", ts->is_float ? 4 : 8);
  put_escaped(f, h5_name);
  fputs(":/series/u</DataItem>\n          </DataItem>\n        </Attribute>\n      </Grid>\n", f);
}

static void put_document(FILE *f, const char *h5_name, const coop_io_result *r, const coop_xdmf_series *ts) {
  fputs("<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"3.0\">\n  <Domain>\n", f);
  if (ts) {
    fputs("    <Grid Name=\"coopsolve\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", f);
    for (int64_t k = 0; k < ts->count; k++) put_snapshot(f, h5_name, r, ts, k);
  } else {
    fputs("    <Grid Name=\"coopsolve\" GridType=\"Uniform\">\n", f);
    put_mesh(f, r, "      ");
    for (int i = 0; i < r->nfields; i++) put_field(f, h5_name, r, &r->fields[i]);
  }
  fputs("    </Grid>\n  </Domain>\n</Xdmf>\n", f);
}

int coop_xdmf_write(const char *xmf_path, const char *h5_name, const coop_io_result *r,
                    const coop_xdmf_series *series) {
  if (r->ndim != 2 && r->ndim != 3)
    return COOP_ERROR(COOP_ERR_RUNTIME, "XDMF describes 2D and 3D grids, not %d dimensions", r->ndim);
  FILE *f = coop_file_create_excl(xmf_path); /* a fresh name: never follow what is there */
  if (!f) return COOP_ERROR(COOP_ERR_RUNTIME, "cannot create %s: %s", xmf_path, strerror(errno));
  put_document(f, h5_name, r, series);
  const int bad = ferror(f);
  const int err = errno;
  if (fclose(f) != 0 || bad)
    return COOP_ERROR(COOP_ERR_RUNTIME, "cannot write %s: %s", xmf_path, strerror(bad ? err : errno));
  return 0;
}
