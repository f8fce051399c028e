/* XDMF description of a coop_io_write file, so ParaView and VisIt can open it.
 * Internal to the io module. */
#ifndef COOP_XDMF_H
#define COOP_XDMF_H

#include "io/io.h"

/* The time series of the file, when it has one. */
typedef struct {
  int64_t count;        /* snapshots in /series/u */
  const int64_t *steps; /* count entries: /series/step */
  const double *times;  /* count entries: /series/time */
  int is_float;        /* float32 snapshots */
} coop_xdmf_series;

/* Write an XDMF 3 file at xmf_path: one Uniform grid (3DCoRectMesh, origin and
 * spacing in dataset order z y x, as VTK's readers expect; a 2D grid as one z
 * layer "1 ny nx" at z = 0, so ParaView and VisIt show it in the XY plane) with
 * one node-centred Attribute per field of r, each referring to
 * "h5_name:/fields/NAME". With a series (not NULL) the file describes the
 * series instead: a Temporal Collection of such grids, one per snapshot with
 * its <Time Value>, whose Attribute u is a HyperSlab of "h5_name:/series/u"
 * (the last snapshot is /fields/u), so ParaView plays it. h5_name is the HDF5
 * file's name relative to the XDMF file (its basename). 2D and 3D grids only
 * (a matrix problem's vector has no grid). Local, not collective; the caller
 * removes the file on failure. */
int coop_xdmf_write(const char *xmf_path, const char *h5_name, const coop_io_result *r,
                    const coop_xdmf_series *series);

#endif
