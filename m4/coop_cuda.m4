# COOP_CHECK_CUDA
# ---------------
# --with-cuda[=DIR]: build the cuda backend (default: where nvcc works).
# --with-cuda-arch="sm_90 sm_100": machine code for each, plus PTX of the last.
# Sets NVCC, NVCC_GENCODE, CUDA_LIBS; AM_CONDITIONAL HAVE_CUDA; defines
# COOP_HAVE_CUDA (0 or 1) and COOP_CUDA_ARCHS.
AC_DEFUN([COOP_CHECK_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
    [build the CUDA backend, with the toolkit in DIR (default: where nvcc works)])],
  [], [with_cuda=check])
AC_ARG_WITH([cuda-arch],
  [AS_HELP_STRING([--with-cuda-arch=LIST],
    [GPU architectures for machine code (default: "sm_90 sm_100"), PTX for the last])],
  [], [with_cuda_arch="sm_90 sm_100"])
AC_ARG_VAR([NVCC], [CUDA compiler])
AC_ARG_VAR([NVCCFLAGS], [flags for the CUDA compiler])
coop_cuda=no
AS_IF([test "x$with_cuda" != xno], [
  AS_CASE([$with_cuda],
    [yes|check], [AC_PATH_PROG([NVCC], [nvcc], [], [$PATH$PATH_SEPARATOR/usr/local/cuda/bin])],
    [NVCC="$with_cuda/bin/nvcc"])
  AS_IF([test -n "$NVCC" && test -x "$NVCC"], [
    CUDA_HOME=`dirname "$NVCC"`
    CUDA_HOME=`dirname "$CUDA_HOME"`
    NVCC_GENCODE=
    coop_last=
    for coop_a in $with_cuda_arch; do
      coop_n=`echo "$coop_a" | sed 's/^sm_//; s/^compute_//'`
      NVCC_GENCODE="$NVCC_GENCODE -gencode arch=compute_$coop_n,code=sm_$coop_n"
      coop_last=$coop_n
    done
    AS_IF([test -n "$coop_last"],
      [NVCC_GENCODE="$NVCC_GENCODE -gencode arch=compute_$coop_last,code=compute_$coop_last"])
    AC_MSG_CHECKING([whether $NVCC compiles for $with_cuda_arch])
    cat > conftest.cu <<_COOP_EOF
#include <cooperative_groups.h>
__global__ void k(double *x) { cooperative_groups::this_grid().sync(); x[[threadIdx.x]] = 1.0; }
int main(void) { return 0; }
_COOP_EOF
    AS_IF([$NVCC $NVCC_GENCODE $NVCCFLAGS -c conftest.cu -o conftest.$OBJEXT >&AS_MESSAGE_LOG_FD 2>&1],
      [coop_cuda=yes], [coop_cuda=no])
    rm -f conftest.cu conftest.$OBJEXT
    AC_MSG_RESULT([$coop_cuda])
  ])
  AS_IF([test "x$coop_cuda" = xyes], [
    coop_libdir="$CUDA_HOME/lib64"
    AS_IF([test -f "$coop_libdir/libcudart_static.a"], [],
      [coop_libdir="$CUDA_HOME/targets/x86_64-linux/lib"])
    CUDA_LIBS="-L$coop_libdir -lcudart_static -ldl -lrt -lpthread -lstdc++"
    AC_MSG_CHECKING([whether programs link with the CUDA runtime])
    coop_save_LIBS=$LIBS
    LIBS="$CUDA_LIBS $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[int cudaGetDeviceCount(int *);]],
                                    [[int n; return cudaGetDeviceCount(&n);]])],
      [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no]); coop_cuda=no])
    LIBS=$coop_save_LIBS
  ])
  AS_IF([test "x$coop_cuda" = xno && test "x$with_cuda" != xcheck],
    [AC_MSG_ERROR([--with-cuda given but nvcc does not work (install the CUDA toolkit, or configure --without-cuda)])])
])
AM_CONDITIONAL([HAVE_CUDA], [test "x$coop_cuda" = xyes])
AS_IF([test "x$coop_cuda" = xyes],
  [AC_DEFINE([COOP_HAVE_CUDA], [1], [Define to 1 when the cuda backend is built])
   AC_DEFINE_UNQUOTED([COOP_CUDA_ARCHS], ["$with_cuda_arch"], [GPU architectures compiled])],
  [AC_DEFINE([COOP_HAVE_CUDA], [0], [Define to 1 when the cuda backend is built])
   AC_DEFINE([COOP_CUDA_ARCHS], [""], [GPU architectures compiled])
   CUDA_LIBS=])
AC_SUBST([NVCC_GENCODE])
AC_SUBST([CUDA_LIBS])
])
