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

static void put_document(FILE *f, const char *h5_name, const coop_io_result *r) {
  fputs("<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
        "<Xdmf Version=\"3.0\">\n  <Domain>\n    <Grid Name=\"coopsolve\" GridType=\"Uniform\">\n",
        f);
  fputs("      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"", f);
  put_dims(f, r);
  fputs("\"/>\n      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n", f);
  put_vector(f, "Origin", r->origin, r);
  put_vector(f, "Spacing", r->spacing, r);
  fputs("      </Geometry>\n", f);
  for (int i = 0; i < r->nfields; i++) put_field(f, h5_name, r, &r->fields[i]);
  fputs("    </Grid>\n  </Domain>\n</Xdmf>\n", f);
}

int coop_xdmf_write(const char *xmf_path, const char *h5_name, const coop_io_result *r) {
  if (r->ndim != 2 && r->ndim != 3)
    return COOP_ERROR(COOP_ERR_RUNTIME, "XDMF describes 2D and 3D grids, not %d dimensions", r->ndim);
  FILE *f = coop_file_create_excl(xmf_path); /* a fresh name: never follow what is there */
  if (!f) return COOP_ERROR(COOP_ERR_RUNTIME, "cannot create %s: %s", xmf_path, strerror(errno));
  put_document(f, h5_name, r);
  const int bad = ferror(f);
  const int err = errno;
  if (fclose(f) != 0 || bad)
    return COOP_ERROR(COOP_ERR_RUNTIME, "cannot write %s: %s", xmf_path, strerror(bad ? err : errno));
  return 0;
}
