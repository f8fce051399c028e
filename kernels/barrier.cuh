/* Barriers that span blocks (the design's synchronisation ladder) and the
 * rules that keep them from hanging.
 *
 * Per-group software barrier (a row of blocks, blockIdx.y): one 32-bit
 * counter per group in device memory, zeroed once and reused across barriers
 * and launches. Each block's thread 0 adds 1 with atom.add.release.gpu, the
 * group's master block adds 0x80000000 - (expected - 1) instead, so the
 * arrivals of one barrier sum to 0x80000000: the top bit flips when the last
 * block arrives and the counter is ready for the next barrier with no reset
 * (the scheme of cooperative groups' grid.sync, one counter per group). The
 * waiters poll with ld.acquire.gpu on the bit, first back to back, then
 * backing off with __nanosleep.
 *
 * Never hang: a spin gives up after timeout_ns of the device clock
 * (%globaltimer), records the group, the arrivals and its own block in the
 * fault record, and raises the record's abort state, which every spin and
 * every group barrier checks, so all blocks of the kernel leave their loops
 * within one phase. The host reads the record after the kernel.
 *
 * Co-residency: every barrier that spans blocks needs all of its blocks
 * resident at once. coop_resident_groups() is the rule the launchers apply
 * before a launch (occupancy x SMs); too many groups become fewer groups
 * that loop over the work, never a launch that could wait on a block that
 * cannot start.
 *
 * Self-contained (CUDA headers only) so that bench/batched.cu can include it. */
#ifndef COOP_BARRIER_CUH
#define COOP_BARRIER_CUH

#include <cooperative_groups.h>

namespace coop_bar {

constexpr unsigned kFlip = 0x80000000u;

/* Counters of different groups lie kCtrStride words (128 bytes, one L2
 * line) apart: packed side by side, 32 groups' arrivals and polls queue on
 * one line, and the row barrier costs well above grid.sync()'s. */
constexpr int kCtrStride = 32;
__host__ __device__ inline unsigned *group_counter(unsigned *base, int group) {
  return base + (long long)group * kCtrStride;
}
/* Words to allocate (and zero) for the counters of `groups` groups. */
__host__ __device__ inline long long counter_words(long long groups) { return groups * kCtrStride; }

/* Device memory, zeroed before a launch; the host reads it afterwards. */
struct Fault {
  int state;                 /* 0 fine; 1 a barrier gave up: every block leaves */
  int group;                 /* the first barrier to give up: its group, */
  unsigned arrived, expected; /* the blocks that had arrived of those expected, */
  int block;                 /* and the waiting block's rank in its group */
  double waited_s;           /* how long it waited */
};

/* ---- the arithmetic of the counter (host and device, for tests) ---- */

/* What a block adds on arrival: the master's share makes the arrivals of
 * one barrier sum to kFlip. expected >= 1. */
__host__ __device__ inline unsigned arrive_increment(bool master, unsigned expected) {
  return master ? kFlip - (expected - 1u) : 1u;
}

/* The barrier that began when the counter read `old` (before this block's
 * arrival) has completed once the top bit differs. */
__host__ __device__ inline bool flipped(unsigned old, unsigned cur) {
  return ((old ^ cur) & kFlip) != 0;
}

/* Blocks arrived so far at the barrier in progress, from the counter `cur`,
 * a value `old` read in the same phase and the count expected. Before the
 * master arrives the counter has moved by the others' ones; after, by
 * kFlip - (expected - 1) more. Valid while the phase has not flipped. */
__host__ __device__ inline unsigned arrived_count(unsigned cur, unsigned old, unsigned expected) {
  const unsigned v = cur - (old & kFlip);
  return v < expected ? v : v + expected - kFlip;
}

/* Groups of blocks_per_group blocks that can be resident at once: the launch
 * rule for any barrier that spans blocks (per_sm from the occupancy API). */
__host__ __device__ inline long long resident_groups(int per_sm, int sms, int blocks_per_group) {
  if (per_sm <= 0 || sms <= 0 || blocks_per_group <= 0) return 0;
  return (long long)per_sm * sms / blocks_per_group;
}

/* ---- device side ---- */

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned atom_add_release_gpu(unsigned *p, unsigned v) {
  unsigned old;
  asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}

__device__ __forceinline__ unsigned long long ld_acquire_gpu64(const unsigned long long *p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned ld_acquire_gpu(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ int ld_relaxed_gpu(const int *p) {
  int v;
  asm volatile("ld.relaxed.gpu.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/* Has any barrier of this kernel given up? */
__device__ __forceinline__ bool aborted(const Fault *f) { return ld_relaxed_gpu(&f->state) != 0; }

/* The first barrier to give up records why; later ones only leave. Out of
 * line (the slow path) but `inline` in the C++ sense, so every .cu file may
 * include this header. */
__device__ __noinline__ inline void give_up(Fault *f, int group, unsigned arrived, unsigned expected,
                                     int block, double waited_s) {
  if (atomicCAS(&f->state, 0, 1) != 0) return;
  f->group = group;
  f->arrived = arrived;
  f->expected = expected;
  f->block = block;
  f->waited_s = waited_s;
  __threadfence();
}

/* Thread 0's slow wait for the flip after arriving with `old`, once the fast
 * polls of group_sync have not seen it: true once it flipped, false when this
 * kernel aborts or the wait passes timeout_ns. Back-off doubles from 32 ns to
 * 512 ns so long waits (a group behind on its work) do not flood L2 with
 * loads. The clock and the abort state are read every 16 polls. */
__device__ __noinline__ inline bool spin(const unsigned *ctr, unsigned old, unsigned expected, int group,
                                  int block, Fault *f, unsigned long long timeout_ns) {
  const unsigned long long t0 = globaltimer();
  unsigned ns = 32;
  for (unsigned n = 1;; n++) {
    const unsigned cur = ld_acquire_gpu(ctr);
    if (flipped(old, cur)) return true;
    if ((n & 15) == 0) {
      if (aborted(f)) return false;
      const unsigned long long dt = globaltimer() - t0;
      if (dt > timeout_ns) {
        give_up(f, group, arrived_count(cur, old, expected), expected, block, 1e-9 * (double)dt);
        return false;
      }
    }
    __nanosleep(ns);
    if (ns < 512) ns *= 2;
  }
}

/* Polls of the counter, back to back, before the slow wait: a barrier whose
 * blocks arrive together completes within a few L2 round trips, and
 * sleeping there (backing off from the first poll) makes the row barrier
 * cost well above grid.sync()'s. */
constexpr int kFastPolls = 64;

/* The group barrier; every thread of every block of the group calls it (1-D
 * blocks). Memory written by the group's threads before it is visible to
 * them all after it (release by each arriving thread 0 after bar.sync,
 * acquire by each waiting thread 0 before bar.sync). Polling relaxed and
 * fencing once after the flip measured no faster, so the plain acquire
 * polls stay. Returns
 * false when the kernel aborts: the caller leaves its loops. The abort state
 * is loaded before the counter, so its latency hides behind the wait. *s_ok
 * is a shared int. */
__device__ inline bool group_sync(unsigned *ctr, unsigned expected, bool master, int group,
                                  int block, Fault *f, unsigned long long timeout_ns, int *s_ok) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned old = atom_add_release_gpu(ctr, arrive_increment(master, expected));
    const bool ab = aborted(f);
    bool ok = false;
    for (int n = 0; n < kFastPolls && !ok; n++) ok = flipped(old, ld_acquire_gpu(ctr));
    if (!ok) ok = spin(ctr, old, expected, group, block, f, timeout_ns);
    *s_ok = ok && !ab;
  }
  __syncthreads();
  return *s_ok != 0;
}

/* The hardware rungs of the ladder, named here so the kernels read alike. */
#ifdef _CG_HAS_CLUSTER_GROUP
__device__ __forceinline__ void cluster_sync() { cooperative_groups::this_cluster().sync(); }
#else
__device__ __forceinline__ void cluster_sync() { __trap(); } /* no clusters before sm_90 */
#endif
__device__ __forceinline__ void grid_sync() { cooperative_groups::this_grid().sync(); }

}  // namespace coop_bar

#endif
