# COOP_CHECK_NCCL: NCCL for GPU-to-GPU halos (tune.halo = nccl), optional and
# off unless asked for: --with-nccl looks for nccl.h and libnccl beside the
# CUDA toolkit, in DIR, or in the system's paths; the program then finds the
# library by an rpath. Needs the CUDA backend. Sets NCCL_CFLAGS, NCCL_LIBS and
# COOP_HAVE_NCCL.
AC_DEFUN([COOP_CHECK_NCCL], [
AC_ARG_WITH([nccl],
  [AS_HELP_STRING([--with-nccl@<:@=DIR@:>@],
    [GPU-to-GPU halos through NCCL (tune.halo = nccl), with nccl.h and libnccl in DIR/include and DIR/lib (default: off)])],
  [], [with_nccl=no])
coop_nccl=no
NCCL_CFLAGS=
NCCL_LIBS=
AS_IF([test "x$with_nccl" != xno], [
  AS_IF([test "x$coop_cuda" != xyes], [AC_MSG_ERROR([--with-nccl needs the CUDA backend])])
  AS_IF([test "x$with_nccl" = xyes], [coop_roots="$CUDA_HOME /usr/local /usr"], [coop_roots="$with_nccl"])
  coop_save_LIBS=$LIBS
  coop_save_CPPFLAGS=$CPPFLAGS
  for coop_r in $coop_roots; do
    for coop_l in "$coop_r/lib" "$coop_r/lib64" "$coop_r/lib/x86_64-linux-gnu" "$coop_r/targets/x86_64-linux/lib"; do
      AS_IF([test "x$coop_nccl" = xyes || test ! -f "$coop_l/libnccl.so"], [continue])
      AC_MSG_CHECKING([for NCCL in $coop_r/include and $coop_l])
      CPPFLAGS="-I$coop_r/include -I$CUDA_HOME/include $coop_save_CPPFLAGS"
      LIBS="-L$coop_l -Wl,-rpath,$coop_l -lnccl $CUDA_LIBS $coop_save_LIBS"
      dnl 2.14: non-blocking setup (ncclCommInitRankConfig), so a rank's failure cannot hang the others
      AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <nccl.h>
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error NCCL 2.14 or later needed
#endif]], [[ncclConfig_t c = NCCL_CONFIG_INITIALIZER; int v; (void)c; return ncclGetVersion(&v);]])],
        [coop_nccl=yes
         NCCL_CFLAGS="-I$coop_r/include -I$CUDA_HOME/include"
         NCCL_LIBS="-L$coop_l -Wl,-rpath,$coop_l -lnccl"])
      AC_MSG_RESULT([$coop_nccl])
    done
  done
  LIBS=$coop_save_LIBS
  CPPFLAGS=$coop_save_CPPFLAGS
  AS_IF([test "x$coop_nccl" = xno], [AC_MSG_ERROR([--with-nccl given but nccl.h and libnccl (2.14 or later) were not found or do not link])])
])
AS_IF([test "x$coop_nccl" = xyes],
  [AC_DEFINE([COOP_HAVE_NCCL], [1], [Define to 1 when halos may go through NCCL])],
  [AC_DEFINE([COOP_HAVE_NCCL], [0], [Define to 1 when halos may go through NCCL])])
AC_SUBST([NCCL_CFLAGS])
AC_SUBST([NCCL_LIBS])
])
