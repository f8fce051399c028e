/* 2D: two Jacobi sweeps in one pass over the field (tune.fuse_sweeps = 2).
 * One sweep streams two values a point (u read, un written) and cannot go
 * below that floor, which large fp32 boxes already stream close to.
 * Here a warp marches its strip as relax_range_ring does and computes the
 * next sweep's row one row behind the first's: u_k is read from memory once,
 * u_{k+1} lives only in registers, u_{k+2} is written. The strip's rows
 * beside it (one above, one below) and the values of the two columns beside
 * the warp's 32 chunks are computed again here from u_k (their owners compute
 * the same values with the same operands, so the same bits). Both residuals
 * (of u_k and of u_{k+1}) are summed in the pass. The caller keeps u_k (the
 * pass never writes it): a stop at u_k finds it there, a stop at u_{k+1}
 * takes one plain sweep from it. Whatever lies beyond the region is taken
 * as fixed: for a rank alone the Dirichlet values; between exchanges
 * (steps_pair_kernel, solvers/relax/relax_cuda.cu) u_k of the ghosts, which makes
 * u_{k+2} wrong on the region's outer layer only. */
#ifndef COOP_STENCIL_PAIR_CUH
#define COOP_STENCIL_PAIR_CUH

#include "kernels/stencil_relax.cuh"

#ifndef COOP_PAIR_UNROLL
#define COOP_PAIR_UNROLL 3
#endif

namespace {

/* two adjacent elements, 8-byte aligned (fp32) or 16 (fp64) */
template <typename T>
__device__ __forceinline__ void cp_async_two(unsigned dst, const T *src) {
  if (sizeof(T) == 4)
    cp_async_small<8>(dst, src);
  else
    cp_async16(dst, src);
}

/* N bytes (8 or 16) where pred holds: one predicated copy, no branch */
template <int N>
__device__ __forceinline__ void cp_async_if(unsigned dst, const void *src, bool pred) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p cp.async.ca.shared.global [%0], [%1], %3;\n}\n" ::"r"(dst),
               "l"(__cvta_generic_to_global(src)), "r"((int)pred), "n"(N)
               : "memory");
}

/* The pass over tasks t0, t0 + ts, ... (warp tasks of relax_range_ring, the
 * same queue): reads u (u_k), writes un (u_{k+2}) on the region's points;
 * NORM: s0 and s1 get this thread's squared residuals of u_k and u_{k+1}
 * over the owned points of its tasks' own rows. */
template <typename T, bool HAS_F, bool NORM>
__device__ void relax_pair_ring(const RelaxPar &P, const RelaxGeom &G, const T *u, T *un,
                                const T *__restrict__ f, unsigned t0, unsigned ts, const TaskQueue &Q,
                                double &s0, double &s1) {
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  constexpr unsigned kFull = 0xffffffffu;
  RingSmem<T> &R = ring_smem<T>();
  /* the outer columns of each row: [warp][slot][u(xl - 1), u(xl), u(xr), u(xr + 1)] */
  __shared__ __align__(16) T E[RELAX_THREADS / 32][kRing][4];
  const T w0 = (T)P.w0, w1 = (T)P.w1, diag = (T)P.diag, c = (T)P.c;
  const long long ms = G.sy;
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  const unsigned my_slot = smem_u32(&R.v[0][threadIdx.x]), my_edge = smem_u32(&E[wib][0][0]);
  constexpr unsigned slot_bytes = RELAX_THREADS * 16, edge_bytes = 4 * sizeof(T);
  const RingWalk<unsigned> W(G, u, un, ts, Q);
  /* rows a pass may read: the region and the ghost row on each side */
  const int rlo = G.m0 - 1, rhi = G.m0 + G.mn;
  for (unsigned wt = t0 >> 5; wt < W.wtasks; wt = W.next(wt, Q, lane)) {
    const RingTask k = ring_task<V>(G, W, wt, lane);
    const bool first = k.first, last = k.last;
    const int xs = k.xs, m = k.m, rows = k.rows;
    /* need_*: the chunk's end element is updated, so its outer neighbour is
     * read; in_*: that neighbour is updated too, so its first-sweep value is
     * computed here, from the column beyond it (never read otherwise: the
     * ghost column x1 may be the last element of the allocation) */
    const int xl = xs - 1, xr = xs + V;
    /* PLAIN: a task of 32 whole, owned chunks whose neighbour columns are
     * updated too, on owned rows with rows m - 1 and m + rows inside: the
     * masks, row clamps and region tests fold away (warp-uniform) */
    auto task = [&](auto plain_t) {
      constexpr bool PLAIN = decltype(plain_t)::value;
      constexpr unsigned whole = (1u << V) - 1u;
      const bool active = PLAIN || k.active;
      const unsigned xm = PLAIN ? whole : k.xm, om = PLAIN ? whole : k.om;
      const bool need_l = first && (xm & 1u), need_r = last && ((xm >> (V - 1)) & 1u);
      const bool in_l = PLAIN ? first : need_l && xl >= G.x0, in_r = PLAIN ? last : need_r && xr < G.x1;
      auto rin = [&](int i) { return PLAIN || (i >= G.m0 && i < G.m0 + G.mn); };
      int ld_row = m - 2, to_load = rows + 4; /* rows m - 2 .. m + rows + 1 */
      const T *ld = PLAIN ? u + xs + ms * ld_row : nullptr; /* PLAIN: the next row, none clamped */
      auto load = [&](int s) {
        if (to_load > 0) {
          /* rows beyond the ghost rows are never used: a row inside is copied instead */
          const T *p = PLAIN ? ld : u + xs + ms * min(max(ld_row, rlo), rhi);
          const unsigned e = my_edge + s * edge_bytes;
          if (active) cp_async16(my_slot + s * slot_bytes, p);
          if (in_l)
            cp_async_two<T>(e, p - 2);
          else if (need_l)
            cp_async_small<sizeof(T)>(e + sizeof(T), p - 1);
          if (in_r)
            cp_async_two<T>(e + 2 * sizeof(T), p + V);
          else if (need_r)
            cp_async_small<sizeof(T)>(e + 2 * sizeof(T), p + V);
          if (PLAIN)
            ld += ms;
          else
            ld_row++;
          to_load--;
        }
        cp_async_commit();
      };
#pragma unroll
      for (int q = 0; q < kRing; q++) load(q);
      cp_async_wait<kRing - 2>(); /* rows m - 2 and m - 1 */
      VT up = R.v[0][threadIdx.x], uc = R.v[1][threadIdx.x];
      if constexpr (PLAIN) {
        /* lanes 0 and 31 each carry one outer column: its value (near) and
         * the one beyond it (far) in E, the first-sweep value computed as
         * relax_res2 with l = far and r = the lane's end element (w0 (l + r)
         * is the same sum either way round: the owner's bits) */
        const bool edge = first || last;
        const int fo = first ? -1 : V;
        /* the other lanes read their own slot instead, at no branch (another
         * lane's copy may be landing in E; their edge values go unused) */
        const T *const pn = edge ? &E[wib][0][first ? 1 : 2] : reinterpret_cast<const T *>(&R.v[0][threadIdx.x]);
        const T *const pf = edge ? &E[wib][0][first ? 0 : 3] : pn;
        const int es = edge ? 4 : (int)(sizeof(R.v[0]) / sizeof(T)); /* a slot's stride in T */
        T ep = pn[0], ec = pn[es], e2c = pf[es];
        load(0);
        load(1);
        long long idx = xs + ms * (m - 1);
        VT fc, fw, vp = uc, vpp = uc;
        T fec = (T)0, vep = (T)0;
        if (HAS_F) {
          fc = vload(f + idx);
          if (edge) fec = f[idx + fo];
          fw = fc;
        }
        int s = 2 % kRing;
        constexpr int kUnroll = sizeof(T) == 8 && HAS_F ? 1 : COOP_PAIR_UNROLL;
#pragma unroll kUnroll
        for (int j = 0; j < rows + 2; j++) { /* as below: rows m - 1 + j, then m - 2 + j */
          cp_async_wait<kRing - 1>(); /* row m + j */
          const VT un1 = R.v[s][threadIdx.x];
          const T en = pn[s * es], e2n = pf[s * es];
          VT fn;
          T fen = (T)0;
          if (HAS_F) {
            fn = fc;
            if (j + 1 < rows + 2) {
              fn = vload(f + idx + ms);
              if (edge) fen = f[idx + ms + fo];
            }
          }
          const T sl = __shfl_up_sync(kFull, vget(uc, V - 1), 1);
          const T sr = __shfl_down_sync(kFull, vget(uc, 0), 1);
          /* the first sweep's own rows are m .. m + rows - 1 (j 1 .. rows):
           * a row's squares go to q (from -0), then to s0: the fp32 sum of
           * the four is added once, as elsewhere; fp64 adds them to q first
           * (a norm's last bits, which the blocks' atomic sums vary anyway) */
          double q = -0.0;
          const VT vc = chunk_relax<T, 2, HAS_F, NORM>(uc, first ? ec : sl, last ? ec : sr, up, un1, uc, uc,
                                                       HAS_F ? fc : uc, whole, w0, w1, (T)0, diag, c, q);
          if (NORM && j >= 1 && j <= rows) s0 += q;
          const T vec = ec + c * relax_res2<T, HAS_F>(ec, e2c, first ? vget(uc, 0) : vget(uc, V - 1), ep, en,
                                                      fec, w0, w1, diag);
          if (j >= 2) {
            const T tl = __shfl_up_sync(kFull, vget(vp, V - 1), 1);
            const T tr = __shfl_down_sync(kFull, vget(vp, 0), 1);
            const VT wo = chunk_relax<T, 2, HAS_F, NORM>(vp, first ? vep : tl, last ? vep : tr, vpp, vc, vp, vp,
                                                         HAS_F ? fw : vp, whole, w0, w1, (T)0, diag, c, s1);
            vstore(un + idx - ms, wo);
          }
          load(s);
          s = s + 1 == kRing ? 0 : s + 1;
          idx += ms;
          up = uc;
          uc = un1;
          ep = ec;
          ec = en;
          e2c = e2n;
          vpp = vp;
          vp = vc;
          vep = vec;
          if (HAS_F) {
            fw = fc;
            fc = fn;
            fec = fen;
          }
        }
      } else {
        /* edge values only by the lane that copied them */
        T lp = need_l ? E[wib][0][1] : (T)0, lc = need_l ? E[wib][1][1] : (T)0, l2c = in_l ? E[wib][1][0] : (T)0;
        T rp = need_r ? E[wib][0][2] : (T)0, rc = need_r ? E[wib][1][2] : (T)0, r2c = in_r ? E[wib][1][3] : (T)0;
        load(0);
        load(1);
        long long idx = xs + ms * (m - 1); /* (xs, row i) of the first sweep's row */
        VT fc, fw, vp, vpp;
        T flc = (T)0, frc = (T)0, vlp = (T)0, vrp = (T)0;
        if (HAS_F) {
          fc = uc;
          if (rin(m - 1)) {
            if (active) fc = vload(f + idx);
            if (in_l) flc = f[idx - 1];
            if (in_r) frc = f[idx + V];
          }
          fw = fc;
        }
        vp = uc;
        vpp = uc;
        int s = 2 % kRing;
        /* iteration j: the first sweep at row i = m - 1 + j (rows m - 1 .. m + rows),
         * the second at row i - 1 once j >= 2 (rows m .. m + rows - 1) */
        for (int j = 0; j < rows + 2; j++) {
          const int i = m - 1 + j;
          cp_async_wait<kRing - 1>(); /* row i + 1 */
          const VT un1 = R.v[s][threadIdx.x];
          const T ln = need_l ? E[wib][s][1] : (T)0, l2n = in_l ? E[wib][s][0] : (T)0;
          const T rn = need_r ? E[wib][s][2] : (T)0, r2n = in_r ? E[wib][s][3] : (T)0;
          VT fn;
          T fln = (T)0, frn = (T)0;
          if (HAS_F) { /* f of row i + 1, a row ahead */
            fn = fc;
            if (j + 1 < rows + 2 && rin(i + 1)) {
              if (active) fn = vload(f + idx + ms);
              if (in_l) fln = f[idx + ms - 1];
              if (in_r) frn = f[idx + ms + V];
            }
          }
          /* first sweep, row i: u_{k+1}; points outside the region keep u_k */
          const bool ri = rin(i);
          const T sl = __shfl_up_sync(kFull, vget(uc, V - 1), 1);
          const T sr = __shfl_down_sync(kFull, vget(uc, 0), 1);
          const T left = (xm & 1u) ? (first ? lc : sl) : (T)0;
          const T right = (xm >> (V - 1)) & 1u ? (last ? rc : sr) : (T)0;
          const unsigned own0 = (j >= 1 && j <= rows && i >= G.om0 && i < G.om1) ? om : 0u;
          const VT vo = chunk_relax<T, 2, HAS_F, NORM>(uc, left, right, up, un1, uc, uc, HAS_F ? fc : uc, own0, w0, w1,
                                                       (T)0, diag, c, s0);
          const unsigned upd = ri ? xm : 0u;
          VT vc;
#pragma unroll
          for (int e = 0; e < V; e++) vset(vc, e, (upd >> e) & 1u ? vget(vo, e) : vget(uc, e));
          /* the outer columns' first-sweep values, with the owners' operands */
          T vlc = lc, vrc = rc;
          if (in_l && ri) vlc = lc + c * relax_res2<T, HAS_F>(lc, l2c, vget(uc, 0), lp, ln, HAS_F ? flc : (T)0, w0, w1, diag);
          if (in_r && ri) vrc = rc + c * relax_res2<T, HAS_F>(rc, vget(uc, V - 1), r2c, rp, rn, HAS_F ? frc : (T)0, w0, w1, diag);
          /* second sweep, row i - 1: u_{k+2} */
          if (j >= 2) {
            const T tl = __shfl_up_sync(kFull, vget(vp, V - 1), 1);
            const T tr = __shfl_down_sync(kFull, vget(vp, 0), 1);
            const T wl = (xm & 1u) ? (first ? vlp : tl) : (T)0;
            const T wr = (xm >> (V - 1)) & 1u ? (last ? vrp : tr) : (T)0;
            const unsigned own1 = (i - 1 >= G.om0 && i - 1 < G.om1) ? om : 0u;
            const VT wo = chunk_relax<T, 2, HAS_F, NORM>(vp, wl, wr, vpp, vc, vp, vp, HAS_F ? fw : vp, own1, w0, w1,
                                                         (T)0, diag, c, s1);
            chunk_store(un + idx - ms, wo, xm);
          }
          load(s); /* slot s again, its row in registers */
          s = s + 1 == kRing ? 0 : s + 1;
          idx += ms;
          up = uc;
          uc = un1;
          lp = lc;
          lc = ln;
          l2c = l2n;
          rp = rc;
          rc = rn;
          r2c = r2n;
          vpp = vp;
          vp = vc;
          vlp = vlc;
          vrp = vrc;
          if (HAS_F) {
            fw = fc;
            fc = fn;
            flc = fln;
            frc = frn;
          }
        }
      }
    };
    const bool plain = __all_sync(kFull, k.active && k.xm == (1u << V) - 1u && k.om == (1u << V) - 1u &&
                                             (!first || xl >= G.x0) && (!last || xr < G.x1)) &&
                       m - 1 >= G.m0 && m + rows < G.m0 + G.mn && m >= G.om0 && m + rows <= G.om1;
    if (plain)
      task(std::integral_constant<bool, true>());
    else
      task(std::integral_constant<bool, false>());
    /* the next task's first or last lane may be another (its edge copies
     * after this task's reads) */
    __syncwarp();
  }
  cp_async_wait<0>();
}

/* ---- 3D: two sweeps a pass in the tile march (relax_range_ring3) ----
 * A block task writes u_{k+2} on kPairTileY rows of a tile over a strip of
 * planes. The first sweep runs on the tile's kTileY rows (those rows and the
 * one beside them on each side), one warp a row, from the ring of u_k planes
 * (kTileY + 2 rows, as relax_range_ring3's) and keeps u_{k+1} of each plane
 * in shared memory (two planes, by parity); the second sweep runs one plane
 * behind on the inner rows. One block barrier a plane, as in the one-sweep
 * march: after it, plane z + 1 of u_k and plane z - 1 of u_{k+1} are
 * visible, and the u_{k+1} slot of plane z - 2 is read by no one. The
 * tile's outer columns (x neighbours of its first and last chunk) get their
 * first-sweep values from the lanes at the tile's ends, from two values
 * beside each ring row; their owners compute the same values with the same
 * operands, so every point gets the bits of two plain sweeps. */
template <typename T>
struct Pair3Ring {
  typename Vec16<T>::type v[kRing3][kTileY + 2][kTileX]; /* u_k: ring row j at y1 - 1 + j */
  typename Vec16<T>::type w[2][kTileY][kTileX];          /* u_{k+1}: row i at y1 + i, planes by parity */
  T e[kRing3][kTileY + 2][4];                            /* u_k beside ring row j: xl - 1, xl, xr, xr + 1 */
  T we[2][kTileY];                                       /* u_{k+1} at xr, row i (a tile's absorbed column) */
};
/* The pass and the one-sweep stop share one allocation (static shared
 * memory is at most 48 KB a block). */
template <typename T>
union Pair3Smem {
  Ring3Smem<T> one;
  Pair3Ring<T> two;
};
template <typename T>
__device__ __forceinline__ Pair3Smem<T> &pair3_smem() {
  __shared__ Pair3Smem<T> R;
  return R;
}

/* The pass over block tasks b0, b0 + bs, ... (or the queue's), every thread
 * of the block together: reads u (u_k), writes un (u_{k+2}) on the region's
 * points; NORM: s0 and s1 get this thread's squared residuals of u_k and
 * u_{k+1} over the owned points of its tasks' own rows and planes. */
template <typename T, bool HAS_F, bool NORM>
__device__ void relax_pair_ring3(const RelaxPar &P, const RelaxGeom &G, const T *u, T *un,
                                 const T *__restrict__ f, unsigned b0, unsigned bs, const TaskQueue &Q,
                                 double &s0, double &s1) {
  static_assert(kPieces3 == 1, "the 3D two-sweep march takes one warp a tile row (COOP_TILE3_PIECES 1)");
  static_assert(RELAX_THREADS / 32 == kPairTileY + 2, "a whole pair tile: every warp's first-sweep row is read");
  typedef typename Vec16<T>::type VT;
  constexpr int V = Vec16<T>::n;
  constexpr unsigned kFull = 0xffffffffu;
  Pair3Ring<T> &R = pair3_smem<T>().two;
  const T w0 = (T)P.w0, w1 = (T)P.w1, w2 = (T)P.w2, diag = (T)P.diag, c = (T)P.c;
  const long long sy = G.sy, sz = G.sz;
  /* warp jr: the first sweep's row jr (ring row jr + 1), the second's too
   * where it is an inner row; lane: chunk `lane` of the tile row */
  const int lane = threadIdx.x & 31, jr = threadIdx.x >> 5;
  const unsigned tx = (unsigned)G.ptx, ty = (unsigned)G.pty, btasks = G.pbtasks;
  __shared__ unsigned s_task;
  auto draw = [&]() { return block_draw(Q, btasks, s_task); };
  /* rows and planes a pass may read: the region and the ghost layer beside it */
  const int ylo = G.q0 - 1, yhi = G.q0 + G.qn, zlo = G.m0 - 1, zhi = G.m0 + G.mn;
  for (unsigned bt = Q.ctr ? draw() : b0; bt < btasks; bt = Q.ctr ? draw() : bt + bs) {
    const unsigned rest = bt / tx, xt = bt - rest * tx;
    const unsigned strip = rest / ty, yt = rest - strip * ty;
    const int ch0 = (int)xt * kTileX, wt = min(kTileX, G.nch - G.pabsorb - ch0);
    /* the tile that sweeps the region's last column as lane 31's outer one */
    const bool absorb = G.pabsorb && xt == tx - 1;
    const bool active = lane < wt, tfirst = lane == 0, tlast = lane == wt - 1;
    const int xs = (G.a0 + ch0 + lane) * V;
    const int y0 = G.q0 + (int)yt * kPairTileY, ny = min(kPairTileY, G.qn - (int)yt * kPairTileY);
    const int y1 = y0 - 1; /* the first sweep's row 0 */
    const int m = G.m0 + (int)strip * G.prz, rows = min(G.prz, G.mn - (int)strip * G.prz);
    unsigned xm_, om_;
    chunk_masks<V>(G, xs, active, &xm_, &om_);
    /* PLAIN: 32 whole, owned chunks (every tile of a box whose region starts
     * and ends on chunk boundaries, but a narrower last one): no masks, and
     * lanes 0 and 31 carry the outer columns without branches */
    const bool plain = __all_sync(kFull, active && xm_ == (1u << V) - 1u && om_ == (1u << V) - 1u);
    /* ring rows ny + 4 (rows y0 - 2 .. y0 + ny + 1): this warp copies rows jr
     * and jr + kTileY; rows beyond the ghost layer (never used) copy a row inside */
    const int nring = ny + 4;
    const bool cp0 = active && jr < nring, cp1 = active && jr + kTileY < nring;
    const long long off0 = xs + sy * min(max(y1 - 1 + jr, ylo), yhi);
    const long long off1 = xs + sy * min(max(y1 - 1 + jr + kTileY, ylo), yhi);
    const int yc = y1 + jr;                          /* this warp's row */
    const bool comp = jr <= ny + 1;                  /* its first sweep is read */
    const bool inner = jr >= 1 && jr <= ny;          /* its second sweep is written */
    const bool yin = yc >= G.q0 && yc < G.q0 + G.qn; /* updated */
    const bool yown = inner && yc >= G.oq0 && yc < G.oq1;
    const long long fo = xs + sy * yc; /* (xs, yc) of a plane */
    auto task = [&](auto plain_t) {
      constexpr bool PLAIN = decltype(plain_t)::value;
      constexpr unsigned whole = (1u << V) - 1u;
      const unsigned xm = PLAIN ? whole : xm_, om = PLAIN ? whole : om_;
      /* need_*: the chunk's end element is updated, so its outer neighbour is
       * read; in_*: that neighbour is updated too (its first-sweep value is
       * computed here from the column beyond it) */
      const bool need_l = tfirst && (xm & 1u), need_r = tlast && ((xm >> (V - 1)) & 1u);
      const bool in_l = need_l && xs - 1 >= G.x0, in_r = need_r && xs + V < G.x1;
      /* PLAIN: the outer column of lane 0 (left) or 31 (right): its value in
       * e (ek), the one beyond it (ef); ein: the column is updated (else a
       * ghost: only its value is copied, and it keeps it) */
      const bool edge = lane == 0 || lane == 31, ein = in_l || in_r;
      const int ek = lane == 0 ? 1 : 2, ef = lane == 0 ? 0 : 3;
      const unsigned e_dst = smem_u32(&R.e[0][0][lane == 0 ? 0 : 2]), e_dst1 = smem_u32(&R.e[0][0][ek]);
      const int e_src = lane == 0 ? -2 : V, e_src1 = lane == 0 ? -1 : V;
      constexpr unsigned v_slot = sizeof(R.v[0]), e_slot = sizeof(R.e[0]), v_row = sizeof(R.v[0][0]),
                         e_row = sizeof(R.e[0][0]);
      int lz = m - 2, to_load = rows + 4; /* planes m - 2 .. m + rows + 1 */
      auto load = [&](int s) {
        if (to_load > 0) {
          const long long zo = sz * min(max(lz, zlo), zhi);
          auto row = [&](int j, long long off) {
            const T *p = u + off + zo;
            cp_async16(smem_u32(&R.v[0][0][lane]) + s * v_slot + j * v_row, p);
            if constexpr (PLAIN) {
              cp_async_if<2 * sizeof(T)>(e_dst + s * e_slot + j * e_row, p + e_src, edge && ein);
              cp_async_if<sizeof(T)>(e_dst1 + s * e_slot + j * e_row, p + e_src1, edge && !ein);
            } else {
              if (in_l)
                cp_async_two<T>(smem_u32(&R.e[s][j][0]), p - 2);
              else if (need_l)
                cp_async_small<sizeof(T)>(smem_u32(&R.e[s][j][1]), p - 1);
              if (in_r)
                cp_async_two<T>(smem_u32(&R.e[s][j][2]), p + V);
              else if (need_r)
                cp_async_small<sizeof(T)>(smem_u32(&R.e[s][j][2]), p + V);
            }
          };
          if (cp0) row(jr, off0);
          if (cp1) row(jr + kTileY, off1);
          lz++;
          to_load--;
        }
        cp_async_commit();
      };
      /* f at this warp's row, plane z, where the first sweep updates it
       * (PLAIN: fl, the outer column's, by lanes 0 and 31; the others read
       * their own) */
      const long long fe = lane == 0 ? -1 : lane == 31 ? V : 0;
      auto fload = [&](int z, VT &fv, T &fl, T &fr) {
        if (HAS_F && comp && yin && z >= G.m0 && z < G.m0 + G.mn) {
          const T *p = f + fo + sz * z;
          if (PLAIN) {
            fv = vload(p);
            fl = p[fe];
          } else {
            if (active) fv = vload(p);
            if (in_l) fl = p[-1];
            if (in_r) fr = p[V];
          }
        }
      };
#pragma unroll
      for (int q = 0; q < kRing3; q++) load(q);
      cp_async_wait<kRing3 - 2>(); /* planes m - 2 and m - 1 */
      __syncthreads();
      VT prev = R.v[0][jr + 1][lane], cur = R.v[1][jr + 1][lane];
      /* u_k at xl and xr, planes z - 1 and z; only by the lanes that copied
       * them (PLAIN: every lane reads e, all of it landed before the barrier) */
      T lp = (T)0, lc = (T)0, rp = (T)0, rc = (T)0;
      if (PLAIN) {
        lp = R.e[0][jr + 1][ek];
        lc = R.e[1][jr + 1][ek];
      } else {
        if (comp && need_l) lp = R.e[0][jr + 1][1], lc = R.e[1][jr + 1][1];
        if (comp && need_r) rp = R.e[0][jr + 1][2], rc = R.e[1][jr + 1][2];
      }
      VT fc = cur, fw = cur;
      T flc = (T)0, frc = (T)0;
      fload(m - 1, fc, flc, frc);
      VT vp = cur, vpp = cur; /* u_{k+1} at planes z - 1, z - 2 */
      T vlp = (T)0, vrp = (T)0;
      /* the absorbed column (lane 31 of the last tile): u_{k+1} two planes
       * back, u_k beyond it and f at plane z - 1 */
      const bool ab = PLAIN && absorb && lane == 31;
      const bool ab_own = ab && xs + V >= G.ox0 && xs + V < G.ox1;
      T vlpp = (T)0, efw = (T)0, flw = (T)0;
      long long idx = fo + sz * (m - 1); /* (xs, yc, z) */
      /* step r: the first sweep at plane z = m - 1 + r; the second at z - 1
       * once r >= 2. Steps go kRing3 at a time, unrolled: ring slots and
       * u_{k+1} parities are constants (shared-memory addresses an offset
       * from one register) and the marching registers are renamed, not moved. */
      const int nsteps = rows + 2;
      /* CM 1: every warp's row is computed (a whole tile: hoisted so that the
       * march's registers are not merged across a branch every step); CM 2:
       * a last tile of fewer rows, `comp` tested each step. One march for
       * the whole block either way: __syncthreads is the aligned barrier,
       * every thread at the same instruction (a march for each value of
       * comp would run warps through different copies of the loop's
       * barrier, which synccheck reports as errors) */
      auto march = [&](auto comp_t) {
      constexpr int CM = decltype(comp_t)::value;
      for (int r0 = 0; r0 < nsteps; r0 += kRing3) {
#pragma unroll
      for (int k = 0; k < kRing3; k++) {
        const int r = r0 + k;
        if (r >= nsteps) break;
        const int z = m - 1 + r;
        /* slots of planes z, z + 1, z - 1 (slot s holds plane z: s = (r + 1) mod kRing3) */
        const int s = (k + 1) % kRing3, sn = (k + 2) % kRing3, sp = k;
        /* u_{k+1} parity of plane z (kRing3 even: r0's is 0) */
        const int par = kRing3 % 2 ? (r & 1) : (k & 1);
        cp_async_wait<kRing3 - 3>(); /* plane z + 1 (this thread's copies) */
        __syncthreads();             /* everyone's; u_{k+1} of plane z - 1; plane z - 1 of u_k is read by no one */
        load(sp);
        if (CM == 1 || comp) {
          const VT next = R.v[sn][jr + 1][lane], ym = R.v[s][jr][lane], yp = R.v[s][jr + 2][lane];
          VT fn = fc;
          T fln = flc, frn = frc;
          if (r + 1 < rows + 2) fload(z + 1, fn, fln, frn);
          const bool upd_row = yin && z >= G.m0 && z < G.m0 + G.mn;
          const unsigned own0 = (yown && r >= 1 && r <= rows && z >= G.om0 && z < G.om1) ? om : 0u;
          /* first sweep: u_{k+1} at plane z; points outside the region keep u_k */
          const T sl = __shfl_up_sync(kFull, vget(cur, V - 1), 1);
          const T sr = __shfl_down_sync(kFull, vget(cur, 0), 1);
          VT vc;
          if constexpr (PLAIN) {
            const T ln = R.e[sn][jr + 1][ek];
            const VT vo = chunk_relax<T, 3, HAS_F, NORM>(cur, lane == 0 ? lc : sl, lane == 31 ? lc : sr, prev, next,
                                                         ym, yp, fc, own0, w0, w1, w2, diag, c, s0);
            vc = upd_row ? vo : cur;
            /* the outer column: l and r in the owner's order */
            const T near = lane == 0 ? vget(cur, 0) : vget(cur, V - 1), far = R.e[s][jr + 1][ef];
            const T res = relax_res3<T, HAS_F>(lc, lane == 0 ? far : near, lane == 0 ? near : far, R.e[s][jr][ek],
                                               R.e[s][jr + 2][ek], lp, ln, flc, w0, w1, w2, diag);
            const T vlc = upd_row && ein ? lc + c * res : lc;
            if (NORM && ab_own && own0) s0 += (double)res * (double)res;
            R.w[par][jr][lane] = vc;
            if (lane == 31) R.we[par][jr] = vlc;
            if (inner && r >= 2) {
              const VT wym = R.w[par ^ 1][jr - 1][lane], wyp = R.w[par ^ 1][jr + 1][lane];
              const T tl = __shfl_up_sync(kFull, vget(vp, V - 1), 1);
              const T tr = __shfl_down_sync(kFull, vget(vp, 0), 1);
              const unsigned own1 = (yown && z - 1 >= G.om0 && z - 1 < G.om1) ? om : 0u;
              const VT wo = chunk_relax<T, 3, HAS_F, NORM>(vp, lane == 0 ? vlp : tl, lane == 31 ? vlp : tr, vpp, vc,
                                                           wym, wyp, fw, own1, w0, w1, w2, diag, c, s1);
              vstore(un + idx - sz, wo);
              if (ab) { /* the absorbed column's second sweep, in its owner's operand order */
                const T wres = relax_res3<T, HAS_F>(vlp, vget(vp, V - 1), efw, R.we[par ^ 1][jr - 1],
                                                    R.we[par ^ 1][jr + 1], vlpp, vlc, flw, w0, w1, w2, diag);
                un[idx - sz + V] = vlp + c * wres;
                if (NORM && ab_own && own1) s1 += (double)wres * (double)wres;
              }
            }
            lp = lc;
            lc = ln;
            vlpp = vlp;
            vlp = vlc;
            efw = far;
            flw = flc;
          } else {
            T ln = (T)0, rn = (T)0;
            if (need_l) ln = R.e[sn][jr + 1][1];
            if (need_r) rn = R.e[sn][jr + 1][2];
            const T left = (xm & 1u) ? (tfirst ? lc : sl) : (T)0;
            const T right = (xm >> (V - 1)) & 1u ? (tlast ? rc : sr) : (T)0;
            const VT vo = chunk_relax<T, 3, HAS_F, NORM>(cur, left, right, prev, next, ym, yp, fc, own0, w0, w1, w2,
                                                         diag, c, s0);
            const unsigned upd = upd_row ? xm : 0u;
#pragma unroll
            for (int e = 0; e < V; e++) vset(vc, e, (upd >> e) & 1u ? vget(vo, e) : vget(cur, e));
            /* the outer columns' first-sweep values, with the owners' operands */
            T vlc = lc, vrc = rc;
            if (in_l && upd_row)
              vlc = lc + c * relax_res3<T, HAS_F>(lc, R.e[s][jr + 1][0], vget(cur, 0), R.e[s][jr][1],
                                                   R.e[s][jr + 2][1], lp, ln, flc, w0, w1, w2, diag);
            if (in_r && upd_row)
              vrc = rc + c * relax_res3<T, HAS_F>(rc, vget(cur, V - 1), R.e[s][jr + 1][3], R.e[s][jr][2],
                                                   R.e[s][jr + 2][2], rp, rn, frc, w0, w1, w2, diag);
            R.w[par][jr][lane] = vc;
            /* second sweep: u_{k+2} at plane z - 1, inner rows */
            if (inner && r >= 2) {
              const VT wym = R.w[par ^ 1][jr - 1][lane], wyp = R.w[par ^ 1][jr + 1][lane];
              const T tl = __shfl_up_sync(kFull, vget(vp, V - 1), 1);
              const T tr = __shfl_down_sync(kFull, vget(vp, 0), 1);
              const T wl = (xm & 1u) ? (tfirst ? vlp : tl) : (T)0;
              const T wr = (xm >> (V - 1)) & 1u ? (tlast ? vrp : tr) : (T)0;
              const unsigned own1 = (yown && z - 1 >= G.om0 && z - 1 < G.om1) ? om : 0u;
              const VT wo = chunk_relax<T, 3, HAS_F, NORM>(vp, wl, wr, vpp, vc, wym, wyp, fw, own1, w0, w1, w2,
                                                           diag, c, s1);
              if (active) chunk_store(un + idx - sz, wo, xm);
            }
            lp = lc;
            lc = ln;
            rp = rc;
            rc = rn;
            vlp = vlc;
            vrp = vrc;
          }
          prev = cur;
          cur = next;
          vpp = vp;
          vp = vc;
          fw = fc;
          fc = fn;
          flc = fln;
          frc = frn;
        }
        idx += sz;
      }
      }
      };
      if (ny == kPairTileY) /* comp for every warp: jr <= kPairTileY + 1 */
        march(std::integral_constant<int, 1>());
      else
        march(std::integral_constant<int, 2>());
    };
    if (plain)
      task(std::true_type());
    else
      task(std::false_type());
    cp_async_wait<0>();
    __syncthreads(); /* the next task's copies go into slots this one's last steps read */
  }
}

}  // namespace

#endif
