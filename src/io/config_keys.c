/* The one key table: it drives parsing, validation, --help, --dry-run and
 * the key reference docs/keys.md (coopsolve --help-keys=markdown). Sections
 * appear in the order of their first key; that is the order of --help and of
 * the resolved configuration. A key's help says in a line or two what a user
 * controls with it; how the kernels do it is written where they are. */
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
               "method: jacobi (grids and batches), cg, pipecg (pipelined CG), bicgstab, heat "
               "(explicit time steps; grids and generated batches) or mg (multigrid; grids)"),
    KEY_CHOICE("solver", "pc", "none", "none|jacobi|mg",
               "preconditioner of cg, pipecg and bicgstab: none, or jacobi (diagonal); cg on grids: "
               "mg (one multigrid cycle)"),
    KEY_CHOICE("solver", "mg_cycle", "v", "v|w|f",
               "mg: the cycle, v, w or f (solver.pc = mg: v or w, which are symmetric)"),
    KEY_INT("solver", "mg_pre", "2", 0, 50, "mg: smoothing sweeps before the coarse-grid correction"),
    KEY_INT("solver", "mg_post", "2", 0, 50,
            "mg: smoothing sweeps after it (the pre-smoother's adjoint; solver.pc = mg: as many as before)"),
    KEY_CHOICE("solver", "mg_smoother", "rbgs", "rbgs|jacobi",
               "mg: red-black Gauss-Seidel or weighted Jacobi (4/5 in 2D, 6/7 in 3D)"),
    KEY_BOOL("solver", "cg_single_reduction", "false",
             "cg in the Chronopoulos-Gear form: one reduction per iteration instead of two "
             "(the same iterates in exact arithmetic)"),
    KEY_REAL("solver", "rtol", "1e-6", 0, 1, 0, 1, "stop when ||r|| <= rtol * ||r0||"),
    KEY_REAL("solver", "atol", "0", 0, INFINITY, 0, 1, "stop when ||r|| <= atol"),
    KEY_REAL("solver", "dtol", "1e5", 0, INFINITY, 0, 1,
             "diverged when ||r|| > dtol * ||r0||; 0: never"),
    KEY_INT("solver", "max_iter", "10000", 0, 1e12, "stop after this many iterations (sweeps)"),
    KEY_BOOL("solver", "error_if_not_converged", "false",
             "exit with status 4, after writing the output, when a solve (in a batch, any "
             "problem) ends without converging"),
    KEY_INT("solver", "check_every", "100", 1, 1e9,
            "jacobi, heat: iterations between residual checks, where a solve can stop (Krylov "
            "methods check every iteration)"),
    KEY_REAL("solver", "alpha", "1", 0, INFINITY, 1, 1,
             "heat: diffusivity in u_t = alpha (lap(u) + f); batches: u_t = alpha (f - A u)"),
    KEY_REAL("solver", "dt", "0", 0, INFINITY, 0, 1,
             "heat: time step; 0: 0.9 of the explicit stability limit (in a batch, of each "
             "problem's own)"),
    KEY_CHOICE("solver", "scheme", "explicit", "explicit|implicit",
               "heat: explicit (forward Euler, dt up to the stability limit) or implicit (backward "
               "Euler, any solver.dt > 0, each step multigrid cycles to solver.rtol)"),
    KEY_REAL("solver", "t_end", "0", 0, INFINITY, 0, 1,
             "heat in [batch] inputs: the time each problem steps to (its dt shortened to end "
             "there); 0: solver.max_iter steps each"),
    KEY_CHOICE("solver", "precision", "fp64", "fp64|fp32", "floating-point type of the fields"),

    KEY_CHOICE("run", "backend", "auto", "auto|host|cuda",
               "auto: cuda where a GPU is found, else host"),
    KEY_CHOICE("run", "sync", "auto", "auto|grid|launch|graph",
               "cuda: auto (chosen by problem and GPU), grid (the whole solve in one kernel), launch "
               "(a kernel per step) or graph (the steps replayed from a CUDA graph); batches: batch.sync"),
    KEY_INT("run", "device", "-1", -1, 4096,
            "GPU index; -1: node-local rank modulo the GPUs of the node"),
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
               "iterations between monitor lines; auto: about 20 a solve; 0: none"),
    KEY_STRING("output", "checkpoint", "auto",
               "checkpoint file; auto: the output file's name with .h5 replaced by .ckpt.h5"),
    KEY_INT("output", "checkpoint_every", "0", 0, 1e12,
            "iterations between checkpoints (jacobi, heat: rounded up to residual checks); 0: none"),
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
    KEY_CHOICE("batch", "sync", "auto", "auto|row|cluster|block|grid|launch|launch_each",
               "cuda: row, cluster or block (a group of blocks per problem), grid (one kernel for "
               "all), launch (kernels over every problem) or launch_each (problem after problem)"),
    KEY_CHOICE("batch", "schedule", "auto", "auto|clc|atomic|static",
               "cuda: how problems reach the groups of blocks: clc (cluster launch control, cc >= "
               "10.0), atomic (a shared counter) or static (problem i to group i mod groups)"),

    /* kernel internals: which kernel or launch shape runs, not what is solved */
    KEY_INT("tune", "blocks", "0", 0, 1000000,
            "blocks of the persistent kernel (grid mode); 0: as many as fit at once, fewer on a "
            "small box"),
    KEY_BOOL("tune", "overlap", "true",
             "grid problems on cuda with neighbours: exchange halos beside the interior's update "
             "(false: after it)"),
    KEY_CHOICE("tune", "halo", "auto", "auto|mpi|ipc|nccl",
               "how halos travel between GPUs: mpi, ipc (CUDA IPC, ranks of one node) or nccl "
               "(builds --with-nccl); auto: ipc within a node, mpi between nodes"),
    KEY_CHOICE("tune", "fused_halo", "auto", "auto|true|false",
               "grid mode with ipc halos, a GPU per rank: the whole solve in one kernel per rank, "
               "halos written into the neighbours' ghosts (auto: on boxes where that is faster)"),
    KEY_BOOL("tune", "resident", "true",
             "grid mode, one rank, a 2D box that fits on the chip: keep the field on the chip "
             "across sweeps (false: stream it from memory)"),
    KEY_CHOICE("tune", "resident_depth", "auto", "auto|1|2|4",
               "the field held in registers (tune.resident): sweeps between grid barriers; auto: 4 "
               "on boxes up to about 512^2, else 1"),
    KEY_CHOICE("tune", "fuse_sweeps", "auto", "auto|1|2",
               "grid mode, a field streamed from memory: jacobi sweeps (heat steps) per pass over it; "
               "auto: 2 on fields larger than the GPU's L2 cache, else 1"),
    KEY_CHOICE("tune", "csr_schedule", "auto", "auto|clc|atomic|static",
               "problem.type = matrix on cuda: how the matrix product shares rows among blocks: auto "
               "(a plan chosen from the row lengths), or row tiles handed out by clc (cc >= 10.0), "
               "atomic or static (the solve then runs run.sync = launch)"),
    KEY_INT("tune", "group_blocks", "0", 0, 1024,
            "[batch] inputs on cuda: blocks per problem's group for batch.sync = row, cluster or "
            "grid; 0: chosen from the problem sizes"),
};

const coop_key_info *coop_config_keys(size_t *n) {
  if (n) *n = sizeof keys / sizeof keys[0];
  return keys;
}

/* Names of earlier versions: an input that gives one is refused with the new
 * name (io/config.c), and docs/keys.md lists them. */
static const coop_key_moved moved[] = {
    {"run", "blocks", NULL, "tune.blocks"},
    {"run", "overlap", NULL, "tune.overlap"},
    {"run", "halo", NULL, "tune.halo"},
    {"run", "fused_halo", NULL, "tune.fused_halo"},
    {"run", "resident", NULL, "tune.resident"},
    {"run", "resident_depth", NULL, "tune.resident_depth"},
    {"run", "fuse_sweeps", NULL, "tune.fuse_sweeps"},
    {"run", "group_blocks", NULL, "tune.group_blocks"},
    {"run", "schedule", NULL, "batch.schedule in [batch] inputs, tune.csr_schedule for problem.type = matrix"},
    {"run", "sync", "row|cluster|block|launch_each", "batch.sync"},
};

const coop_key_moved *coop_config_moved(size_t *n) {
  if (n) *n = sizeof moved / sizeof moved[0];
  return moved;
}
