/* SPDX-License-Identifier: MIT */
/*
** The discrete-event simulator of one training iteration ([Parmesan]
** Appendix H as docs/ALGORITHMS.md 1.4 reconstructs it, extended).
**
** Tasks: forward, recompute (just before its backward), backward and
** optimizer update on a compute stream per device (a replica's tp
** devices run its tasks together); an activation transfer per
** stage-graph edge, micro-batch and tp rank after the forward, a
** gradient transfer the other way after the backward; the gradient
** allreduce of every replicated stage as ring steps (one ring per tp
** rank in the plan's replica order, or the three phases of the
** hierarchical allreduce when the cost model picks it); then the update.
** A ring whose channels nothing else uses (channel mode, each device in
** one stage replica), when every event need not be recorded, is priced
** in closed form once all its members are ready (ring_closed_form): the
** same times in O(n K) arithmetic instead of O(n K) events.
**
** Order: every replica runs its stage's schedule order (sched.c); a
** task starts when it is the next of its replica, its inputs have
** arrived and all its devices are free.  When several replicas share a
** device, a free device takes a ready backward or update before a
** ready forward, then the lower stage.
**
** Network: PP_NET_CHANNELS gives every directed device pair a FIFO
** channel at the pair's bandwidth (transfers between other pairs never
** interfere).  PP_NET_LINKS routes every transfer over the cluster's
** physical links (cluster/cluster_paths.c) and shares them fluidly: a
** transfer runs at min over its links of (bandwidth / transfers on
** it), scaled by B(i, j) / its narrowest link (1 for widest-path
** routing, 1 / hops for hop routing, whose matrix divides by the hops),
** so that alone it matches the channel model and n transfers on one
** path share B(i, j);
** rates are recomputed at every start and end.  Without a link graph
** every directed pair is one link shared by its transfers.  Both add the
** latency once per transfer.
**
** Memory: a forward allocates the activations its stage keeps (its
** input only with recomputation), a recomputation the stage's full
** activations, and the backward frees both; the peak adds the static
** part of the memory model (cost_eval.c), which it equals for devices
** holding one stage.
**
** Invariants: events leave the heap in (time, sequence) order, so the
** same plan gives the same events; every task starts no earlier than the
** end of what it waits for.  The orders cannot block (sched.c); a
** replica whose next task never starts would be a bug, reported as
** PP_EINTERNAL rather than a wrong time.
**
** Complexity: O(E log E) for E tasks (compute, transfers, ring steps;
** closed-form rings add their members, not their steps, to E, and
** O(n K) arithmetic), plus, with link sharing, O(active transfers x
** hops) per transfer event.
*/
#include "sim/sim.h"
#include "base/heap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_COMP, EV_XFER, EV_FLOW, EV_FLOWSTART, EV_WAKE, EV_RELEASE, EV_RING };
enum { X_ACT, X_GRAD, X_RING };

/* TUNING: pattern times closer than this share of the period are equal
** (rounding of j T + sigma): then the backward goes first, which frees
** memory; MadPipe's patterns put a backward and a forward at one moment
** (10569d3). */
#define PAT_TIE 1e-9

struct xfer {
  int32_t src, dst;
  double bytes;
  int32_t kind, q, member; /* destination replica; ring: sender slot */
  int64_t idx;             /* act/grad: micro-batch slot; ring: step */
  int64_t pred, rec, next;
  double remaining, last, rate;
  double t0;    /* links: when it started moving */
  double scale; /* B(src, dst) / the route's narrowest link */
  int32_t ver, res_off, nres;
  int32_t active_pos;
};

struct chan {
  int64_t head, tail; /* FIFO of waiting transfers */
  bool busy;
  int64_t last_rec;
};

struct ring {
  int32_t first, n, steps;
  double chunk;
  int32_t nready; /* closed form: members ready so far */
};

struct run {
  pp_ctx *ctx;
  struct ppi_cost *k;
  struct ppi_arena ar;
  const struct ppi_stop *stop; /* NULL: run to the end */
  int64_t popped;              /* events taken, for the stop's clock */
  bool record;
  double now;
  int64_t seq, ntask;

  /* events: key the time, tie the sequence number (equal times leave in
  ** the order they were pushed), payload (id, type, ver) */
  struct ppi_heap heap;

  /* replicas */
  int32_t S, R;
  int32_t *rs;         /* stage of replica q */
  int64_t *mb_off;     /* slot of (q, local j) = mb_off[q] + j */
  pp_sched_op **order; /* per stage */
  int64_t *len;        /* per stage: 2 gas */
  int64_t *pos;
  bool *running, *upd_done, *ar_done;
  int32_t *run_kind;
  int64_t *run_j, *run_rec;
  int64_t *bdone;
  int32_t *ar_left;         /* tp ranks whose allreduce is not finished */
  int64_t *ar_last;         /* rec of the last ring delivery of q */
  int32_t *need_f, *need_b; /* per stage */
  int32_t *got_f, *got_b;   /* per slot */
  int64_t *last_f, *last_b; /* rec of the last input per slot */
  int64_t *f_rec;           /* rec of each forward, per slot */
  int32_t *in_off, *in_e, *out_off, *out_e; /* stage edges by b and by a */

  /* devices */
  bool *busy;
  int64_t *dev_last; /* rec of the last task on the device */
  int32_t *dq_off, *dq;
  double *live, *static_b, *peak_live;
  double *busy_ms, *fb_ms, *comm_ms;
  double last_bwd_end;

  /* transfers */
  struct ppi_vec xf; /* struct xfer */
  struct ppi_i64map chmap;
  struct ppi_vec ch; /* struct chan */

  /* rings */
  struct ppi_vec rings, slot_ring, slot_dev, slot_next, slot_q;
  int32_t *first_slot; /* per (q, t): phase-1 slot, or -1 */
  int32_t *sent, *recvd, *deliv;
  bool *ready, *sdone;
  int64_t *slot_last; /* rec that made the slot's next send possible */
  bool ring_closed;   /* rings in closed form (ring_closed_form) */
  double *ready_at;   /* per slot: when it became ready (closed form) */

  /* links */
  struct ppi_routes rt;
  struct ppi_vec res; /* int32: route resources of transfers */
  struct ppi_i64map vmap;
  struct ppi_vec vres_bw; /* double: virtual resources' bandwidth */
  int32_t nres_links;
  struct resstate {
    int32_t n;     /* active transfers on the resource */
    int64_t stamp; /* the rates() call that last touched it */
  } * rescount;
  int64_t stampno;
  int32_t rescap;
  struct ppi_vec active; /* int64 transfer ids */

  /* a periodic pattern (plan pattern_ms): each device runs its operations
  ** in the order of their pattern times j T + sigma */
  bool pat;
  double T;
  double *wake; /* per replica: the time of its pending wake-up, or -1 */

  /* output */
  struct ppi_vec ev, pred, mem;
};

/* ---- events ----------------------------------------------------------- */

static pp_status push(struct run *r, double t, int32_t type, int64_t id,
                      int32_t ver)
{
  struct ppi_heap_el e;
  e.key = t;
  e.tie = (uint64_t)r->seq++;
  e.id = id;
  e.a = type;
  e.b = ver;
  return ppi_heap_push(r->ctx, &r->heap, e);
}

/* ---- recording -------------------------------------------------------- */

static pp_status rec(struct run *r, pp_task_kind kind, int32_t s, int32_t rep,
                     int64_t mb, int32_t d, int32_t peer, double t0, double t1,
                     double bytes, int64_t pred, int64_t *out)
{
  pp_sim_event e;
  pp_status rc;
  r->ntask++;
  *out = -1;
  if (!r->record)
    return PP_OK;
  e.kind = kind;
  e.stage = s;
  e.replica = rep;
  e.micro_batch = mb;
  e.device = d;
  e.peer = peer;
  e.start_ms = t0;
  e.end_ms = t1;
  e.bytes = bytes;
  *out = (int64_t)r->ev.n;
  if ((rc = ppi_vec_push(r->ctx, &r->ev, &e)) ||
      (rc = ppi_vec_push(r->ctx, &r->pred, &pred)))
    return rc;
  return PP_OK;
}

static int64_t later(const struct run *r, int64_t a, int64_t b)
{
  if (a < 0)
    return b;
  if (b < 0)
    return a;
  return PPI_VEC_AT(&r->ev, pp_sim_event, b).end_ms >
                 PPI_VEC_AT(&r->ev, pp_sim_event, a).end_ms
             ? b
             : a;
}

static pp_status mem_change(struct run *r, int32_t d, double delta)
{
  struct ppi_memsample m;
  r->live[d] += delta;
  if (r->live[d] > r->peak_live[d])
    r->peak_live[d] = r->live[d];
  if (!r->record)
    return PP_OK;
  m.t = r->now;
  m.d = d;
  m.bytes = r->static_b[d] + r->live[d];
  return ppi_vec_push(r->ctx, &r->mem, &m);
}

/* ---- transfers -------------------------------------------------------- */

static pp_status deliver(struct run *r, int64_t x);
static pp_status try_start(struct run *r, int32_t q);
static pp_status rates(struct run *r, int64_t changed);

static pp_status chan_start(struct run *r, int32_t c)
{
  struct chan *ch = &PPI_VEC_AT(&r->ch, struct chan, c);
  struct xfer *x;
  int64_t id = ch->head;
  double ms;
  pp_status rc;
  if (ch->busy || id < 0)
    return PP_OK;
  x = &PPI_VEC_AT(&r->xf, struct xfer, id);
  ch->head = x->next;
  if (ch->head < 0)
    ch->tail = -1;
  ch->busy = true;
  ms = ppi_cost_comm(r->k, x->src, x->dst, x->bytes);
  r->comm_ms[x->src] += ms;
  if ((rc = push(r, r->now + ms, EV_XFER, id, c)))
    return rc;
  {
    int32_t s = x->kind == X_RING ? -1 : r->rs[x->q];
    pp_task_kind kd = x->kind == X_ACT    ? PP_TASK_SEND_ACT
                      : x->kind == X_GRAD ? PP_TASK_SEND_GRAD
                                          : PP_TASK_ALLREDUCE;
    int64_t out, pred = later(r, x->pred, ch->last_rec);
    if (x->kind == X_RING)
      s = r->rs[PPI_VEC_AT(&r->slot_q, int32_t, x->member)];
    if ((rc = rec(r, kd, s, x->kind == X_RING ? -1 : -1, x->idx, x->src, x->dst,
                  r->now, r->now + ms, x->bytes, pred, &out)))
      return rc;
    PPI_VEC_AT(&r->xf, struct xfer, id).rec = out;
  }
  return PP_OK;
}

static pp_status link_activate(struct run *r, int64_t id)
{
  struct xfer *x = &PPI_VEC_AT(&r->xf, struct xfer, id);
  int32_t i;
  int64_t out;
  pp_status rc;
  int32_t s = x->kind == X_RING
                  ? r->rs[PPI_VEC_AT(&r->slot_q, int32_t, x->member)]
                  : r->rs[x->q];
  pp_task_kind kd = x->kind == X_ACT    ? PP_TASK_SEND_ACT
                    : x->kind == X_GRAD ? PP_TASK_SEND_GRAD
                                        : PP_TASK_ALLREDUCE;
  x->remaining = x->bytes;
  x->last = r->now;
  x->t0 = r->now;
  x->rate = 0;
  x->active_pos = (int32_t)r->active.n;
  for (i = 0; i < x->nres; i++)
    r->rescount[PPI_VEC_AT(&r->res, int32_t, x->res_off + i)].n++;
  if ((rc = ppi_vec_push(r->ctx, &r->active, &id)))
    return rc;
  if ((rc = rec(r, kd, s, -1, x->idx, x->src, x->dst, r->now, r->now, x->bytes,
                x->pred, &out)))
    return rc;
  PPI_VEC_AT(&r->xf, struct xfer, id).rec = out;
  return rates(r, id);
}

static double res_bw(const struct run *r, int32_t res)
{
  if (res < r->nres_links)
    return ppi_route_gbps(&r->rt, res);
  return PPI_VEC_AT(&r->vres_bw, double, res - r->nres_links);
}

/* Transfer `changed' started or ended: new rates for the transfers that
** share a resource with it (the others keep theirs). */
static pp_status rates(struct run *r, int64_t changed)
{
  const struct xfer *cx = &PPI_VEC_AT(&r->xf, struct xfer, changed);
  size_t i;
  int32_t j;
  pp_status rc;
  r->stampno++;
  for (j = 0; j < cx->nres; j++)
    r->rescount[PPI_VEC_AT(&r->res, int32_t, cx->res_off + j)].stamp =
        r->stampno;
  for (i = 0; i < r->active.n; i++) {
    int64_t id = PPI_VEC_AT(&r->active, int64_t, i);
    struct xfer *x = &PPI_VEC_AT(&r->xf, struct xfer, id);
    double rate = INFINITY;
    bool touched = false;
    for (j = 0; j < x->nres && !touched; j++)
      touched =
          r->rescount[PPI_VEC_AT(&r->res, int32_t, x->res_off + j)].stamp ==
          r->stampno;
    if (!touched)
      continue;
    x->remaining -= x->rate * 1e6 * (r->now - x->last);
    if (x->remaining < 0)
      x->remaining = 0;
    x->last = r->now;
    for (j = 0; j < x->nres; j++) {
      int32_t res = PPI_VEC_AT(&r->res, int32_t, x->res_off + j);
      double share = res_bw(r, res) / r->rescount[res].n;
      if (share < rate)
        rate = share;
    }
    rate *= x->scale;
    x->rate = rate;
    x->ver++;
    if ((rc = push(r, r->now + x->remaining / (rate * 1e6), EV_FLOW, id,
                   x->ver)))
      return rc;
  }
  return PP_OK;
}

static pp_status route_of(struct run *r, struct xfer *x)
{
  int32_t buf[PPI_MAX_ROUTE_HOPS], n, i;
  pp_status rc;
  x->res_off = (int32_t)r->res.n;
  if ((rc = ppi_route_path(r->ctx, &r->rt, x->src, x->dst, buf,
                           PPI_MAX_ROUTE_HOPS, &n)))
    return rc;
  if (n == 0) { /* no link graph: the pair is its own link */
    int64_t key = (int64_t)x->src * r->k->ndev + x->dst;
    int32_t v = ppi_i64map_get(&r->vmap, key);
    if (v < 0) {
      double bw = ppi_cost_bw(r->k, x->src, x->dst);
      v = (int32_t)r->vres_bw.n;
      if ((rc = ppi_vec_push(r->ctx, &r->vres_bw, &bw)) ||
          (rc = ppi_i64map_put(r->ctx, &r->vmap, key, v)))
        return rc;
    }
    buf[0] = r->nres_links + v;
    n = 1;
  }
  for (i = 0; i < n; i++) {
    if (buf[i] >= r->rescap) {
      /* TUNING: double, or jump 64 past the id asked for; c9747fb, no sweep
      ** recorded. */
      int32_t cap = r->rescap * 2 > buf[i] + 1 ? r->rescap * 2 : buf[i] + 64;
      struct resstate *nc = ppi_raw_realloc(ppi_ctx_alloc(r->ctx), r->rescount,
                                            (size_t)r->rescap * sizeof *nc,
                                            (size_t)cap * sizeof *nc);
      if (!nc)
        return ppi_nomem(r->ctx);
      memset(nc + r->rescap, 0, (size_t)(cap - r->rescap) * sizeof *nc);
      r->rescount = nc;
      r->rescap = cap;
    }
    if ((rc = ppi_vec_push(r->ctx, &r->res, &buf[i])))
      return rc;
  }
  x->nres = n;
  {
    double narrow = INFINITY;
    for (i = 0; i < n; i++)
      narrow = fmin(narrow, res_bw(r, buf[i]));
    x->scale = ppi_cost_bw(r->k, x->src, x->dst) / narrow;
  }
  return PP_OK;
}

/* Put transfer id on the network (after its release time, if any). */
static pp_status dispatch(struct run *r, int64_t id)
{
  const struct xfer *x = &PPI_VEC_AT(&r->xf, struct xfer, id);
  int32_t src = x->src, dst = x->dst;
  pp_status rc;
  if (r->k->cp.network == PP_NET_LINKS) {
    double lat = r->k->c->latency_us / 1000;
    if (lat > 0)
      return push(r, r->now + lat, EV_FLOWSTART, id, 0);
    return link_activate(r, id);
  } else {
    int64_t key = (int64_t)src * r->k->ndev + dst;
    int32_t c = ppi_i64map_get(&r->chmap, key);
    struct chan *ch;
    if (c < 0) {
      struct chan z = {-1, -1, false, -1};
      c = (int32_t)r->ch.n;
      if ((rc = ppi_vec_push(r->ctx, &r->ch, &z)) ||
          (rc = ppi_i64map_put(r->ctx, &r->chmap, key, c)))
        return rc;
    }
    ch = &PPI_VEC_AT(&r->ch, struct chan, c);
    if (ch->tail >= 0)
      PPI_VEC_AT(&r->xf, struct xfer, ch->tail).next = id;
    else
      ch->head = id;
    ch->tail = id;
    return chan_start(r, c);
  }
}

/* A transfer; release >= 0: not before that time (a pattern's). */
static pp_status send(struct run *r, int32_t kind, int32_t src, int32_t dst,
                      double bytes, int32_t q, int32_t member, int64_t idx,
                      int64_t pred, double release)
{
  struct xfer x;
  int64_t id = (int64_t)r->xf.n;
  pp_status rc;

  memset(&x, 0, sizeof x);
  x.src = src;
  x.dst = dst;
  x.bytes = bytes;
  x.kind = kind;
  x.q = q;
  x.member = member;
  x.idx = idx;
  x.pred = pred;
  x.rec = pred; /* a same-device hand-over: what produced it */
  x.next = -1;
  if (src != dst && r->k->cp.network == PP_NET_LINKS && (rc = route_of(r, &x)))
    return rc;
  if ((rc = ppi_vec_push(r->ctx, &r->xf, &x)))
    return rc;
  if (src == dst || bytes <= 0)
    return deliver(r, id);
  if (release > r->now)
    return push(r, release, EV_RELEASE, id, 0);
  return dispatch(r, id);
}

/* ---- rings ------------------------------------------------------------ */

static pp_status ring_try(struct run *r, int32_t g)
{
  int32_t ri = PPI_VEC_AT(&r->slot_ring, int32_t, g);
  struct ring *R = &PPI_VEC_AT(&r->rings, struct ring, ri);
  int32_t k = r->sent[g], succ;
  if (!r->ready[g] || k >= R->steps || (k > 0 && r->recvd[g] < k))
    return PP_OK;
  succ = R->first + (g - R->first + 1) % R->n;
  r->sent[g]++;
  return send(r, X_RING, PPI_VEC_AT(&r->slot_dev, int32_t, g),
              PPI_VEC_AT(&r->slot_dev, int32_t, succ), R->chunk,
              PPI_VEC_AT(&r->slot_q, int32_t, g), g, k, r->slot_last[g], -1);
}

/* A ring whose channels nothing else uses, in closed form once every
** member is ready: member i sends step k of R->steps when it has
** received step k - 1 from its predecessor and its channel is free, so
** with e_i(k) the end of that send, e_i(k) = max(e_i(k - 1), e_{i-1}(k -
** 1)) + d_i and e_i(-1) its ready time, d_i the channel's time for a
** chunk (chan_start's, latency included); member i is done when its last
** send and its last receipt are, max(e_i(K - 1), e_{i-1}(K - 1)).  The
** same times as stepping the ring through the channels (which keeps
** every step as a transfer: O(n^2) events and records for n members),
** in O(n K) arithmetic and O(n) memory. */
static pp_status ring_closed_form(struct run *r, struct ring *R)
{
  int32_t n = R->n, K = R->steps, i, k;
  double *e, *d;
  pp_status rc = PP_OK;
  if (!(e = ppi_alloc(r->ctx, 2 * (size_t)n * sizeof *e)))
    return PP_ENOMEM;
  d = e + n;
  for (i = 0; i < n; i++) {
    int32_t g = R->first + i, h = R->first + (i + 1) % n;
    int32_t a = PPI_VEC_AT(&r->slot_dev, int32_t, g);
    int32_t b = PPI_VEC_AT(&r->slot_dev, int32_t, h);
    d[i] = a == b || !(R->chunk > 0) ? 0 : ppi_cost_comm(r->k, a, b, R->chunk);
    e[i] = r->ready_at[g];
    r->comm_ms[a] += K * d[i];
  }
  r->ntask += (int64_t)n * K;
  for (k = 0; k < K; k++) {
    double prev = e[n - 1]; /* e_{n-1}(k - 1): member 0's predecessor */
    for (i = 0; i < n; i++) {
      double old = e[i];               /* e_i(k - 1) */
      double in = k == 0 ? old : prev; /* step 0 waits for no receipt */
      e[i] = (old > in ? old : in) + d[i];
      prev = old;
    }
  }
  for (i = 0; i < n && !rc; i++) {
    double pred = e[(i + n - 1) % n];
    double done =
        K == 0 ? r->ready_at[R->first + i] : (e[i] > pred ? e[i] : pred);
    rc = push(r, done, EV_RING, R->first + i, 0);
  }
  ppi_free(r->ctx, e, 2 * (size_t)n * sizeof *e);
  return rc;
}

static pp_status slot_ready(struct run *r, int32_t g, int64_t why)
{
  r->ready[g] = true;
  r->slot_last[g] = later(r, r->slot_last[g], why);
  if (r->ring_closed) {
    int32_t ri = PPI_VEC_AT(&r->slot_ring, int32_t, g);
    struct ring *R = &PPI_VEC_AT(&r->rings, struct ring, ri);
    r->ready_at[g] = r->now;
    if (++R->nready < R->n)
      return PP_OK;
    return ring_closed_form(r, R);
  }
  return ring_try(r, g);
}

static pp_status ring_check_done(struct run *r, int32_t g, int64_t why)
{
  int32_t ri = PPI_VEC_AT(&r->slot_ring, int32_t, g);
  struct ring *R = &PPI_VEC_AT(&r->rings, struct ring, ri);
  int32_t nx, q;
  if (r->sdone[g] || r->deliv[g] < R->steps || r->recvd[g] < R->steps)
    return PP_OK;
  r->sdone[g] = true;
  nx = PPI_VEC_AT(&r->slot_next, int32_t, g);
  if (nx >= 0)
    return slot_ready(r, nx, why);
  q = PPI_VEC_AT(&r->slot_q, int32_t, g);
  r->ar_last[q] = later(r, r->ar_last[q], why);
  if (--r->ar_left[q] == 0) {
    r->ar_done[q] = true;
    return try_start(r, q);
  }
  return PP_OK;
}

/* ---- compute ---------------------------------------------------------- */

static int32_t rep_dev(const struct run *r, int32_t q, int32_t t)
{
  return r->k->p->dev[r->k->p->dev_off[q] + t];
}

/* The tp degree of replica q's stage. */
static int32_t rtp(const struct run *r, int32_t q)
{
  return r->k->p->stp[r->rs[q]];
}

/* Record a compute task of replica q: the event of tp rank 0 (the one
** the critical path links), then a copy on every other rank's device so
** that traces and charts show all of them busy. */
static pp_status rec_group(struct run *r, pp_task_kind kind, int32_t q,
                           int64_t mb, double t0, double t1, int64_t pred,
                           int64_t *out)
{
  int32_t s = r->rs[q], rr = q - r->k->p->rep_off[s], t;
  int64_t none = -1;
  pp_status rc;
  if ((rc =
           rec(r, kind, s, rr, mb, rep_dev(r, q, 0), -1, t0, t1, 0, pred, out)))
    return rc;
  if (!r->record)
    return PP_OK;
  for (t = 1; t < rtp(r, q); t++) {
    pp_sim_event e = PPI_VEC_AT(&r->ev, pp_sim_event, *out);
    e.device = rep_dev(r, q, t);
    if ((rc = ppi_vec_push(r->ctx, &r->ev, &e)) ||
        (rc = ppi_vec_push(r->ctx, &r->pred, &none)))
      return rc;
  }
  return PP_OK;
}

/* The pattern time of replica q's next operation (INFINITY: only its
** update is left). */
static double next_key(const struct run *r, int32_t q)
{
  int32_t s = r->rs[q];
  const pp_sched_op *op;
  if (r->pos[q] >= r->len[s])
    return INFINITY;
  op = &r->order[s][r->pos[q]];
  return (double)op->micro_batch * r->T +
         r->k->p->pat[4 * (size_t)s + (op->kind == PP_TASK_FWD ? 0 : 1)];
}

/* Is replica a's next operation before b's in the pattern?  Times equal
** up to rounding (a zero-length backward and a forward due at the same
** moment) go backward first, which frees memory, then lower replica. */
static bool pat_before(const struct run *r, int32_t a, int32_t b)
{
  double ka = next_key(r, a), kb = next_key(r, b), eps = PAT_TIE * r->T;
  bool ba, bb;
  if (ka == INFINITY || kb == INFINITY)
    return ka < kb || (ka == kb && a < b);
  if (ka < kb - eps || ka > kb + eps)
    return ka < kb;
  ba = r->order[r->rs[a]][r->pos[a]].kind == PP_TASK_BWD;
  bb = r->order[r->rs[b]][r->pos[b]].kind == PP_TASK_BWD;
  if (ba != bb)
    return ba;
  return a < b;
}

/* In pattern mode, may q start its next operation: is it the earliest in
** pattern time among the replicas sharing any of q's devices? */
static bool is_head(const struct run *r, int32_t q)
{
  int32_t t, i;
  for (t = 0; t < rtp(r, q); t++) {
    int32_t d = rep_dev(r, q, t);
    for (i = r->dq_off[d]; i < r->dq_off[d + 1]; i++) {
      int32_t o = r->dq[i];
      if (o == q || r->upd_done[o])
        continue;
      if (pat_before(r, o, q))
        return false;
    }
  }
  return true;
}

static pp_status try_start(struct run *r, int32_t q)
{
  int32_t s = r->rs[q], t, kind;
  int32_t rr = q - r->k->p->rep_off[s];
  int64_t j = 0, slot = 0, pred = -1, out;
  double dur;
  pp_status rc;

  if (r->running[q] || r->upd_done[q])
    return PP_OK;
  if (r->pat) {
    /* a pattern: the device's turn, and not before the pattern's time */
    double key = next_key(r, q);
    if (!is_head(r, q))
      return PP_OK;
    if (key < INFINITY && key > r->now) {
      if (r->wake[q] != key) {
        r->wake[q] = key;
        return push(r, key, EV_WAKE, q, 0);
      }
      return PP_OK;
    }
  }
  if (r->pos[q] < r->len[s]) {
    const pp_sched_op *op = &r->order[s][r->pos[q]];
    j = op->micro_batch;
    slot = r->mb_off[q] + j;
    kind = op->kind;
    if (kind == PP_TASK_FWD ? r->got_f[slot] < r->need_f[s]
                            : r->got_b[slot] < r->need_b[s])
      return PP_OK;
    pred = kind == PP_TASK_FWD ? r->last_f[slot] : r->last_b[slot];
  } else {
    if (!r->ar_done[q])
      return PP_OK;
    kind = PP_TASK_UPDATE;
    pred = r->ar_last[q];
  }
  for (t = 0; t < rtp(r, q); t++)
    if (r->busy[rep_dev(r, q, t)])
      return PP_OK;
  for (t = 0; t < rtp(r, q); t++) {
    int32_t d = rep_dev(r, q, t);
    r->busy[d] = true;
    pred = later(r, pred, r->dev_last[d]);
  }
  r->running[q] = true;
  r->run_kind[q] = kind;
  r->run_j[q] = j;
  if (kind == PP_TASK_FWD) {
    dur = r->k->f[q];
    for (t = 0; t < rtp(r, q); t++)
      if ((rc = mem_change(r, rep_dev(r, q, t), r->k->act[s])))
        return rc;
  } else if (kind == PP_TASK_BWD) {
    dur = r->k->rc[q] + r->k->b[q];
    if (r->k->p->p.recompute) {
      for (t = 0; t < rtp(r, q); t++)
        if ((rc = mem_change(r, rep_dev(r, q, t), r->k->peak_extra[s])))
          return rc;
      if ((rc = rec_group(r, PP_TASK_RECOMPUTE, q,
                          rr + j * ppi_cost_nrep(r->k, s), r->now,
                          r->now + r->k->rc[q], pred, &out)))
        return rc;
      pred = out >= 0 ? out : pred;
    }
  } else {
    dur = r->k->u[q];
  }
  {
    double t0 = kind == PP_TASK_BWD ? r->now + r->k->rc[q] : r->now;
    int64_t mb = kind == PP_TASK_UPDATE ? -1 : rr + j * ppi_cost_nrep(r->k, s);
    if ((rc = rec_group(r, (pp_task_kind)kind, q, mb, t0, r->now + dur, pred,
                        &out)))
      return rc;
    r->run_rec[q] = out;
  }
  for (t = 0; t < rtp(r, q); t++)
    r->busy_ms[rep_dev(r, q, t)] += dur;
  if (kind != PP_TASK_UPDATE)
    for (t = 0; t < rtp(r, q); t++)
      r->fb_ms[rep_dev(r, q, t)] += dur;
  if (kind != PP_TASK_UPDATE)
    r->pos[q]++;
  return push(r, r->now + dur, EV_COMP, q, 0);
}

/* Offer the free devices of replica q's group to the replicas they hold:
** backward and update first, then forward; lower stages first. */
static pp_status kick(struct run *r, int32_t d)
{
  int32_t i, pass;
  pp_status rc;
  for (pass = 0; pass < 2; pass++)
    for (i = r->dq_off[d]; i < r->dq_off[d + 1]; i++) {
      int32_t q = r->dq[i], s = r->rs[q];
      bool fwd =
          r->pos[q] < r->len[s] && r->order[s][r->pos[q]].kind == PP_TASK_FWD;
      if (fwd == (pass == 1) && (rc = try_start(r, q)))
        return rc;
    }
  return PP_OK;
}

/* The pattern time of the transfer of micro-batch m after stage a: its
** activation (k = 2) or the gradient coming back (k = 3); -1 without a
** pattern. */
static double release(const struct run *r, int32_t a, int k, int64_t m)
{
  double x;
  if (!r->pat)
    return -1;
  x = r->k->p->pat[4 * (size_t)a + k];
  return isnan(x) ? -1 : (double)m * r->T + x;
}

/* Micro-batch m's transfer of stage edge e from replica q to replica q2
** (its activation, or its gradient back): one message per rank pair
** (cost.h, ppi_cost_npair), each released at rel. */
static pp_status send_pairs(struct run *r, int32_t kind,
                            const struct ppi_sedge *e, int32_t q, int32_t q2,
                            int64_t m, int64_t me, double rel)
{
  int32_t t, np = ppi_cost_npair(r->k, e->a, e->b);
  pp_status rc;
  for (t = 0; t < np; t++)
    if ((rc = send(r, kind, rep_dev(r, q, t % rtp(r, q)),
                   rep_dev(r, q2, t % rtp(r, q2)),
                   ppi_cost_wire_bytes(r->k, e->a, e->b, e->bytes), q2, -1, m,
                   me, rel)))
      return rc;
  return PP_OK;
}

static pp_status comp_done(struct run *r, int32_t q)
{
  int32_t s = r->rs[q], rr = q - r->k->p->rep_off[s], t, i;
  int32_t kind = r->run_kind[q];
  int64_t j = r->run_j[q], m = rr + j * ppi_cost_nrep(r->k, s);
  int64_t me = r->run_rec[q];
  pp_status rc;

  r->running[q] = false;
  for (t = 0; t < rtp(r, q); t++) {
    int32_t d = rep_dev(r, q, t);
    r->busy[d] = false;
    r->dev_last[d] = me;
  }
  if (kind == PP_TASK_FWD) {
    r->f_rec[r->mb_off[q] + j] = me;
    for (i = r->out_off[s]; i < r->out_off[s + 1]; i++) {
      const struct ppi_sedge *e = &r->k->e[r->out_e[i]];
      int32_t Rb = ppi_cost_nrep(r->k, e->b);
      int32_t qb = r->k->p->rep_off[e->b] + (int32_t)(m % Rb);
      if ((rc = send_pairs(r, X_ACT, e, q, qb, m, me, release(r, e->a, 2, m))))
        return rc;
    }
  } else if (kind == PP_TASK_BWD) {
    if (r->now > r->last_bwd_end)
      r->last_bwd_end = r->now;
    for (t = 0; t < rtp(r, q); t++)
      if ((rc = mem_change(r, rep_dev(r, q, t),
                           -(r->k->act[s] + r->k->peak_extra[s]))))
        return rc;
    for (i = r->in_off[s]; i < r->in_off[s + 1]; i++) {
      const struct ppi_sedge *e = &r->k->e[r->in_e[i]];
      int32_t Ra = ppi_cost_nrep(r->k, e->a);
      int32_t qa = r->k->p->rep_off[e->a] + (int32_t)(m % Ra);
      if ((rc = send_pairs(r, X_GRAD, e, q, qa, m, me, release(r, e->a, 3, m))))
        return rc;
    }
    if (++r->bdone[q] == r->k->gas[s]) {
      r->ar_last[q] = me;
      if (r->ar_left[q] == 0)
        r->ar_done[q] = true;
      else
        for (t = 0; t < rtp(r, q); t++)
          if ((rc = slot_ready(r, r->first_slot[r->k->p->dev_off[q] + t], me)))
            return rc;
    }
  } else {
    r->upd_done[q] = true;
  }
  for (t = 0; t < rtp(r, q); t++)
    if ((rc = kick(r, rep_dev(r, q, t))))
      return rc;
  return PP_OK;
}

static pp_status deliver(struct run *r, int64_t id)
{
  struct xfer x = PPI_VEC_AT(&r->xf, struct xfer, id);
  pp_status rc;
  if (x.kind == X_RING) {
    int32_t g = x.member;
    int32_t ri = PPI_VEC_AT(&r->slot_ring, int32_t, g);
    struct ring *R = &PPI_VEC_AT(&r->rings, struct ring, ri);
    int32_t succ = R->first + (g - R->first + 1) % R->n;
    r->deliv[g]++;
    r->recvd[succ]++;
    r->slot_last[succ] = later(r, r->slot_last[succ], x.rec);
    if ((rc = ring_try(r, succ)) || (rc = ring_try(r, g)) ||
        (rc = ring_check_done(r, g, x.rec)) ||
        (rc = ring_check_done(r, succ, x.rec)))
      return rc;
    return PP_OK;
  }
  {
    int32_t s = r->rs[x.q];
    int64_t slot = r->mb_off[x.q] + x.idx / ppi_cost_nrep(r->k, s);
    if (x.kind == X_ACT) {
      r->got_f[slot]++;
      r->last_f[slot] = later(r, r->last_f[slot], x.rec);
    } else {
      r->got_b[slot]++;
      r->last_b[slot] = later(r, r->last_b[slot], x.rec);
    }
    return try_start(r, x.q);
  }
}

/* ---- set-up ----------------------------------------------------------- */

static pp_status add_ring(struct run *r, const int32_t *devs, const int32_t *q,
                          int32_t n, int32_t steps, double chunk,
                          int32_t *slots)
{
  struct ring R;
  int32_t i, minus1 = -1, ri = (int32_t)r->rings.n;
  pp_status rc;
  R.first = (int32_t)r->slot_dev.n;
  R.n = n;
  R.steps = steps;
  R.chunk = chunk;
  R.nready = 0;
  if ((rc = ppi_vec_push(r->ctx, &r->rings, &R)))
    return rc;
  for (i = 0; i < n; i++) {
    slots[i] = (int32_t)r->slot_dev.n;
    if ((rc = ppi_vec_push(r->ctx, &r->slot_dev, &devs[i])) ||
        (rc = ppi_vec_push(r->ctx, &r->slot_q, &q[i])) ||
        (rc = ppi_vec_push(r->ctx, &r->slot_ring, &ri)) ||
        (rc = ppi_vec_push(r->ctx, &r->slot_next, &minus1)))
      return rc;
  }
  return PP_OK;
}

/* The allreduce of stage s, tp rank t: one ring, or three phases. */
static pp_status build_allreduce(struct run *r, int32_t s, int32_t t)
{
  struct ppi_cost *k = r->k;
  int32_t R = ppi_cost_nrep(k, s), i, a, j, nn = 0, kk;
  int32_t *devs, *qs, *slots, *node_of, *nodes, *cnt, *idx, *p1, *p2, *p3;
  double P = k->gbytes[s], sl[3] = {1, 1, 1};
  pp_status rc;

  if (!PPI_ARENA_NEW(&r->ar, r->ctx, devs, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, qs, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, slots, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, node_of, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, nodes, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, cnt, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, idx, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, p1, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, p2, R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, p3, R))
    return PP_ENOMEM;
  for (i = 0; i < R; i++) {
    qs[i] = k->p->rep_off[s] + i;
    devs[i] = ppi_cost_dev(k, s, i, t);
  }
  /* channels do not share links: take the estimate's shared hops by
  ** stretching the chunks (cost_model.c, allreduce); links share them */
  if (k->cp.network == PP_NET_CHANNELS)
    for (i = 0; i < 3; i++)
      sl[i] = k->ar_slow[3 * s + i];
  if (!k->ar_hier[s]) {
    if ((rc = add_ring(r, devs, qs, R, 2 * (R - 1), P / R * sl[0], slots)))
      return rc;
    for (i = 0; i < R; i++)
      r->first_slot[k->p->dev_off[qs[i]] + t] = slots[i];
    return PP_OK;
  }
  /* group by node in order of first appearance (cost_model.c) */
  for (i = 0; i < R; i++) {
    int32_t node = k->c->dev_node[devs[i]];
    for (a = 0; a < nn && nodes[a] != node; a++)
      ;
    if (a == nn) {
      nodes[nn] = node;
      cnt[nn++] = 0;
    }
    node_of[i] = a;
    cnt[a]++;
  }
  kk = R / nn;
  for (a = 0; a < nn; a++) { /* members of node a: idx[a*kk ..] */
    int32_t f = 0;
    for (i = 0; i < R; i++)
      if (node_of[i] == a)
        idx[a * kk + f++] = i;
  }
  for (a = 0; a < nn; a++) { /* phase 1 and 3: inside node a */
    int32_t d[PPI_HIER_MAX_PER_NODE], qq[PPI_HIER_MAX_PER_NODE];
    for (j = 0; j < kk; j++) {
      d[j] = devs[idx[a * kk + j]];
      qq[j] = qs[idx[a * kk + j]];
    }
    if ((rc = add_ring(r, d, qq, kk, kk - 1, P / kk * sl[1], slots)))
      return rc;
    for (j = 0; j < kk; j++)
      p1[idx[a * kk + j]] = slots[j];
  }
  for (j = 0; j < kk; j++) { /* phase 2: the j-th member of every node */
    int32_t d[PPI_HIER_MAX_NODES], qq[PPI_HIER_MAX_NODES];
    for (a = 0; a < nn; a++) {
      d[a] = devs[idx[a * kk + j]];
      qq[a] = qs[idx[a * kk + j]];
    }
    if ((rc = add_ring(r, d, qq, nn, 2 * (nn - 1), P / kk / nn * sl[2], slots)))
      return rc;
    for (a = 0; a < nn; a++)
      p2[idx[a * kk + j]] = slots[a];
  }
  for (a = 0; a < nn; a++) {
    int32_t d[PPI_HIER_MAX_PER_NODE], qq[PPI_HIER_MAX_PER_NODE];
    for (j = 0; j < kk; j++) {
      d[j] = devs[idx[a * kk + j]];
      qq[j] = qs[idx[a * kk + j]];
    }
    if ((rc = add_ring(r, d, qq, kk, kk - 1, P / kk * sl[1], slots)))
      return rc;
    for (j = 0; j < kk; j++)
      p3[idx[a * kk + j]] = slots[j];
  }
  for (i = 0; i < R; i++) {
    PPI_VEC_AT(&r->slot_next, int32_t, p1[i]) = p2[i];
    PPI_VEC_AT(&r->slot_next, int32_t, p2[i]) = p3[i];
    r->first_slot[k->p->dev_off[qs[i]] + t] = p1[i];
  }
  return PP_OK;
}

static pp_status setup(struct run *r)
{
  struct ppi_cost *k = r->k;
  int32_t s, q, i, d, t, ns;
  int64_t slots = 0;
  pp_status rc;

  r->S = k->S;
  r->R = k->nrep;
  if (!PPI_ARENA_NEW(&r->ar, r->ctx, r->rs, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->mb_off, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->order, r->S) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->len, r->S) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->pos, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->running, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->upd_done, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->ar_done, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->run_kind, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->run_j, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->run_rec, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->bdone, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->ar_left, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->ar_last, r->R) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->need_f, r->S) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->need_b, r->S) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->in_off, r->S + 1) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->out_off, r->S + 1) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->in_e, k->ne) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->out_e, k->ne) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->busy, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->dev_last, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->dq_off, k->ndev + 1) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->live, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->static_b, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->peak_live, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->busy_ms, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->fb_ms, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->comm_ms, k->ndev) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->first_slot,
                     (size_t)k->p->dev_off[r->R]))
    return PP_ENOMEM;
  r->pat = k->p->pattern;
  r->T = k->p->p.period_ms;
  if (!PPI_ARENA_NEW(&r->ar, r->ctx, r->wake, r->R))
    return PP_ENOMEM;
  for (q = 0; q < r->R; q++)
    r->wake[q] = -1;
  for (s = 0; s < r->S; s++) {
    r->len[s] = 2 * k->gas[s];
    if (!PPI_ARENA_NEW(&r->ar, r->ctx, r->order[s], r->len[s]))
      return PP_ENOMEM;
    if (r->pat) {
      /* the pattern's order: forwards and backwards by j T + sigma */
      double sf = k->p->pat[4 * (size_t)s], sb = k->p->pat[4 * (size_t)s + 1];
      int64_t jf = 0, jb = 0, n = 0;
      while (n < r->len[s]) {
        /* equal times up to rounding: the backward first (pat_before) */
        bool fwd =
            jf < k->gas[s] &&
            (jb >= k->gas[s] || jf <= jb ||
             (double)jf * r->T + sf < (double)jb * r->T + sb - PAT_TIE * r->T);
        if (jf <= jb && jf < k->gas[s])
          fwd = true; /* a backward never before its own forward */
        r->order[s][n].kind = fwd ? PP_TASK_FWD : PP_TASK_BWD;
        r->order[s][n].micro_batch = (int32_t)(fwd ? jf++ : jb++);
        n++;
      }
    } else {
      ppi_sched_order(k->p->p.schedule, k->gas[s], k->inflight[s], r->order[s],
                      r->len[s]);
    }
    for (q = k->p->rep_off[s]; q < k->p->rep_off[s + 1]; q++) {
      r->rs[q] = s;
      r->mb_off[q] = slots;
      slots += k->gas[s];
    }
  }
  if (!PPI_ARENA_NEW(&r->ar, r->ctx, r->got_f, slots) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->got_b, slots) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->last_f, slots) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->last_b, slots) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->f_rec, slots))
    return PP_ENOMEM;
  for (i = 0; i < slots; i++)
    r->last_f[i] = r->last_b[i] = r->f_rec[i] = -1;
  /* stage edges by destination and by source */
  for (i = 0; i < k->ne; i++) {
    r->in_off[k->e[i].b + 1]++;
    r->out_off[k->e[i].a + 1]++;
  }
  /* a replica waits for every rank pair of each edge (cost.h) */
  for (i = 0; i < k->ne; i++) {
    r->need_f[k->e[i].b] += ppi_cost_npair(k, k->e[i].a, k->e[i].b);
    r->need_b[k->e[i].a] += ppi_cost_npair(k, k->e[i].a, k->e[i].b);
  }
  for (s = 0; s < r->S; s++) {
    r->in_off[s + 1] += r->in_off[s];
    r->out_off[s + 1] += r->out_off[s];
  }
  {
    int32_t *fi, *fo;
    if (!PPI_ARENA_NEW(&r->ar, r->ctx, fi, r->S) ||
        !PPI_ARENA_NEW(&r->ar, r->ctx, fo, r->S))
      return PP_ENOMEM;
    for (i = 0; i < k->ne; i++) {
      r->in_e[r->in_off[k->e[i].b] + fi[k->e[i].b]++] = i;
      r->out_e[r->out_off[k->e[i].a] + fo[k->e[i].a]++] = i;
    }
  }
  /* devices: the replicas on each, and the static memory */
  for (q = 0; q < r->R; q++)
    for (t = 0; t < rtp(r, q); t++)
      r->dq_off[rep_dev(r, q, t) + 1]++;
  for (d = 0; d < k->ndev; d++) {
    r->dq_off[d + 1] += r->dq_off[d];
    r->dev_last[d] = -1;
  }
  if (!PPI_ARENA_NEW(&r->ar, r->ctx, r->dq, r->dq_off[k->ndev]))
    return PP_ENOMEM;
  {
    int32_t *fill;
    if (!PPI_ARENA_NEW(&r->ar, r->ctx, fill, k->ndev))
      return PP_ENOMEM;
    for (q = 0; q < r->R; q++)
      for (t = 0; t < rtp(r, q); t++) {
        d = rep_dev(r, q, t);
        s = r->rs[q];
        r->dq[r->dq_off[d] + fill[d]++] = q;
        if (fill[d] == 1)
          r->static_b[d] = (double)k->cp.reserve_bytes;
        r->static_b[d] +=
            k->state[s] + 2 * (k->xin[s] + k->xout[s]) + k->keep[s];
      }
  }
  /* allreduce rings */
  for (q = 0; q < r->R; q++) {
    r->ar_last[q] = -1;
    for (t = 0; t < rtp(r, q); t++)
      r->first_slot[k->p->dev_off[q] + t] = -1;
  }
  for (s = 0; s < r->S; s++) {
    if (ppi_cost_nrep(k, s) < 2 || k->param[s] <= 0)
      continue;
    for (q = k->p->rep_off[s]; q < k->p->rep_off[s + 1]; q++)
      r->ar_left[q] = ppi_cost_tp(k, s);
    for (t = 0; t < ppi_cost_tp(k, s); t++)
      if ((rc = build_allreduce(r, s, t)))
        return rc;
  }
  ns = (int32_t)r->slot_dev.n;
  if (!PPI_ARENA_NEW(&r->ar, r->ctx, r->sent, ns) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->recvd, ns) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->deliv, ns) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->ready, ns) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->sdone, ns) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->slot_last, ns) ||
      !PPI_ARENA_NEW(&r->ar, r->ctx, r->ready_at, ns))
    return PP_ENOMEM;
  /* rings in closed form where their channels are theirs alone: channel
  ** mode (links share), each device in one stage replica (so no other
  ** ring, phase or stage transfer crosses a ring's device pair while it
  ** runs), and no record of every step wanted */
  r->ring_closed = !r->record && k->cp.network == PP_NET_CHANNELS;
  if (r->ring_closed) {
    int32_t *use = ppi_calloc(r->ctx, (size_t)k->ndev, sizeof *use);
    if (!use)
      return PP_ENOMEM;
    for (q = 0; q < r->R && r->ring_closed; q++)
      for (t = 0; t < rtp(r, q) && r->ring_closed; t++)
        r->ring_closed = ++use[rep_dev(r, q, t)] == 1;
    ppi_free(r->ctx, use, (size_t)k->ndev * sizeof *use);
  }
  for (i = 0; i < ns; i++)
    r->slot_last[i] = -1;
  if (k->cp.network == PP_NET_LINKS) {
    if ((rc = ppi_routes_init(r->ctx, &r->rt, k->c)))
      return rc;
    r->nres_links = 2 * k->c->nlink;
  }
  return PP_OK;
}

static pp_status run_loop(struct run *r)
{
  int32_t q;
  pp_status rc;
  for (q = 0; q < r->R; q++)
    if ((rc = try_start(r, q)))
      return rc;
  while (r->heap.n > 0) {
    struct ppi_heap_el e;
    int32_t type, ver;
    /* TUNING: the clock every 4096 events (well under a millisecond of
    ** events; a clock read costs about 20 ns) */
    if (r->stop && (++r->popped & 4095) == 0 && ppi_stopped(r->stop))
      return ppi_fail(r->ctx, PP_ECANCELED,
                      "simulate: stopped at %.0f ms of simulated time (the "
                      "time limit, or an interrupt)",
                      r->now);
    e = ppi_heap_pop(&r->heap);
    type = e.a;
    ver = e.b;
    /* a flow rescheduled since: skip it before it moves the clock (a
    ** stale finish is later than the real one when the rate rose) */
    if (type == EV_FLOW && PPI_VEC_AT(&r->xf, struct xfer, e.id).ver != ver)
      continue;
    r->now = e.key;
    if (type == EV_COMP) {
      if ((rc = comp_done(r, (int32_t)e.id)))
        return rc;
    } else if (type == EV_XFER) {
      struct chan *ch = &PPI_VEC_AT(&r->ch, struct chan, ver);
      ch->busy = false;
      ch->last_rec = PPI_VEC_AT(&r->xf, struct xfer, e.id).rec;
      if ((rc = deliver(r, e.id)) || (rc = chan_start(r, ver)))
        return rc;
    } else if (type == EV_WAKE) {
      if ((rc = try_start(r, (int32_t)e.id)))
        return rc;
    } else if (type == EV_RELEASE) {
      if ((rc = dispatch(r, e.id)))
        return rc;
    } else if (type == EV_FLOWSTART) {
      if ((rc = link_activate(r, e.id)))
        return rc;
    } else if (type == EV_RING) { /* a closed-form ring member is done */
      int32_t g = (int32_t)e.id;
      int32_t steps = PPI_VEC_AT(&r->rings, struct ring,
                                 PPI_VEC_AT(&r->slot_ring, int32_t, g))
                          .steps;
      r->sent[g] = r->deliv[g] = r->recvd[g] = steps;
      if ((rc = ring_check_done(r, g, -1)))
        return rc;
    } else {
      struct xfer *x = &PPI_VEC_AT(&r->xf, struct xfer, e.id);
      int32_t i;
      int64_t last;
      for (i = 0; i < x->nres; i++)
        r->rescount[PPI_VEC_AT(&r->res, int32_t, x->res_off + i)].n--;
      r->comm_ms[x->src] += r->now - x->t0; /* with the record or not */
      if (x->rec >= 0 && r->record)
        PPI_VEC_AT(&r->ev, pp_sim_event, x->rec).end_ms = r->now;
      last = PPI_VEC_AT(&r->active, int64_t, r->active.n - 1);
      PPI_VEC_AT(&r->active, int64_t, x->active_pos) = last;
      PPI_VEC_AT(&r->xf, struct xfer, last).active_pos = x->active_pos;
      r->active.n--;
      x->active_pos = -1;
      if ((rc = deliver(r, e.id)) || (rc = rates(r, e.id)))
        return rc;
    }
  }
  for (q = 0; q < r->R; q++)
    if (!r->upd_done[q]) {
      int32_t s = r->rs[q];
      const char *what = "its gradient allreduce";
      int64_t mb = -1;
      if (r->pos[q] < r->len[s]) {
        const pp_sched_op *op = &r->order[s][r->pos[q]];
        what = op->kind == PP_TASK_FWD ? "the activations" : "the gradients";
        mb = q - r->k->p->rep_off[s] +
             (int64_t)op->micro_batch * ppi_cost_nrep(r->k, s);
      }
      /* sched.c proves the orders never block (feedable()) */
      return ppi_fail(r->ctx, PP_EINTERNAL,
                      "%s: internal error, please report it: the %s "
                      "schedule blocked: stage %d, replica %d waits forever "
                      "for %s of micro-batch %lld",
                      r->k->p->source, pp_schedule_name(r->k->p->p.schedule),
                      (int)s, (int)(q - r->k->p->rep_off[s]), what,
                      (long long)mb);
    }
  return PP_OK;
}

/* ---- results ---------------------------------------------------------- */

static int cmp_ev(const void *x, const void *y)
{
  const pp_sim_event *a = *(pp_sim_event *const *)x,
                     *b = *(pp_sim_event *const *)y;
  if (a->start_ms != b->start_ms)
    return a->start_ms < b->start_ms ? -1 : 1;
  return (a > b) - (a < b); /* record order */
}

static int cmp_mem(const void *x, const void *y)
{
  const struct ppi_memsample *a = x, *b = y;
  if (a->t != b->t)
    return a->t < b->t ? -1 : 1;
  return (a > b) - (a < b);
}

static pp_status finish(struct run *r, struct pp_sim *out)
{
  struct ppi_cost *k = r->k;
  int64_t n = (int64_t)r->ev.n, i, *newidx = NULL, at = -1, c;
  pp_sim_event **ptr = NULL;
  pp_status rc = PP_OK;
  double worst = -1;
  int32_t d;

  out->ndev = k->ndev;
  out->S = k->S;
  out->sched = k->p->p.schedule;
  out->precision = k->prec;
  out->engine = k->engine;
  out->zero = k->zero;
  out->net = k->cp.network;
  out->sum.iteration_ms = r->now;
  out->sum.nevents = r->ntask;
  if (!(out->dev = ppi_arena_alloc(&out->arena, r->ctx, (size_t)k->ndev,
                                   sizeof *out->dev)) ||
      !(out->dev_name = ppi_arena_alloc(&out->arena, r->ctx, (size_t)k->ndev,
                                        sizeof *out->dev_name)) ||
      !(out->plan_src = ppi_arena_strdup(&out->arena, r->ctx, k->p->source)) ||
      !(out->model_name = ppi_arena_strdup(&out->arena, r->ctx, k->m->name)) ||
      !(out->cluster_name = ppi_arena_strdup(&out->arena, r->ctx, k->c->name)))
    return PP_ENOMEM;
  out->sum.fits = 1;
  out->sum.worst_device = -1;
  for (d = 0; d < k->ndev; d++) {
    pp_sim_device *x = &out->dev[d];
    if (!(out->dev_name[d] =
              ppi_arena_strdup(&out->arena, r->ctx, k->c->dev_name[d])))
      return PP_ENOMEM;
    x->used = r->dq_off[d + 1] > r->dq_off[d];
    x->capacity_bytes = pp_cluster_type_memory(k->c, k->c->dev_type[d]);
    if (!x->used)
      continue;
    x->busy_ms = r->busy_ms[d];
    x->idle_ms = r->now - r->busy_ms[d];
    x->bubble_ms = r->last_bwd_end - r->fb_ms[d];
    x->comm_ms = r->comm_ms[d];
    x->peak_memory_bytes = r->static_b[d] + r->peak_live[d];
    {
      /* the engine's transients, slack and runtime, or a calibration's
      ** (cost_model.c; under "generic" and no calibration all 0) */
      pp_device_memory dm;
      double trans = 0;
      int32_t j;
      for (j = r->dq_off[d]; j < r->dq_off[d + 1]; j++)
        if (k->transient[r->rs[r->dq[j]]] > trans)
          trans = k->transient[r->rs[r->dq[j]]];
      memset(&dm, 0, sizeof dm);
      dm.reserve_bytes = (double)k->cp.reserve_bytes;
      x->peak_memory_bytes =
          ppi_cost_device_memory(k, d, r->static_b[d] - dm.reserve_bytes, 0,
                                 r->peak_live[d], trans, &dm);
      x->spread = dm.spread;
      x->calibrated = dm.calibrated;
    }
    if (x->peak_memory_bytes > (double)x->capacity_bytes)
      out->sum.fits = 0;
    if (x->peak_memory_bytes / (double)x->capacity_bytes > worst) {
      worst = x->peak_memory_bytes / (double)x->capacity_bytes;
      out->sum.worst_device = d;
    }
  }
  if (!r->record)
    return PP_OK;
  /* critical path, before sorting: from the last event back */
  for (i = 0; i < n; i++)
    if (at < 0 || PPI_VEC_AT(&r->ev, pp_sim_event, i).end_ms >=
                      PPI_VEC_AT(&r->ev, pp_sim_event, at).end_ms)
      at = i;
  for (c = 0, i = at; i >= 0; i = PPI_VEC_AT(&r->pred, int64_t, i))
    c++;
  out->ev =
      ppi_arena_alloc(&out->arena, r->ctx, (size_t)n + 1, sizeof *out->ev);
  out->crit =
      ppi_arena_alloc(&out->arena, r->ctx, (size_t)c + 1, sizeof *out->crit);
  out->mem =
      ppi_arena_alloc(&out->arena, r->ctx, r->mem.n + 1, sizeof *out->mem);
  ptr = ppi_alloc(r->ctx, ((size_t)n + 1) * sizeof *ptr);
  newidx = ppi_alloc(r->ctx, ((size_t)n + 1) * sizeof *newidx);
  if (!out->ev || !out->crit || !out->mem || !ptr || !newidx) {
    rc = PP_ENOMEM;
    goto done;
  }
  for (i = 0; i < n; i++)
    ptr[i] = &PPI_VEC_AT(&r->ev, pp_sim_event, i);
  qsort(ptr, (size_t)n, sizeof *ptr, cmp_ev);
  for (i = 0; i < n; i++) {
    out->ev[i] = *ptr[i];
    newidx[ptr[i] - (pp_sim_event *)r->ev.data] = i;
  }
  out->nev = n;
  out->ncrit = c;
  for (i = at; i >= 0; i = PPI_VEC_AT(&r->pred, int64_t, i))
    out->crit[--c] = newidx[i];
  memcpy(out->mem, r->mem.data, r->mem.n * sizeof *out->mem);
  out->nmem = (int64_t)r->mem.n;
  qsort(out->mem, r->mem.n, sizeof *out->mem, cmp_mem);
done:
  ppi_free(r->ctx, ptr, ((size_t)n + 1) * sizeof *ptr);
  ppi_free(r->ctx, newidx, ((size_t)n + 1) * sizeof *newidx);
  return rc;
}

static void run_free(struct run *r)
{
  pp_ctx *ctx = r->ctx;
  ppi_heap_free(ctx, &r->heap);
  ppi_raw_free(ppi_ctx_alloc(ctx), r->rescount,
               (size_t)r->rescap * sizeof *r->rescount);
  ppi_vec_free(ctx, &r->xf);
  ppi_i64map_free(ctx, &r->chmap);
  ppi_vec_free(ctx, &r->ch);
  ppi_vec_free(ctx, &r->rings);
  ppi_vec_free(ctx, &r->slot_ring);
  ppi_vec_free(ctx, &r->slot_dev);
  ppi_vec_free(ctx, &r->slot_next);
  ppi_vec_free(ctx, &r->slot_q);
  ppi_vec_free(ctx, &r->res);
  ppi_i64map_free(ctx, &r->vmap);
  ppi_vec_free(ctx, &r->vres_bw);
  ppi_vec_free(ctx, &r->active);
  ppi_vec_free(ctx, &r->ev);
  ppi_vec_free(ctx, &r->pred);
  ppi_vec_free(ctx, &r->mem);
  ppi_routes_free(ctx, &r->rt);
  ppi_arena_free(&r->ar);
}

pp_status pp_simulate(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                      const pp_cluster *c, const pp_cost_params *cp,
                      pp_sim **out)
{
  return ppi_simulate_until(ctx, p, m, c, cp, NULL, out);
}

pp_status ppi_simulate_until(pp_ctx *ctx, const pp_plan *p, const pp_model *m,
                             const pp_cluster *c, const pp_cost_params *cp,
                             const struct ppi_stop *stop, pp_sim **out)
{
  struct run r;
  struct ppi_cost k;
  struct pp_sim *s = NULL;
  pp_eval *ev = NULL;
  pp_eval_summary es;
  pp_cost_params cpp;
  pp_status rc;

  if (!ctx || !p || !m || !c || !out)
    return ctx ? ppi_fail(ctx, PP_EINVAL, "pp_simulate: NULL argument")
               : PP_EINVAL;
  *out = NULL;
  if (cp)
    cpp = *cp;
  else
    pp_cost_params_init(&cpp);
  { /* refused before anything grows with the global batch */
    int64_t tasks = 0;
    int32_t st;
    for (st = 0; st < pp_plan_nstage(p); st++)
      tasks += (int64_t)pp_plan_nreplica(p, st) *
               pp_plan_stage_micro_batches(p, st) * (p->p.recompute ? 3 : 2);
    if (tasks > PPI_MAX_SIM_TASKS)
      return ppi_fail(ctx, PP_ELIMIT,
                      "simulate: the plan has %lld compute tasks (stages x "
                      "replicas x micro-batches x passes), more than the "
                      "%lld simulated (about 340 bytes each); evaluate "
                      "prices it, or lower the global batch",
                      (long long)tasks, (long long)PPI_MAX_SIM_TASKS);
  }
  if ((rc = pp_evaluate(ctx, p, m, c, &cpp, &ev)))
    return rc;
  pp_eval_get_summary(ev, &es);
  pp_eval_destroy(ev);
  if ((rc = ppi_cost_init(ctx, &k, p, m, c, &cpp)))
    return rc;
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.k = &k;
  r.stop = stop;
  r.record = cpp.record != 0;
  ppi_arena_init(&r.ar, ppi_ctx_alloc(ctx));
  ppi_heap_init(&r.heap);
  ppi_vec_init(&r.xf, sizeof(struct xfer));
  ppi_i64map_init(&r.chmap);
  ppi_vec_init(&r.ch, sizeof(struct chan));
  ppi_vec_init(&r.rings, sizeof(struct ring));
  ppi_vec_init(&r.slot_ring, sizeof(int32_t));
  ppi_vec_init(&r.slot_dev, sizeof(int32_t));
  ppi_vec_init(&r.slot_next, sizeof(int32_t));
  ppi_vec_init(&r.slot_q, sizeof(int32_t));
  ppi_vec_init(&r.res, sizeof(int32_t));
  ppi_i64map_init(&r.vmap);
  ppi_vec_init(&r.vres_bw, sizeof(double));
  ppi_vec_init(&r.active, sizeof(int64_t));
  ppi_vec_init(&r.ev, sizeof(pp_sim_event));
  ppi_vec_init(&r.pred, sizeof(int64_t));
  ppi_vec_init(&r.mem, sizeof(struct ppi_memsample));
  if ((rc = setup(&r)) || (rc = run_loop(&r)))
    goto done;
  if (!(s = ppi_calloc(ctx, 1, sizeof *s))) {
    rc = PP_ENOMEM;
    goto done;
  }
  ppi_arena_init(&s->arena, ppi_ctx_alloc(ctx));
  if ((rc = finish(&r, s)))
    goto done;
  s->sum.lower_bound_ms = es.lower_bound_ms;
  s->sum.analytic_ms = es.iteration_ms;
  s->sum.time_spread = es.time_spread;
  s->sum.calibrated = es.calibrated;
  *out = s;
  s = NULL;
done:
  pp_sim_destroy(s);
  run_free(&r);
  ppi_cost_free(ctx, &k);
  return rc;
}

void pp_sim_destroy(pp_sim *s)
{
  if (s)
    ppi_arena_free_owner(&s->arena, s, sizeof *s);
}

pp_status pp_sim_get_summary(const pp_sim *s, pp_sim_summary *out)
{
  if (!s || !out)
    return PP_EINVAL;
  *out = s->sum;
  return PP_OK;
}

pp_status pp_sim_device_get(const pp_sim *s, int32_t d, pp_sim_device *out)
{
  if (!s || !out || d < 0 || d >= s->ndev)
    return PP_EINVAL;
  *out = s->dev[d];
  return PP_OK;
}

int64_t pp_sim_nevent(const pp_sim *s)
{
  return s ? s->nev : 0;
}

pp_status pp_sim_event_get(const pp_sim *s, int64_t i, pp_sim_event *out)
{
  if (!s || !out || i < 0 || i >= s->nev)
    return PP_EINVAL;
  *out = s->ev[i];
  return PP_OK;
}

const int64_t *pp_sim_critical_path(const pp_sim *s, int64_t *n)
{
  if (!s) {
    if (n)
      *n = 0;
    return NULL;
  }
  if (n)
    *n = s->ncrit;
  return s->crit;
}
