/* The work scheduler of the design's "work stealing" section: a group of
 * threads (a block, a cluster, a row of blocks) asks for its first work item
 * and then, after each, for the next, until it gets one past the end (or a
 * negative one). One interface, three builds:
 *
 *   Static  group g of G takes g, g + G, g + 2G, ... (no communication; the
 *           baseline to beat).
 *   Atomic  the group's leader thread takes the next index from a device
 *           counter (atomicAdd, counter zeroed before the launch) and the
 *           group broadcasts it (shared memory for a block, DSMEM for a
 *           cluster, the group barrier for a row).
 *   Clc     cluster launch control (cc >= 10.0): one block or cluster is
 *           launched per item; its first item is its own index, and while it
 *           works on an item its leader asks the hardware to cancel a block
 *           (cluster) that has not started yet, taking over that one's item
 *           next. The CUDA guide's rules (4.12.1.2): one request in flight per
 *           block, issued by one thread; none after a failed one was observed;
 *           the response read only after its mbarrier completes, with the
 *           proxy fences of the guide around it. Clusters use the plain
 *           (non-multicast) request from the leader block, whose response
 *           names the cancelled cluster's first block, and broadcast it
 *           through the group: the multicast form is sm_100a-only and would
 *           tie the build to one GPU.
 *
 * The group type G provides: index(), groups(), size() (blocks), leader()
 * (the one thread that fetches) and bcast(long long &v) (leader's v to every
 * thread of the group; false when the kernel aborts). Pure bookkeeping is in
 * __host__ __device__ functions for the host tests. */
#ifndef COOP_SCHED_CUH
#define COOP_SCHED_CUH

#include <stdint.h>

#include <cuda/ptx>
#include <cooperative_groups.h>

namespace coop_sched {

constexpr long long kAbort = -2; /* the kernel is leaving (a barrier gave up) */
constexpr long long kNone = -1;  /* no more work */

/* ---- bookkeeping (host and device) ---- */

/* Static: the k-th item (k = 0, 1, ...) of group g of `groups`. */
__host__ __device__ inline long long static_item(long long g, long long groups, long long k) {
  return g + k * groups;
}

/* Items group g of `groups` takes statically from `count`. */
__host__ __device__ inline long long static_share(long long g, long long groups, long long count) {
  return g < count ? (count - g + groups - 1) / groups : 0;
}

/* Clc: the item of a block (cluster) launched at x-index ctaid_x, clusters of
 * cluster_blocks along x (1 for plain blocks): cancelled responses name a
 * cluster's first block, and every block of cluster k runs item k. */
__host__ __device__ inline long long clc_item(unsigned ctaid_x, unsigned cluster_blocks) {
  return (long long)(ctaid_x / cluster_blocks);
}

/* Clc: blocks to launch for `count` items (one block or cluster each). */
__host__ __device__ inline long long clc_grid_blocks(long long count, int cluster_blocks) {
  return count * cluster_blocks;
}

/* ---- the three builds ---- */

struct Static {
  long long k = 0;
  template <class G> __device__ long long first(G &g) {
    k = 0;
    return static_item(g.index(), g.groups(), 0);
  }
  template <class G> __device__ long long next(G &g) { return static_item(g.index(), g.groups(), ++k); }
  __device__ void finish() {}
};

struct Atomic {
  unsigned long long *counter; /* zeroed before the launch */
  template <class G> __device__ long long take(G &g) {
    long long v = 0;
    if (g.leader()) v = (long long)atomicAdd(counter, 1ull);
    return g.bcast(v) ? v : kAbort;
  }
  template <class G> __device__ long long first(G &g) { return take(g); }
  template <class G> __device__ long long next(G &g) { return take(g); }
  __device__ void finish() {}
};

/* Shared state of the Clc build (in the kernel's shared memory). */
struct ClcShared {
  alignas(16) uint4 response; /* the 16-byte opaque response, naturally aligned */
  alignas(8) uint64_t mbar;   /* completes when the response has been written */
};

/* Clc requests go through the leader block only; SCOPE is the mbarrier's
 * scope: cta for plain blocks, cluster when the kernel runs clusters (the
 * guide's cluster example). Call init() in every block before the group's
 * first barrier; that barrier publishes the mbarrier's initialisation. */
template <bool CLUSTER>
struct Clc {
  ClcShared *sh;
  uint32_t phase = 0;

#if __CUDA_ARCH__ >= 1000
  static __device__ auto scope() {
    if constexpr (CLUSTER) return cuda::ptx::scope_cluster;
    else return cuda::ptx::scope_cta;
  }

  __device__ void init() {
    if (threadIdx.x == 0) {
      cuda::ptx::mbarrier_init(&sh->mbar, 1);
      if constexpr (CLUSTER) cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
  }

  /* Leader thread: ask to cancel a block (cluster) not yet started; the
   * response lands in sh->response and completes sh->mbar. */
  __device__ void request() {
    /* the response's previous read (generic proxy) before the async write */
    cuda::ptx::fence_proxy_async_generic_sync_restrict(cuda::ptx::sem_acquire, cuda::ptx::space_cluster,
                                                       cuda::ptx::scope_cluster);
    cooperative_groups::invoke_one(cooperative_groups::coalesced_threads(),
                                   [&]() { cuda::ptx::clusterlaunchcontrol_try_cancel(&sh->response, &sh->mbar); });
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_relaxed, scope(), cuda::ptx::space_shared, &sh->mbar,
                                         (uint32_t)sizeof(uint4));
  }

  /* Leader thread: wait for the response; the stolen item or kNone. */
  __device__ long long response(unsigned cluster_blocks) {
    while (!cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, scope(), &sh->mbar, phase)) {
    }
    phase ^= 1u;
    const uint4 r = sh->response;
    long long item = kNone;
    if (cuda::ptx::clusterlaunchcontrol_query_cancel_is_canceled(r))
      item = clc_item(cuda::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid_x<uint32_t>(r),
                      cluster_blocks);
    /* our read of the response is done before the next async write */
    cuda::ptx::fence_proxy_async_generic_sync_restrict(cuda::ptx::sem_release, cuda::ptx::space_shared,
                                                       cuda::ptx::scope_cluster);
    return item;
  }
#else
  /* no cluster launch control below sm_100: the launcher never runs these */
  __device__ void init() { __trap(); }
  __device__ void request() { __trap(); }
  __device__ long long response(unsigned) {
    __trap();
    return kNone;
  }
#endif

  /* Own item first; a request goes out at once, so the cancellation overlaps
   * the work on this item. */
  template <class G> __device__ long long first(G &g) {
    const long long item = clc_item(blockIdx.x, (unsigned)g.size());
    if (g.leader()) request();
    return item;
  }

  /* The response to the request made at the start of this item. A failed
   * one ends the loop, so no request ever follows an observed failure. */
  template <class G> __device__ long long next(G &g) {
    long long v = 0;
    if (g.leader()) v = response((unsigned)g.size());
    if (!g.bcast(v)) return kAbort;
    if (v >= 0 && g.leader()) request();
    return v;
  }
  __device__ void finish() {}
};

}  // namespace coop_sched

#endif
