/* The files a run touches, handled so that hostile ones cannot hurt it: input
 * files opened without blocking (a FIFO or a device is refused, not waited
 * on), output paths checked before the solve (folder, lengths MPI-IO can take,
 * free space), and the fresh temporary names an output is written under and
 * renamed from, which no planted file or symlink can stand in for. */
#ifndef COOP_FILES_H
#define COOP_FILES_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* Open path for reading without ever blocking on it; *fd is a blocking
 * descriptor of a regular file (caller closes). Anything else (missing, a
 * FIFO, a directory, a device) is an input error "PATH: cannot read WHAT: why". */
int coop_file_open_input(const char *path, const char *what, int *fd);

/* Rank-local check that path can take an output file written by nranks ranks
 * (with the XDMF file beside it if xdmf): its folder exists and a file can be
 * created in it (tried, then removed), path does not name a folder, and path,
 * its temporary name and the XDMF name fit PATH_MAX, NAME_MAX and what the
 * MPI-IO library takes (Open MPI's ompio builds lock-file names in a 256-byte
 * buffer), and neither path nor the XDMF name is taken by a directory,
 * device, FIFO or socket (the finished file is renamed over what is there).
 * A problem is an input error "LABEL: why", LABEL formatted from fmt
 * (e.g. the option and its origin). */
int coop_output_check(const char *path, int nranks, int xdmf, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A file beside an output path: its ".h5" replaced by (or, for other names,
 * followed by) suffix (".xmf": the XDMF file; ".ckpt.h5": the checkpoint);
 * caller frees; NULL without memory. */
char *coop_output_sibling(const char *path, const char *suffix);
/* The XDMF file written beside an output path: coop_output_sibling(path, ".xmf"). */
char *coop_output_xmf_name(const char *path);
/* Rank 0, after path was published without an XDMF file: remove the XDMF
 * file an earlier run left beside it if it describes path (a regular file
 * whose data items name "BASE:/"): it would describe datasets the new file
 * may lack. Anything else there is left alone. */
void coop_output_drop_stale_xmf(const char *path);
/* Whether names a and b are one file: the same inode when both exist, else
 * (neither exists) the same folder and last name ("./x.h5" and "x.h5"). */
int coop_same_file(const char *a, const char *b);
/* Rank-local: an input error "LABEL: ..." when the output path (or its XDMF
 * file, if xdmf) is the same file as one of inputs[0..n-1] (NULLs skipped),
 * which the run reads and would replace at its end; LABEL from fmt. */
int coop_output_spares(const char *path, int xdmf, const char *const *inputs, int n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Run-time error (status 1) when the file system of path's folder has fewer
 * than need bytes free for unprivileged writers. */
int coop_output_space(const char *path, uint64_t need);
/* Bytes free there (UINT64_MAX when unknown). */
uint64_t coop_output_free(const char *path);

/* The names of one output. tmp and xmf_tmp are unique names in path's folder
 * that existed for a moment (mkstemp proved them free) and were removed, so
 * the writer must create them exclusively (HDF5: H5F_ACC_EXCL; XDMF:
 * coop_file_create_excl), which fails rather than follow anything planted. */
typedef struct {
  char *tmp;        /* ".BASE.XXXXXX" beside path */
  char *xmf;        /* the XDMF file; NULL without XDMF */
  char *xmf_tmp;    /* its temporary name */
  const char *base; /* the HDF5 file's basename, inside the caller's path */
} coop_outnames;

/* Collective over comm: rank 0 picks the names, every rank receives them. */
int coop_outnames_create(coop_outnames *nm, MPI_Comm comm, const char *path, int xdmf);
/* Rank 0: rename the finished temporaries to path (first) and the XDMF name.
 * A failure removes the temporaries not yet renamed; path is never removed. */
int coop_outnames_publish(const coop_outnames *nm, const char *path);
/* Remove the temporaries (unlink: never a folder; a name, never its target). */
void coop_outnames_discard(const coop_outnames *nm);
void coop_outnames_free(coop_outnames *nm); /* accepts a zeroed one */

/* Create path for writing, failing if anything (a file, a symlink) is there;
 * NULL with errno set. Mode 0666 less the umask, like fopen. */
FILE *coop_file_create_excl(const char *path);

#endif
