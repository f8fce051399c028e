/* 2D: two Jacobi sweeps in one pass over the field (run.fuse_sweeps = 2).
 * One sweep streams two values a point (u read, un written) and cannot go
 * below that floor: 16384^2 fp32 at 90% of copy bandwidth is already there.
 * Here a warp marches its strip as relax_range_ring does and computes the
 * next sweep's row one row behind the first's: u_k is read from memory once,
 * u_{k+1} lives only in registers, u_{k+2} is written. The strip's rows
 * beside it (one above, one below) and the values of the two columns beside
 * the warp's 32 chunks are computed again here from u_k (their owners compute
 * the same values with the same operands, so the same bits). Both residuals
 * (of u_k and of u_{k+1}) are summed in the pass. The caller keeps u_k (the
 * pass never writes it): a stop at u_k finds it there, a stop at u_{k+1}
 * takes one plain sweep from it. Only the region of a rank alone: the ghosts
 * of G are the Dirichlet values, which no sweep changes. */
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

}  // namespace

#endif
