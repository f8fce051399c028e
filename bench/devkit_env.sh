# Sourced by the GPU machine's scripts (bench/gpu_check.sh, gpu_session.sh,
# gpu_machine.sh) with $devkit set: unpacks DEVKIT's Debian packages (CUnit,
# parallel HDF5) into dep=/opt/dep, sets lib to their library folder, puts it
# on LD_LIBRARY_PATH, and lets Open MPI run as root.
dep=/opt/dep
mkdir -p "$dep"
for f in "$devkit"/*.deb; do dpkg -x "$f" "$dep"; done
lib=$dep/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$lib/hdf5/openmpi:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
