#include <mpi.h>
#include <stdio.h>

#include "driver/app.h"
#include "core/comm.h"

int main(int argc, char **argv) {
  coop_comm comm;
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
  coop_comm_destroy(&comm);
  MPI_Finalize();
  return status;
}
