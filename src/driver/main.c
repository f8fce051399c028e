#include <mpi.h>
#include <stdio.h>

#include "driver/app.h"
#include "core/comm.h"
#include "core/signal.h"

int main(int argc, char **argv) {
  coop_comm comm;
  /* a batch system's signal during start-up must not kill a rank: only record it
   * (again after MPI_Init, in case the library replaced a handler) */
  coop_signal_install();
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "coopsolve: MPI_Init failed\n");
    return 1;
  }
  int status = coop_comm_create(&comm, MPI_COMM_WORLD);
  if (status) {
    fprintf(stderr, "coopsolve: %s\n", coop_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  status = coop_app_run(&comm, argc, argv);
  if (coop_error_is_fatal()) { /* MPI_Finalize would hang in HDF5's close of a failed file */
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status ? status : 1);
  }
  coop_comm_destroy(&comm);
  MPI_Finalize();
  return status;
}
