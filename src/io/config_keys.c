/* The one key table: it drives parsing, validation, --help, --dry-run and the
 * key reference in the README. Sections appear in the order of their first key;
 * that is the order of --help and of the resolved configuration. */
#include "io/config.h"

#include <math.h>

#define KEY_INT(s, k, d, lo, hi, h) \
  { s, k, COOP_KEY_INT, d, lo, hi, 0, 0, NULL, h }
#define KEY_REAL(s, k, d, lo, hi, lo_open, hi_open, h) \
  { s, k, COOP_KEY_REAL, d, lo, hi, lo_open, hi_open, NULL, h }
#define KEY_CHOICE(s, k, d, c, h) \
  { s, k, COOP_KEY_CHOICE, d, 0, 0, 0, 0, c, h }
#define KEY_BOOL(s, k, d, h) \
  { s, k, COOP_KEY_BOOL, d, 0, 0, 0, 0, NULL, h }
#define KEY_STRING(s, k, d, h) \
  { s, k, COOP_KEY_STRING, d, 0, 0, 0, 0, NULL, h }

/* Integer bounds are held in doubles; all of them are below 2^53, so exact. */
static const coop_key_info keys[] = {
    KEY_INT("grid", "dim", "2", 2, 3, "number of space dimensions"),
    KEY_INT("grid", "nx", "64", 1, 1099511627776.0, "interior points along x"),
    KEY_INT("grid", "ny", "64", 1, 1099511627776.0, "interior points along y"),
    KEY_INT("grid", "nz", "64", 1, 1099511627776.0, "interior points along z (3D only)"),
    KEY_REAL("grid", "lx", "1", 0, INFINITY, 1, 1, "length of the box along x"),
    KEY_REAL("grid", "ly", "1", 0, INFINITY, 1, 1, "length of the box along y"),
    KEY_REAL("grid", "lz", "1", 0, INFINITY, 1, 1, "length of the box along z (3D only)"),
    KEY_INT("grid", "ghost", "1", 1, 16,
            "ghost layer width g: sweeps done between two halo exchanges"),

    KEY_CHOICE("problem", "type", "sine", "sine|laplace|matrix",
               "sine: manufactured u = prod sin(k pi x_i/L_i); "
               "laplace: harmonic u given on the boundary, f = 0; "
               "matrix: A from problem.matrix"),
    KEY_INT("problem", "mode", "1", 1, 1000, "wave number k of the sine problem"),
    KEY_STRING("problem", "matrix", "none",
               "Matrix Market file (coordinate real/integer/pattern; general, symmetric or "
               "skew-symmetric) for problem.type = matrix"),
    KEY_STRING("problem", "rhs", "ones",
               "matrix problems: ones (b = A*1, so x = 1 is exact), random (problem.seed) or "
               "file:PATH (a Matrix Market vector)"),
    KEY_INT("problem", "seed", "1", 0, 9007199254740991.0, "seed of problem.rhs = random"),
    KEY_STRING("problem", "x0", "zero", "matrix problems: initial guess, zero or file:PATH"),

    KEY_CHOICE("solver", "name", "jacobi", COOP_SOLVER_CHOICES,
               "iterative method: jacobi (grids only), cg, pipecg (pipelined CG), bicgstab"),
    KEY_CHOICE("solver", "pc", "none", "none|jacobi",
               "preconditioner of cg, pipecg and bicgstab: none, or jacobi (diagonal)"),
    KEY_BOOL("solver", "cg_single_reduction", "false",
             "cg in the Chronopoulos-Gear form: one reduction (grid mode: one barrier) per "
             "iteration instead of two; same iterates in exact arithmetic"),
    KEY_REAL("solver", "rtol", "1e-6", 0, 1, 0, 1, "stop when ||r|| <= rtol * ||r0||"),
    KEY_REAL("solver", "atol", "0", 0, INFINITY, 0, 1, "stop when ||r|| <= atol"),
    KEY_REAL("solver", "dtol", "1e5", 0, INFINITY, 0, 1,
             "diverged when ||r|| > dtol * ||r0||; 0: never"),
    KEY_INT("solver", "max_iter", "10000", 0, 1e12, "stop after this many iterations (sweeps)"),
    KEY_BOOL("solver", "error_if_not_converged", "false",
             "exit with status 4 when a solve ends without converging (a diverged_* reason, max_iter "
             "included; in a batch, any problem), after writing the output"),
    KEY_INT("solver", "check_every", "100", 1, 1e9,
            "jacobi, heat: steps between residual checks (Krylov methods check every iteration)"),
    KEY_REAL("solver", "alpha", "1", 0, INFINITY, 1, 1, "heat: diffusivity in u_t = alpha (lap(u) + f); batches: u_t = alpha (f - A u)"),
    KEY_REAL("solver", "dt", "0", 0, INFINITY, 0, 1,
             "heat: time step; 0: 0.9 of the explicit stability limit h^2/(2 alpha dim) (batches: of "
             "each problem's own limit 2/(alpha (4 dim/h^2 + s)))"),
    KEY_REAL("solver", "t_end", "0", 0, INFINITY, 0, 1,
             "heat in [batch] inputs: final time; each problem takes ceil(t_end/dt) steps (one more "
             "where t_end over that would round above dt), its dt shrunk to end there; 0: "
             "solver.max_iter steps each"),
    KEY_CHOICE("solver", "precision", "fp64", "fp64|fp32", "floating-point type of the fields"),

    KEY_CHOICE("run", "backend", "auto", "auto|host|cuda",
               "auto: cuda where a GPU is found, else host"),
    KEY_CHOICE("run", "sync", "auto", "auto|grid|launch|graph|row|cluster|block|launch_each",
               "cuda mode: grid = persistent cooperative kernel, launch = one kernel per sweep, "
               "graph = the per-sweep kernels replayed from a CUDA graph; [batch] inputs: auto, "
               "grid, launch (each kernel over every active problem), launch_each (each "
               "problem's own kernels, problem after problem), row (a row of blocks per problem, "
               "software barrier), cluster (a thread-block cluster per problem) or block (one "
               "block per problem)"),
    KEY_CHOICE("run", "schedule", "auto", "auto|clc|atomic|static",
               "cuda: [batch] inputs: how problems reach the groups of blocks: clc (cluster "
               "launch control, cc >= 10.0), atomic (persistent groups, atomic counter), static "
               "(problem i to group i mod groups); problem.type = matrix: auto = the row-balanced "
               "product, else tiles of rows handed to blocks the same three ways (solves run "
               "run.sync = launch); the host backend ignores it; grid inputs refuse it"),
    KEY_INT("run", "group_blocks", "0", 0, 1024,
            "[batch] inputs on cuda: blocks per group for run.sync = row or cluster; 0: chosen "
            "from the problem sizes"),
    KEY_CHOICE("run", "halo", "auto", "auto|mpi|ipc|nccl",
               "grid halos between GPUs: mpi (staged through host memory unless MPI is "
               "CUDA-aware), ipc (GPU to GPU through CUDA IPC, ranks of one node), nccl "
               "(every face through NCCL on the GPU's stream, any nodes; builds configured "
               "--with-nccl); auto: ipc for each neighbour on the same node, mpi for the others"),
    KEY_BOOL("run", "overlap", "true",
             "grid solvers on cuda with neighbours: the halo exchange runs on a second stream "
             "beside the interior of the step before it (false: after the whole step)"),
    KEY_CHOICE("run", "fused_halo", "auto", "auto|true|false",
               "grid mode, every rank on its own GPU of one node, halos through CUDA IPC: the whole "
               "solve in one kernel per rank, new boundary values stored straight into the "
               "neighbours' ghosts and the residual summed through peer memory (false: the host "
               "exchanges halos between kernels; auto: true where each rank's two fields take at "
               "most 12 times the GPU's L2, false above, where the per-step kernels stream faster)"),
    KEY_BOOL("run", "resident", "true",
             "grid mode, one rank, a 2D box that fits on the chip: the field stays in registers "
             "(about 1M points fp32 on an H200) or else in shared memory (rows of at most 1024 "
             "16-byte chunks, about 7M points fp32) across sweeps, and only the edge rows of each "
             "block's band go through memory (false: every sweep streams the field from memory)"),
    KEY_CHOICE("run", "resident_depth", "auto", "auto|1|2|4",
               "the field in registers (run.resident): sweeps between grid barriers, each block "
               "recomputing depth - 1 rows of its neighbours' bands on the chip instead of waiting "
               "for them; auto: 4 where the bands have the rows and the block the threads and shared "
               "memory for it (boxes up to about 512^2), else 1"),
    KEY_CHOICE("run", "fuse_sweeps", "auto", "auto|1|2",
               "grid mode, a box streamed from memory (not run.resident): Jacobi sweeps a pass over "
               "the field; 2 computes the second sweep's rows on the chip one row (3D: plane) behind "
               "the first's, so the field is read and written once, and one grid barrier taken, for "
               "two sweeps (a stop between them takes one more sweep); ranks with neighbours (2D, "
               "grid.ghost >= 3, or 2 with run.overlap = false) take the steps between exchanges two "
               "a pass; auto: 2 where a rank's two fields exceed the GPU's L2 cache (3D: four times "
               "it, and never fp64 with a source), else 1"),
    KEY_INT("run", "device", "-1", -1, 4096,
            "GPU index; -1: node-local rank modulo the GPUs of the node"),
    KEY_INT("run", "blocks", "0", 0, 1000000,
            "blocks of the persistent grid; 0: as many as can be resident, fewer on a small box (each thread marching at least 4 rows)"),

    KEY_STRING("run", "restart", "none",
               "checkpoint file to go on from (--restart); none: start afresh"),
    KEY_CHOICE("run", "on_signal", "exit", "exit|continue",
               "SIGTERM, SIGUSR1, SIGUSR2: write a checkpoint, then exit with status 3 or go on"),

    KEY_STRING("output", "file", "coopsolve.h5", "HDF5 output file"),
    KEY_BOOL("output", "xdmf", "true", "write an XDMF file beside the HDF5 file"),
    KEY_BOOL("output", "fields", "true", "write the solution field(s); false: metadata and history only"),
    KEY_INT("output", "every", "0", 0, 1e12,
            "heat: steps between snapshots of the field in /series (and the XDMF time series); 0: none"),
    KEY_STRING("output", "monitor_every", "auto",
               "iterations between monitor lines; auto: about 20 a solve (each twentieth of the way to "
               "solver.rtol or to solver.max_iter); 0: none"),
    KEY_STRING("output", "checkpoint", "auto",
               "checkpoint file; auto: the output file's name with .h5 replaced by .ckpt.h5"),
    KEY_INT("output", "checkpoint_every", "0", 0, 1e12,
            "iterations between checkpoints (Jacobi: rounded up to residual checks); 0: none"),
    KEY_REAL("output", "checkpoint_minutes", "0", 0, 1e9, 0, 0,
             "wall minutes between checkpoints; 0: none"),

    /* a [batch] section makes the input a batch run: many small independent
     * systems, no [grid] or [problem] (problem/batch.h) */
    KEY_INT("batch", "count", "1", 1, 2147483647.0,
            "number of generated problems B (not with batch.matrices or batch.matrix_list)"),
    KEY_INT("batch", "dim", "2", 2, 3,
            "generated problems: -lap(u) + s u = f (heat: u_t = alpha (f - (-lap(u) + s u))) on "
            "the unit square (2) or cube (3)"),
    KEY_STRING("batch", "sizes", "uniform:32",
               "interior points per side of each generated problem: uniform:N, uniform:LO:HI or "
               "loguniform:LO:HI (integers, 2..4096 in 2D, 2..256 in 3D)"),
    KEY_STRING("batch", "shift", "uniform:0",
               "shift s of each generated problem (reals >= 0): uniform:S, uniform:LO:HI or "
               "loguniform:LO:HI (LO > 0); a larger s converges faster"),
    KEY_CHOICE("batch", "rhs", "ones", "ones|random|zero",
               "generated problems' f: ones, random in [-1, 1) from (batch.seed, problem, row), or "
               "zero (heat: a pure decay)"),
    KEY_INT("batch", "seed", "1", 0, 9007199254740991.0,
            "seed of the generators: problem i depends only on (seed, i), not on the ranks"),
    KEY_STRING("batch", "matrices", "none",
               "instead of generated problems: comma-separated Matrix Market files, each A.mtx "
               "or A.mtx:b.mtx (b a vector file; without one b = A*1, so x = 1 is exact)"),
    KEY_STRING("batch", "matrix_list", "none",
               "instead of batch.matrices, for any path: a file with one problem per line, A.mtx "
               "or A.mtx b.mtx, relative to its folder (\"quoted\" with blanks; # starts a comment line)"),
};

const coop_key_info *coop_config_keys(size_t *n) {
  if (n) *n = sizeof keys / sizeof keys[0];
  return keys;
}
