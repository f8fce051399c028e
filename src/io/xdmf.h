/* XDMF description of a coop_io_write file, so ParaView and VisIt can open it.
 * Internal to the io module. */
#ifndef COOP_XDMF_H
#define COOP_XDMF_H

#include "io/io.h"

/* Write an XDMF 3 file at xmf_path: one Uniform grid (3DCoRectMesh, origin and
 * spacing in dataset order z y x, as VTK's readers expect; a 2D grid as one z
 * layer "1 ny nx" at z = 0, so ParaView and VisIt show it in the XY plane) with
 * one node-centred Attribute per field of r, each referring to
 * "h5_name:/fields/NAME". h5_name is the HDF5 file's name relative to the XDMF
 * file (its basename). 2D and 3D grids only (a matrix problem's vector has no
 * grid). Local, not collective; the caller removes the file on failure. */
int coop_xdmf_write(const char *xmf_path, const char *h5_name, const coop_io_result *r);

#endif
