#include "io/files.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/error.h"
#include "core/signal.h"

/* ---- input files ------------------------------------------------------------ */

int coop_file_open_input(const char *path, const char *what, int *fd) {
  struct stat st;
  /* O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever */
  *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0) return coop_error_input("%s: cannot read %s: %s", path, what, strerror(errno));
  if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int e = errno;
    close(*fd);
    *fd = -1;
    return coop_error_input("%s: cannot read %s: %s", path, what,
                            S_ISREG(st.st_mode) ? strerror(e) : "not a regular file");
  }
  const int flags = fcntl(*fd, F_GETFL);
  if (flags >= 0) (void)fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK); /* no effect on regular files */
  return 0;
}

/* ---- names ------------------------------------------------------------------ */

/* Longest file name MPI-IO takes. Open MPI's ompio (sharedfp/lockedfile) writes
 * NAME ".locktest." RANK into a 256-byte buffer without a bound: a longer name
 * overflows it (glibc aborts the job: "buffer overflow detected"). */
static size_t mpiio_name_max(int nranks) {
#if defined(H5_HAVE_PARALLEL) && defined(OMPI_MAJOR_VERSION)
  size_t digits = 1;
  for (int r = nranks > 1 ? nranks - 1 : 0; r >= 10; r /= 10) digits++;
  return 256 - 1 - (sizeof ".locktest." - 1) - digits;
#else
  (void)nranks;
  return SIZE_MAX;
#endif
}


enum { TMP_BASE = 32 }; /* characters of the output's name kept in its temporary name */

/* Length of path's folder part, the final '/' included (0: the working folder). */
static size_t dir_len(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? (size_t)(slash - path) + 1 : 0;
}

/* path's folder as a name stat() takes; caller frees. */
static char *dir_of(const char *path) {
  const size_t n = dir_len(path);
  if (n == 0) return strdup(".");
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n > 1 ? n - 1 : n] = '\0'; /* "/x" keeps its "/" */
  }
  return d;
}

/* "DIR/.BASE.XXXXXX", BASE cut to TMP_BASE characters; caller frees. */
static char *temp_template(const char *path, const char *base) {
  const size_t d = dir_len(path), b = strlen(base) < TMP_BASE ? strlen(base) : TMP_BASE;
  char *t = malloc(d + b + sizeof "..XXXXXX");
  if (t) {
    memcpy(t, path, d);
    t[d] = '.';
    memcpy(t + d + 1, base, b);
    strcpy(t + d + 1 + b, ".XXXXXX");
  }
  return t;
}

char *coop_output_sibling(const char *path, const char *suffix) {
  const size_t len = strlen(path);
  const size_t keep = len > 3 && strcmp(path + len - 3, ".h5") == 0 ? len - 3 : len;
  char *x = malloc(keep + strlen(suffix) + 1);
  if (x) {
    memcpy(x, path, keep);
    strcpy(x + keep, suffix);
  }
  return x;
}

char *coop_output_xmf_name(const char *path) { return coop_output_sibling(path, ".xmf"); }

void coop_output_drop_stale_xmf(const char *path) {
  enum { MOST = 64 << 20 }; /* an XDMF file of ours is far smaller */
  char *x = coop_output_xmf_name(path), *buf = NULL, *needle = NULL;
  struct stat st;
  const char *base = path + dir_len(path);
  const int fd = x ? open(x, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < MOST &&
      (buf = malloc((size_t)st.st_size + 1)) && (needle = malloc(strlen(base) + 4))) {
    size_t got = 0;
    ssize_t k;
    while (got < (size_t)st.st_size && (k = read(fd, buf + got, (size_t)st.st_size - got)) > 0) got += (size_t)k;
    buf[got] = '\0';
    sprintf(needle, ">%s:/", base);
    if (strstr(buf, "<Xdmf") && strstr(buf, needle)) unlink(x);
  }
  if (fd >= 0) close(fd);
  free(needle);
  free(buf);
  free(x);
}

/* Fill template t with a name no file has now: mkstemp creates it exclusively,
 * and it is removed again so the writer's own exclusive create makes it. */
static int fresh_name(char *t) {
  const int fd = mkstemp(t);
  if (fd < 0) return COOP_ERROR(COOP_ERR_RUNTIME, "cannot create a temporary file %s: %s", t, strerror(errno));
  close(fd);
  unlink(t);
  return 0;
}

static int names_local(coop_outnames *nm, const char *path, int xdmf) {
  const char *slash = strrchr(path, '/');
  nm->base = slash ? slash + 1 : path;
  if (!nm->base[0]) return COOP_ERROR(COOP_ERR_RUNTIME, "output path \"%s\" names a directory", path);
  nm->tmp = temp_template(path, nm->base);
  if (xdmf && (nm->xmf = coop_output_xmf_name(path))) nm->xmf_tmp = temp_template(nm->xmf, nm->xmf + dir_len(nm->xmf));
  if (!nm->tmp || (xdmf && !nm->xmf_tmp)) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  return 0;
}

int coop_outnames_create(coop_outnames *nm, MPI_Comm comm, const char *path, int xdmf) {
  int rank, size, st;
  memset(nm, 0, sizeof *nm);
  COOP_MPI(MPI_Comm_rank(comm, &rank));
  COOP_MPI(MPI_Comm_size(comm, &size));
  st = names_local(nm, path, xdmf);
  if (!st && strlen(nm->tmp) > mpiio_name_max(size)) /* checked at setup; here for other callers */
    st = COOP_ERROR(COOP_ERR_RUNTIME, "output path %s is too long for MPI-IO (%zu characters at most "
                    "for its temporary name %s)", path, mpiio_name_max(size), nm->tmp);
  if (!st && rank == 0) st = fresh_name(nm->tmp);
  if (!st && rank == 0 && xdmf) st = fresh_name(nm->xmf_tmp);
  /* the templates have the same length on every rank: only the X's differ */
  int bad = st != 0;
  COOP_MPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  if (bad) return st ? st : coop_error_remote(COOP_ERR_RUNTIME, "another rank failed while writing %s", path);
  COOP_MPI(MPI_Bcast(nm->tmp, (int)strlen(nm->tmp), MPI_CHAR, 0, comm));
  if (xdmf) COOP_MPI(MPI_Bcast(nm->xmf_tmp, (int)strlen(nm->xmf_tmp), MPI_CHAR, 0, comm));
  coop_signal_track(nm->tmp); /* Ctrl-C or a hangup leaves no temporary behind */
  coop_signal_track(nm->xmf_tmp);
  return 0;
}

int coop_outnames_publish(const coop_outnames *nm, const char *path) {
  if (rename(nm->tmp, path) != 0) {
    const int e = errno;
    coop_outnames_discard(nm);
    return COOP_ERROR(COOP_ERR_RUNTIME, "cannot rename %s to %s: %s", nm->tmp, path, strerror(e));
  }
  if (nm->xmf && rename(nm->xmf_tmp, nm->xmf) != 0) {
    /* the new HDF5 file is whole and stays; the old XDMF file is not touched */
    const int e = errno;
    unlink(nm->xmf_tmp);
    return COOP_ERROR(COOP_ERR_RUNTIME, "wrote %s, but cannot rename %s to %s: %s", path, nm->xmf_tmp,
                      nm->xmf, strerror(e));
  }
  return 0;
}

void coop_outnames_discard(const coop_outnames *nm) {
  if (nm->tmp) unlink(nm->tmp);
  if (nm->xmf_tmp) unlink(nm->xmf_tmp);
}

void coop_outnames_free(coop_outnames *nm) {
  coop_signal_untrack(nm->tmp);
  coop_signal_untrack(nm->xmf_tmp);
  free(nm->tmp);
  free(nm->xmf);
  free(nm->xmf_tmp);
  memset(nm, 0, sizeof *nm);
}

FILE *coop_file_create_excl(const char *path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    const int e = errno;
    close(fd);
    unlink(path);
    errno = e;
  }
  return f;
}

/* ---- checks of an output path ------------------------------------------------ */

/* Why no file can be created beside path, or NULL: tried with a fresh name
 * (access() would not tell: root passes it, NFS may say yes and refuse). */
static const char *probe_folder(const char *path, char **errtext) {
  const char *slash = strrchr(path, '/');
  char *t = temp_template(path, slash ? slash + 1 : path);
  if (!t) return "out of memory";
  const int fd = mkstemp(t);
  if (fd >= 0) {
    close(fd);
    unlink(t);
  } else {
    *errtext = strerror(errno);
  }
  free(t);
  return fd >= 0 ? NULL : "is not writable";
}

/* Why path cannot take the output, or NULL; n and m fill in numbers. */
static const char *path_problem(const char *path, const char *dir, int nranks, int xdmf,
                                size_t *n, size_t *m, char **errtext) {
  struct stat st;
  const size_t len = strlen(path), dlen = dir_len(path);
  if (len == 0 || path[len - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
    return "names a directory, not a file";
  /* the finished file is renamed over what is there: never over a device or FIFO */
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return "names a device, FIFO or socket, not a regular file";
  if (xdmf) {
    char *x = coop_output_xmf_name(path);
    const int taken = x && stat(x, &st) == 0 && !S_ISREG(st.st_mode);
    free(x);
    if (taken) return "the name of the XDMF file written beside it (.xmf for .h5) is taken by a directory, "
                      "device, FIFO or socket";
  }
  *n = len;
  *m = PATH_MAX - 1;
  if (len >= PATH_MAX) return "is %zu characters long; a path holds at most %zu";
  if (stat(dir, &st) != 0) {
    if (errno == ENOENT) return "its directory does not exist";
    *errtext = strerror(errno);
    return "cannot be read";
  }
  if (!S_ISDIR(st.st_mode)) return "its directory is not a directory";
  const long nm = pathconf(dir, _PC_NAME_MAX);
  /* the XDMF name: ".h5" becomes ".xmf" (one more), another name gets ".xmf" */
  const int h5 = len > 3 && strcmp(path + len - 3, ".h5") == 0;
  const size_t base = len - dlen, xbase = base + (xdmf ? (h5 ? 1 : 4) : 0);
  *m = nm > 0 ? (size_t)nm : 255;
  *n = xbase;
  if (xbase > *m) return xdmf ? "its file name, with .xmf for the XDMF file beside it, is %zu characters; "
                                "this file system takes at most %zu"
                              : "its file name is %zu characters; this file system takes at most %zu";
  *n = dlen + 1 + (base < TMP_BASE ? base : TMP_BASE) + 7; /* the name MPI-IO opens */
  *m = mpiio_name_max(nranks) < PATH_MAX - 1 ? mpiio_name_max(nranks) : PATH_MAX - 1;
  if (*n > *m)
    return "is too long: the temporary name it is written under would be %zu characters, more "
           "than MPI-IO and this system take (%zu); use a shorter path (a relative one, or "
           "shorter folder names)";
  return probe_folder(path, errtext);
}

int coop_output_check(const char *path, int nranks, int xdmf, const char *fmt, ...) {
  char *dir = dir_of(path), *errtext = NULL, *label = NULL;
  size_t n = 0, m = 0;
  va_list ap;
  if (!dir) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  const char *why = path_problem(path, dir, nranks, xdmf, &n, &m, &errtext);
  int rc = 0;
  if (why) {
    va_start(ap, fmt);
    const int ln = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (ln >= 0 && (label = malloc((size_t)ln + 1))) {
      va_start(ap, fmt);
      vsnprintf(label, (size_t)ln + 1, fmt, ap);
      va_end(ap);
    }
    char reason[512];
    snprintf(reason, sizeof reason, why, n, m); /* why comes from the table above */
    if (errtext)
      rc = coop_error_input("%s: its directory %s %s (%s)", label ? label : path, dir, reason, errtext);
    else
      rc = coop_error_input("%s: %s", label ? label : path, reason);
  }
  free(label);
  free(dir);
  return rc;
}

int coop_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  const int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea || eb) return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  const char *la = a + dir_len(a), *lb = b + dir_len(b);
  if (strcmp(la, lb) != 0) return 0;
  char *da = dir_of(a), *db = dir_of(b);
  const int same = da && db && stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
                   sa.st_ino == sb.st_ino;
  free(da);
  free(db);
  return same;
}

int coop_output_spares(const char *path, int xdmf, const char *const *inputs, int n, const char *fmt, ...) {
  char *x = xdmf ? coop_output_xmf_name(path) : NULL;
  if (xdmf && !x) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  const char *hit = NULL, *as = NULL;
  for (int i = 0; i < n && !hit; i++) {
    if (!inputs[i]) continue;
    if (coop_same_file(path, inputs[i])) hit = inputs[i], as = path;
    else if (x && coop_same_file(x, inputs[i])) hit = inputs[i], as = x;
  }
  int rc = 0;
  if (hit) {
    char label[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(label, sizeof label, fmt, ap);
    va_end(ap);
    rc = coop_error_input("%s: %s would replace %s, which this run reads", label, as, hit);
  }
  free(x);
  return rc;
}

uint64_t coop_output_free(const char *path) {
  struct statvfs fs;
  char *dir = dir_of(path);
  const int known = dir && statvfs(dir, &fs) == 0;
  free(dir);
  return known ? (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize : UINT64_MAX;
}

int coop_output_space(const char *path, uint64_t need) {
  char *dir = dir_of(path);
  if (!dir) return COOP_ERROR(COOP_ERR_RUNTIME, "out of memory");
  const uint64_t avail = coop_output_free(path);
  int rc = 0;
  if (avail != UINT64_MAX && avail < need)
    rc = COOP_ERROR(COOP_ERR_RUNTIME, "cannot write %s: the file system of %s has %.1f KiB free, and the "
                    "data alone take %.1f KiB (%s)", path, dir, (double)avail / 1024.0,
                    (double)need / 1024.0, strerror(ENOSPC));
  free(dir);
  return rc;
}
