/* mt_gen.c - the tracelet generator: instances per slot, a heap merge in time order, loss, skew */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "maketrace/mt_int.h"

/* Paper section 7.1.1. Each tracelet has `instances` slots; a slot runs one
 * instance of the tracelet at a time, waits a uniform think time after its last
 * message, and starts the next. An instance is generated whole into the slot's
 * buffer and sorted; the slots are merged by a binary heap keyed by (time of the
 * next message, slot index), so the output is in time order and the same seed
 * gives the same bytes. Each slot draws from its own PRNG stream, so a run cut
 * short by a message limit is a prefix of the longer run.
 *
 * After the merge come, in this order: the ground-truth statistics (on what the
 * system really sent), the loss model (the sniffer sees true times), the skew
 * model (the sender's clock stamps the message) with a reorder heap that holds
 * messages back only as long as the skew requires, and the writer. */

#define MAX_INSTANCE_MSGS 10000000u
#define PROGRESS_EVERY 65536u

struct mt_msg {
	int64_t ts_ns;
	uint64_t id;            /* call id, 0 for MSG */
	uint32_t from, to;
	uint32_t seq;           /* order of generation, breaks ties in the sort */
	uint32_t op;
};

struct slot {
	uint32_t tl;
	uint32_t root;          /* origin node, BB_NONE if the tracelet has none */
	struct bb_mt_rng rng;
	struct mt_msg *buf;
	uint32_t n, cap, pos;
	uint64_t inst;          /* number of the instance in buf, given at its first message */
	int64_t end_ns;         /* when the instance in buf ended */
	int64_t next_ns;        /* ordered runs: the slot's next arrival */
};

/* Ordered runs: the instances in flight. */
struct inflight {
	uint64_t num;           /* its number, 0 until its first message is sent */
	uint32_t tl;
	uint32_t left;          /* messages not yet sent; 0: the entry is free */
};

/* A message on its way out (through the reorder heap when skew is on), or,
 * in an ordered run, waiting to be sent (inst: its entry in the instances in
 * flight). */
struct ev {
	int64_t ts_ns;
	uint64_t seq;
	uint64_t id;
	uint64_t inst;
	uint32_t from, to, tl, op;
};

/* A binary heap of messages by (time, seq). */
struct evheap {
	struct ev *a;
	size_t n, cap;
};

struct open_call {
	int64_t start_ns;
	uint64_t id;
};

struct open_list {
	struct open_call *c;
	uint32_t n, cap;
};

struct bb_mt_gen {
	const struct bb_mt_config *cfg;
	struct bb_mt_opts o;
	uint64_t seed;
	int64_t t0_ns, tend_ns;    /* no instance starts at or after tend_ns */
	uint64_t max_msgs;
	int no_ids;
	struct bb_mt_loss loss;
	int loss_on;
	int64_t *off_ns;           /* per node */
	double *drift;
	int skew_on;
	const char **names;        /* node names, borrowed from cfg */

	struct slot *slots;
	uint32_t nslots;
	uint32_t *heap;
	uint32_t nheap;
	uint64_t next_id;
	uint64_t *instances;       /* instances with a message generated, per tracelet */
	const char **tl_names;
	int overflow;              /* an instance exceeded MAX_INSTANCE_MSGS */
	uint32_t overflow_tl;

	struct evheap rh;          /* reorder heap */
	uint64_t evseq;

	/* ordered runs (docs/maketrace.md, "Arrivals and worker pools") */
	struct evheap pq;          /* pending messages */
	uint64_t pseq;
	struct inflight *fl;       /* instances in flight */
	uint32_t nfl, capfl;
	uint32_t *flfree;          /* free entries of fl */
	uint32_t nflfree;
	int64_t **busy;            /* per node with a pool: each worker's busy-until time */
	uint64_t pool_calls, pool_waited;
	double pool_lag_sum;
	int64_t pool_lag_max;

	char *pathbuf;
	struct bb_writer *w;
	int werr;
	struct bb_err *err;
	int ran;

	/* statistics */
	uint64_t generated, written;
	int64_t first_ns, last_ns;
	struct open_list *open;    /* per node: calls into it not yet returned */
	double par_sum;
	uint64_t par_n;
	double *open_ns;           /* per node: sum of the durations of the calls into it */
	uint8_t *recv, *sends;     /* per node: receives calls, makes calls */
	int64_t gen_first, gen_last; /* first and last generated message (true time) */
	uint8_t *node_seen;
	uint64_t *edges;           /* open-addressing set of from<<32|to, +1 */
	size_t nedges, capedges;
};

/* ---- small helpers ---- */

static int64_t draw(struct bb_mt_rng *r, const struct mt_delay *d)
{
	if (!d->n)
		return 0;
	const struct mt_comp *c = d->c;
	if (d->n > 1) {
		double u = bb_mt_rng_unit(r);
		uint32_t i = 0;
		while (i + 1 < d->n && u >= c[i].cum)
			i++;
		c = &c[i];
	}
	double x;
	if (c->dist == MT_LOGNORMAL)
		x = exp(c->mu + c->sigma * bb_mt_rng_gauss(r));
	else if (c->dist == MT_EXP)
		x = -c->mean_ns * log1p(-bb_mt_rng_unit(r));
	else
		x = bb_mt_rng_gauss_pos(r, c->mean_ns, c->sd_ns);
	return x >= 9e18 ? INT64_C(9000000000000000000) : (int64_t)llround(x);
}

/* Uniform integer in [lo, hi]. */
static uint32_t uniform_count(struct bb_mt_rng *r, uint32_t lo, uint32_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + (uint32_t)((double)(hi - lo + 1) * bb_mt_rng_unit(r));
}

static int64_t think(struct slot *s, const struct mt_tracelet *tl)
{
	if (tl->think.n)
		return draw(&s->rng, &tl->think);
	if (tl->think_max_ns <= tl->think_min_ns)
		return tl->think_min_ns;
	double span = (double)(tl->think_max_ns - tl->think_min_ns);
	return tl->think_min_ns + (int64_t)llround(span * bb_mt_rng_unit(&s->rng));
}

static size_t u64_dec(uint64_t v, char *out)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	return n;
}

/* ---- generating one instance ---- */

struct thread {
	int64_t t;
	uint32_t node;
};

static void put(struct bb_mt_gen *g, struct slot *s, uint32_t op, uint32_t from, uint32_t to,
                int64_t ts, uint64_t id)
{
	if (s->n >= MAX_INSTANCE_MSGS) {
		g->overflow = 1;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->buf = bb_xrealloc(s->buf, s->cap * sizeof(*s->buf));
	}
	s->buf[s->n] = (struct mt_msg){ts, id, from, to, s->n, op};
	s->n++;
}

/* A call into a node with a worker pool arrives at *t: it takes the worker
 * that frees first and its handler starts when that worker is free (*t moves
 * on by the wait). Returns the worker's busy-until time, to be set to the
 * handler's return, or NULL for a node without a pool. The worker is marked
 * busy without end meanwhile, so a handler that calls into its own node
 * takes another worker (and does not wait when none is left). */
static int64_t *pool_take(struct bb_mt_gen *g, uint32_t node, int64_t *t)
{
	if (!g->cfg->workers || !g->cfg->workers[node])
		return NULL;
	int64_t *w = g->busy[node];
	uint32_t k = g->cfg->workers[node], best = 0;
	for (uint32_t i = 1; i < k; i++)
		if (w[i] < w[best])
			best = i;
	g->pool_calls++;
	if (w[best] != INT64_MAX && w[best] > *t) {
		int64_t lag = w[best] - *t;
		g->pool_waited++;
		g->pool_lag_sum += (double)lag;
		if (lag > g->pool_lag_max)
			g->pool_lag_max = lag;
		*t = w[best];
	}
	w[best] = INT64_MAX;
	return &w[best];
}

static void run_seq(struct bb_mt_gen *g, struct slot *s, const struct mt_seq *seq,
                    struct thread *th);

static void run_step(struct bb_mt_gen *g, struct slot *s, const struct mt_step *st,
                     struct thread *th)
{
	switch (st->kind) {
	case MT_CALL: {
		int64_t t = bb_mt_time_add(th->t, draw(&s->rng, &st->delay));
		uint64_t id = ++g->next_id;
		put(g, s, BB_CALL, th->node, st->to, t, id);
		struct thread callee = {t, st->to};
		int64_t *worker = pool_take(g, st->to, &callee.t);
		run_seq(g, s, &st->body, &callee);
		t = bb_mt_time_add(callee.t, draw(&s->rng, &st->ret));
		if (worker)
			*worker = t; /* busy until the return is sent */
		put(g, s, BB_RET, st->to, th->node, t, id);
		th->t = t;
		break;
	}
	case MT_REPEAT: {
		uint32_t k = uniform_count(&s->rng, st->rmin, st->rmax);
		int64_t join = th->t;
		for (uint32_t i = 0; i < k && !g->overflow; i++) {
			if (!st->rpar) {
				run_seq(g, s, &st->body, th);
				continue;
			}
			struct thread b = *th;
			run_seq(g, s, &st->body, &b);
			if (b.t > join)
				join = b.t;
		}
		if (st->rpar)
			th->t = join;
		break;
	}
	case MT_MSG: {
		uint32_t from = st->from == BB_NONE ? th->node : st->from;
		th->t = bb_mt_time_add(th->t, draw(&s->rng, &st->delay));
		put(g, s, BB_MSG, from, st->to, th->t, 0);
		th->node = st->to;
		break;
	}
	case MT_WAIT:
		th->t = bb_mt_time_add(th->t, draw(&s->rng, &st->delay));
		break;
	case MT_PAR: {
		int64_t join = th->t;
		for (uint32_t i = 0; i < st->nalt; i++) {
			struct thread b = *th;
			run_seq(g, s, &st->alt[i], &b);
			if (b.t > join)
				join = b.t;
		}
		th->t = join;
		break;
	}
	case MT_CHOOSE: {
		double u = bb_mt_rng_unit(&s->rng);
		uint32_t i = 0;
		while (i + 1 < st->nalt && u >= st->cum[i])
			i++;
		run_seq(g, s, &st->alt[i], th);
		break;
	}
	}
}

static void run_seq(struct bb_mt_gen *g, struct slot *s, const struct mt_seq *seq,
                    struct thread *th)
{
	for (uint32_t i = 0; i < seq->n && !g->overflow; i++)
		run_step(g, s, &seq->s[i], th);
}

static int msg_before(const struct mt_msg *a, const struct mt_msg *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static int msg_cmp(const void *pa, const void *pb)
{
	const struct mt_msg *a = pa, *b = pb;
	return msg_before(a, b) ? -1 : msg_before(b, a) ? 1 : 0;
}

static void sort_instance(struct slot *s)
{
	uint32_t i = 1;
	while (i < s->n && !msg_before(&s->buf[i], &s->buf[i - 1]))
		i++;
	if (i >= s->n)
		return; /* already in order: no parallel branches, the usual case */
	if (s->n > 64) {
		qsort(s->buf, s->n, sizeof(*s->buf), msg_cmp);
		return;
	}
	for (; i < s->n; i++) {
		struct mt_msg m = s->buf[i];
		uint32_t j = i;
		while (j > 0 && msg_before(&m, &s->buf[j - 1])) {
			s->buf[j] = s->buf[j - 1];
			j--;
		}
		s->buf[j] = m;
	}
}

/* Generates instances in slot s from start_ns on until one sends a message.
 * Returns 1 with the instance in s->buf, 0 when the slot is done. */
static int fill(struct bb_mt_gen *g, struct slot *s, int64_t start_ns)
{
	const struct mt_tracelet *tl = &g->cfg->tl[s->tl];
	for (;;) {
		if (start_ns >= g->tend_ns || g->overflow)
			return 0;
		s->n = s->pos = 0;
		struct thread th = {start_ns, s->root};
		run_seq(g, s, &tl->body, &th);
		s->end_ns = th.t;
		if (g->overflow) {
			g->overflow_tl = s->tl;
			return 0;
		}
		if (s->n) {
			sort_instance(s);
			return 1;
		}
		start_ns = bb_mt_time_add(s->end_ns, think(s, tl));
	}
}

/* ---- the slot heap, keyed by (next message time, or next arrival, slot index) ---- */

static int slot_less(const struct bb_mt_gen *g, uint32_t a, uint32_t b)
{
	/* an ordered run keys its slots by their next arrival (run_ordered) */
	const struct slot *sa = &g->slots[a], *sb = &g->slots[b];
	int64_t ta = g->cfg->ordered ? sa->next_ns : sa->buf[sa->pos].ts_ns;
	int64_t tb = g->cfg->ordered ? sb->next_ns : sb->buf[sb->pos].ts_ns;
	return ta < tb || (ta == tb && a < b);
}

static void heap_down(struct bb_mt_gen *g, uint32_t i)
{
	uint32_t *h = g->heap, n = g->nheap, x = h[i];
	for (;;) {
		uint32_t l = 2 * i + 1, m;
		if (l >= n)
			break;
		m = (l + 1 < n && slot_less(g, h[l + 1], h[l])) ? l + 1 : l;
		if (!slot_less(g, h[m], x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

/* ---- the reorder heap for skewed messages, keyed by (time, arrival) ---- */

static int ev_less(const struct ev *a, const struct ev *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static void ev_push(struct evheap *h, const struct ev *e)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->a = bb_xrealloc(h->a, h->cap * sizeof(*h->a));
	}
	size_t i = h->n++;
	while (i > 0 && ev_less(e, &h->a[(i - 1) / 2])) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = *e;
}

static void ev_pop(struct evheap *h)
{
	struct ev x = h->a[--h->n];
	size_t i = 0, n = h->n;
	for (;;) {
		size_t l = 2 * i + 1, m;
		if (l >= n)
			break;
		m = (l + 1 < n && ev_less(&h->a[l + 1], &h->a[l])) ? l + 1 : l;
		if (!ev_less(&h->a[m], &x))
			break;
		h->a[i] = h->a[m];
		i = m;
	}
	if (n)
		h->a[i] = x;
}

/* ---- statistics ---- */

static void edge_add(struct bb_mt_gen *g, uint32_t from, uint32_t to)
{
	uint64_t key = ((uint64_t)from << 32 | to) + 1;
	if (2 * (g->nedges + 1) > g->capedges) {
		size_t ncap = g->capedges ? 2 * g->capedges : 64;
		uint64_t *t = bb_xcalloc(ncap, sizeof(*t));
		for (size_t i = 0; i < g->capedges; i++) {
			if (!g->edges[i])
				continue;
			size_t j = (size_t)(g->edges[i] * UINT64_C(0x9e3779b97f4a7c15) >> 20) & (ncap - 1);
			while (t[j])
				j = (j + 1) & (ncap - 1);
			t[j] = g->edges[i];
		}
		free(g->edges);
		g->edges = t;
		g->capedges = ncap;
	}
	size_t j = (size_t)(key * UINT64_C(0x9e3779b97f4a7c15) >> 20) & (g->capedges - 1);
	while (g->edges[j]) {
		if (g->edges[j] == key)
			return;
		j = (j + 1) & (g->capedges - 1);
	}
	g->edges[j] = key;
	g->nedges++;
}

/* Candidate parents of a call, as the nesting algorithm finds them (paper
 * figure 4): when the child's return is seen, the calls into the child's caller
 * that are still open and began before the child's call. */
static void par_msg(struct bb_mt_gen *g, const struct mt_msg *m)
{
	if (g->gen_first == BB_NO_TIME)
		g->gen_first = m->ts_ns;
	g->gen_last = m->ts_ns;
	if (m->op == BB_CALL) {
		g->recv[m->to] = 1;
		g->sends[m->from] = 1;
		struct open_list *l = &g->open[m->to];
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 8;
			l->c = bb_xrealloc(l->c, l->cap * sizeof(*l->c));
		}
		l->c[l->n++] = (struct open_call){m->ts_ns, m->id};
	} else if (m->op == BB_RET) {
		struct open_list *l = &g->open[m->from];
		int64_t start = 0;
		uint32_t i;
		for (i = 0; i < l->n; i++)
			if (l->c[i].id == m->id)
				break;
		if (i == l->n)
			return; /* its call fell before a message limit: cannot happen, but harmless */
		start = l->c[i].start_ns;
		l->c[i] = l->c[--l->n];
		g->open_ns[m->from] += (double)(m->ts_ns - start);
		const struct open_list *p = &g->open[m->to];
		uint32_t cand = 0;
		for (uint32_t k = 0; k < p->n; k++)
			cand += p->c[k].start_ns < start;
		if (cand) {
			g->par_sum += cand;
			g->par_n++;
		}
	}
}

/* ---- output ---- */

static void write_ev(struct bb_mt_gen *g, const struct ev *e)
{
	if (g->werr)
		return;
	char idbuf[24];
	const char *id = NULL;
	size_t idlen = 0;
	if (e->op != BB_MSG && !g->no_ids) {
		idlen = u64_dec(e->id, idbuf);
		id = idbuf;
	}
	const struct mt_tracelet *tl = &g->cfg->tl[e->tl];
	memcpy(g->pathbuf, tl->name, tl->name_len);
	g->pathbuf[tl->name_len] = '.';
	size_t plen = tl->name_len + 1 + u64_dec(e->inst, g->pathbuf + tl->name_len + 1);
	struct bb_attr attr = {"path", g->pathbuf, 4, (uint32_t)plen};
	if (bb_writer_put(g->w, e->ts_ns, (enum bb_op)e->op, g->names[e->from], g->names[e->to], id,
	                  idlen, &attr, 1, g->err) != 0) {
		g->werr = 1;
		return;
	}
	if (!g->written)
		g->first_ns = e->ts_ns;
	g->last_ns = e->ts_ns;
	g->written++;
	if (g->o.stats) {
		g->node_seen[e->from] = g->node_seen[e->to] = 1;
		edge_add(g, e->from, e->to);
	}
}

/* The earliest timestamp any message sent at true time t_ns or later can get. */
static int64_t skew_bound(const struct bb_mt_gen *g, int64_t t_ns)
{
	int64_t lo = 0;
	uint32_t n = bb_intern_count(g->cfg->nodes);
	for (uint32_t i = 0; i < n; i++) {
		if (!g->off_ns[i] && g->drift[i] == 0)
			continue;
		int64_t d = bb_mt_skew_shift(g->off_ns[i], g->drift[i], g->t0_ns, t_ns);
		if (d < lo)
			lo = d;
	}
	return bb_mt_time_add(t_ns, lo);
}

/* Sends message m of an instance of tracelet tl numbered *inst; first: its
 * first message, which gives it its number. */
static void emit(struct bb_mt_gen *g, uint32_t tl, uint64_t *inst, int first,
                 const struct mt_msg *m)
{
	g->generated++;
	if (first) /* numbered in order of their first message */
		*inst = ++g->instances[tl];
	if (g->o.stats)
		par_msg(g, m);
	if (g->loss_on && bb_mt_loss_drop(&g->loss, m->ts_ns))
		return;
	struct ev e = {m->ts_ns, g->evseq++, m->id, *inst, m->from, m->to, tl, m->op};
	if (!g->skew_on) {
		write_ev(g, &e);
		return;
	}
	e.ts_ns = bb_mt_time_add(e.ts_ns, bb_mt_skew_shift(g->off_ns[m->from], g->drift[m->from],
	                                                   g->t0_ns, m->ts_ns));
	ev_push(&g->rh, &e);
	/* Messages still to come were sent at m->ts_ns or later (the merge is in
	 * true time order) and the shift is monotonic in time, so whatever lies at
	 * or below the bound can go. */
	int64_t bound = skew_bound(g, m->ts_ns);
	while (g->rh.n && g->rh.a[0].ts_ns <= bound) {
		write_ev(g, &g->rh.a[0]);
		ev_pop(&g->rh);
	}
}

/* ---- set-up and the run ---- */

struct bb_mt_gen *bb_mt_gen_new(const struct bb_mt_config *cfg, const struct bb_mt_opts *o,
                                struct bb_err *err)
{
	struct bb_mt_gen *g = bb_xcalloc(1, sizeof(*g));
	uint32_t nn = bb_intern_count(cfg->nodes);
	g->cfg = cfg;
	if (o)
		g->o = *o;
	g->seed = g->o.set_seed ? g->o.seed : cfg->seed;
	g->t0_ns = cfg->start_ns;
	int64_t dur = g->o.set_duration ? g->o.duration_ns : cfg->duration_ns;
	uint64_t msgs = g->o.set_messages ? g->o.messages : cfg->messages;
	if (dur < 0 || (!dur && !msgs)) {
		bb_err_set(err, "%s: the trace needs an end: a duration or a message count", cfg->name);
		free(g);
		return NULL;
	}
	g->tend_ns = dur ? bb_mt_time_add(g->t0_ns, dur) : INT64_MAX;
	g->max_msgs = msgs ? msgs : UINT64_MAX;
	g->no_ids = cfg->no_ids || g->o.no_ids;

	g->names = bb_xcalloc(nn, sizeof(*g->names));
	for (uint32_t i = 0; i < nn; i++)
		g->names[i] = bb_intern_str(cfg->nodes, i);
	g->off_ns = bb_xcalloc(nn, sizeof(*g->off_ns));
	g->drift = bb_xcalloc(nn, sizeof(*g->drift));
	const struct bb_mt_skew *tables[2] = {cfg->skew, g->o.skew};
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; i < bb_mt_skew_count(tables[t]); i++) {
			int64_t off;
			double dr;
			int ho, hd;
			const char *name = bb_mt_skew_entry(tables[t], i, &off, &dr, &ho, &hd);
			uint32_t k = bb_intern_find(cfg->nodes, name, strlen(name));
			if (k == BB_NONE) {
				bb_err_set(err, "skew: unknown node \"%s\" (not in %s)", name, cfg->name);
				bb_mt_gen_free(g);
				return NULL;
			}
			if (ho)
				g->off_ns[k] = off;
			if (hd)
				g->drift[k] = dr;
		}
	}
	for (uint32_t i = 0; i < nn; i++)
		g->skew_on |= g->off_ns[i] != 0 || g->drift[i] != 0;

	bb_mt_loss_init(&g->loss, g->o.set_capture_rate ? g->o.capture_rate : cfg->capture_rate,
	                g->o.set_queue ? g->o.queue : cfg->queue,
	                g->o.set_probability ? g->o.probability : cfg->probability, g->seed);
	g->loss_on = bb_mt_loss_active(&g->loss);

	size_t maxname = 0;
	for (uint32_t t = 0; t < cfg->ntl; t++) {
		g->nslots += cfg->tl[t].instances;
		if (cfg->tl[t].name_len > maxname)
			maxname = cfg->tl[t].name_len;
	}
	g->pathbuf = bb_xmalloc(maxname + 32);
	g->slots = bb_xcalloc(g->nslots, sizeof(*g->slots));
	g->heap = bb_xcalloc(g->nslots, sizeof(*g->heap));
	g->instances = bb_xcalloc(cfg->ntl, sizeof(*g->instances));
	g->tl_names = bb_xcalloc(cfg->ntl, sizeof(*g->tl_names));
	uint32_t k = 0;
	for (uint32_t t = 0; t < cfg->ntl; t++) {
		const struct mt_tracelet *tl = &cfg->tl[t];
		g->tl_names[t] = tl->name;
		for (uint32_t i = 0; i < tl->instances; i++, k++) {
			struct slot *s = &g->slots[k];
			s->tl = t;
			s->root = tl->nroots ? tl->roots[i % tl->nroots] : BB_NONE;
			bb_mt_rng_seed_stream(&s->rng, g->seed, (uint64_t)t << 32 | i);
		}
	}
	if (g->o.stats) {
		g->open = bb_xcalloc(nn, sizeof(*g->open));
		g->node_seen = bb_xcalloc(nn, 1);
		g->open_ns = bb_xcalloc(nn, sizeof(*g->open_ns));
		g->recv = bb_xcalloc(nn, 1);
		g->sends = bb_xcalloc(nn, 1);
	}
	g->gen_first = g->gen_last = BB_NO_TIME;
	if (cfg->workers) {
		g->busy = bb_xcalloc(nn, sizeof(*g->busy));
		for (uint32_t i = 0; i < nn; i++) {
			if (!cfg->workers[i])
				continue;
			g->busy[i] = bb_xmalloc(cfg->workers[i] * sizeof(**g->busy));
			for (uint32_t j = 0; j < cfg->workers[i]; j++)
				g->busy[i][j] = INT64_MIN;
		}
	}
	g->first_ns = g->last_ns = BB_NO_TIME;
	return g;
}

void bb_mt_gen_free(struct bb_mt_gen *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; i < g->nslots; i++)
		free(g->slots[i].buf);
	if (g->open)
		for (uint32_t i = 0; i < bb_intern_count(g->cfg->nodes); i++)
			free(g->open[i].c);
	free(g->open);
	free(g->node_seen);
	free(g->open_ns);
	free(g->recv);
	free(g->sends);
	if (g->busy)
		for (uint32_t i = 0; i < bb_intern_count(g->cfg->nodes); i++)
			free(g->busy[i]);
	free(g->busy);
	free(g->pq.a);
	free(g->fl);
	free(g->flfree);
	free(g->edges);
	free(g->slots);
	free(g->heap);
	free(g->instances);
	free(g->tl_names);
	free(g->rh.a);
	free(g->pathbuf);
	free(g->names);
	free(g->off_ns);
	free(g->drift);
	free(g);
}

/* ---- ordered runs: arrivals, bursts and worker pools ----
 *
 * A worker pool couples the instances: a call waits for the calls before it.
 * So with pools, open-loop arrivals or bursts, instances are generated in
 * order of their start, across all slots (the slot heap is keyed by the next
 * arrival), each arrival starting one to burst_max instances at once; their
 * messages wait in a heap by (time, generation order) and are sent once no
 * arrival still to come can start earlier. A pool serves calls in the order
 * the generator meets them: instances by start, the calls of an instance in
 * its step order. */

/* Generates the arrival of slot s at s->next_ns (one to burst_max instances,
 * all starting then) into the pending heap, and sets the slot's next arrival:
 * an exponential gap later with a rate, else a think time after the last of
 * them ends. */
static void arrive(struct bb_mt_gen *g, struct slot *s)
{
	const struct mt_tracelet *tl = &g->cfg->tl[s->tl];
	int64_t start = s->next_ns, end = start;
	uint32_t k = uniform_count(&s->rng, tl->burst_min, tl->burst_max);
	for (uint32_t j = 0; j < k && !g->overflow; j++) {
		s->n = 0;
		struct thread th = {start, s->root};
		run_seq(g, s, &tl->body, &th);
		if (th.t > end)
			end = th.t;
		if (g->overflow) {
			g->overflow_tl = s->tl;
			return;
		}
		if (!s->n)
			continue;
		sort_instance(s);
		uint32_t f;
		if (g->nflfree) {
			f = g->flfree[--g->nflfree];
		} else {
			if (g->nfl == g->capfl) {
				g->capfl = g->capfl ? 2 * g->capfl : 256;
				g->fl = bb_xrealloc(g->fl, g->capfl * sizeof(*g->fl));
				g->flfree = bb_xrealloc(g->flfree, g->capfl * sizeof(*g->flfree));
			}
			f = g->nfl++;
		}
		g->fl[f] = (struct inflight){0, s->tl, s->n};
		for (uint32_t i = 0; i < s->n; i++) {
			const struct mt_msg *m = &s->buf[i];
			struct ev e = {m->ts_ns, g->pseq++, m->id, f, m->from, m->to, s->tl, m->op};
			ev_push(&g->pq, &e);
		}
	}
	if (tl->rate > 0) {
		double gap = -log1p(-bb_mt_rng_unit(&s->rng)) / tl->rate * 1e9;
		s->next_ns = bb_mt_time_add(start, gap >= 9e18 ? INT64_MAX : (int64_t)llround(gap));
	} else {
		s->next_ns = bb_mt_time_add(end, think(s, tl));
		if (s->next_ns <= start)
			s->next_ns = start + 1; /* time must move on */
	}
}

static void run_ordered(struct bb_mt_gen *g)
{
	g->nheap = 0;
	for (uint32_t i = 0; i < g->nslots; i++) {
		struct slot *s = &g->slots[i];
		const struct mt_tracelet *tl = &g->cfg->tl[s->tl];
		/* a first arrival a think time (or an exponential gap) after the start */
		int64_t first = think(s, tl);
		if (tl->rate > 0)
			first = (int64_t)llround(-log1p(-bb_mt_rng_unit(&s->rng)) / tl->rate * 1e9);
		s->next_ns = bb_mt_time_add(g->t0_ns, first);
		if (s->next_ns < g->tend_ns)
			g->heap[g->nheap++] = i;
	}
	for (uint32_t i = g->nheap / 2; i-- > 0;)
		heap_down(g, i);
	while ((g->nheap || g->pq.n) && g->generated < g->max_msgs && !g->werr && !g->overflow) {
		if (g->nheap && (!g->pq.n || g->slots[g->heap[0]].next_ns <= g->pq.a[0].ts_ns)) {
			struct slot *s = &g->slots[g->heap[0]];
			arrive(g, s);
			if (s->next_ns >= g->tend_ns)
				g->heap[0] = g->heap[--g->nheap];
			if (g->nheap)
				heap_down(g, 0);
			continue;
		}
		struct ev e = g->pq.a[0];
		ev_pop(&g->pq);
		struct inflight *f = &g->fl[e.inst];
		struct mt_msg m = {e.ts_ns, e.id, e.from, e.to, 0, e.op};
		emit(g, f->tl, &f->num, f->num == 0, &m);
		if (--f->left == 0)
			g->flfree[g->nflfree++] = (uint32_t)e.inst;
		if (g->o.progress && g->generated % PROGRESS_EVERY == 0)
			g->o.progress(g->o.progress_ctx, g->generated);
	}
}

static int write_meta(struct bb_mt_gen *g, struct bb_err *err)
{
	const struct bb_mt_config *cfg = g->cfg;
	size_t cap = 256, n = 0;
	char *buf = bb_xmalloc(cap);
	char t[BB_TIME_BUFSZ];
#define APPEND(...)                                                                    \
	do {                                                                           \
		int k_ = snprintf(buf + n, cap - n, __VA_ARGS__);                      \
		while (k_ >= 0 && (size_t)k_ >= cap - n) {                             \
			cap *= 2;                                                      \
			buf = bb_xrealloc(buf, cap);                                   \
			k_ = snprintf(buf + n, cap - n, __VA_ARGS__);                  \
		}                                                                      \
		if (k_ > 0)                                                            \
			n += (size_t)k_;                                               \
	} while (0)

	APPEND("source maketrace %s", g->o.source ? g->o.source : cfg->name);
	int rc = bb_writer_meta(g->w, buf, err);
	n = 0;
	bb_time_format(g->t0_ns, t);
	APPEND("maketrace seed=%llu start=%s", (unsigned long long)g->seed, t);
	if (g->tend_ns != INT64_MAX) {
		bb_time_format(g->tend_ns - g->t0_ns, t);
		APPEND(" duration=%s", t);
	}
	if (g->max_msgs != UINT64_MAX)
		APPEND(" messages=%llu", (unsigned long long)g->max_msgs);
	APPEND(" ids=%s", g->no_ids ? "none" : "counter");
	APPEND(" tracelets=");
	for (uint32_t i = 0; i < cfg->ntl; i++)
		APPEND("%s%s:%u", i ? "," : "", cfg->tl[i].name, cfg->tl[i].instances);
	if (g->loss.capture_rate > 0)
		APPEND(" capture_rate=%.17g queue=%u", g->loss.capture_rate, g->loss.queue);
	if (g->loss.probability > 0)
		APPEND(" drop_probability=%.17g", g->loss.probability);
	if (g->skew_on) {
		const char *sep = " skew=";
		for (uint32_t i = 0; i < bb_intern_count(cfg->nodes); i++) {
			if (!g->off_ns[i] && g->drift[i] == 0)
				continue;
			bb_time_format(g->off_ns[i], t);
			APPEND("%s%s:%s", sep, g->names[i], t);
			if (g->drift[i] != 0)
				APPEND(":%.17gppm", g->drift[i]);
			sep = ",";
		}
	}
#undef APPEND
	if (!rc)
		rc = bb_writer_meta(g->w, buf, err);
	free(buf);
	return rc;
}

int bb_mt_gen_run(struct bb_mt_gen *g, struct bb_writer *w, struct bb_err *err)
{
	if (g->ran) {
		bb_err_set(err, "%s: generator already ran", g->cfg->name);
		return BB_ERR_ARG;
	}
	g->ran = 1;
	g->w = w;
	g->err = err;
	int rc = write_meta(g, err);
	if (rc)
		return rc;

	if (g->cfg->ordered) {
		run_ordered(g);
		goto flush;
	}
	for (uint32_t i = 0; i < g->nslots; i++) {
		struct slot *s = &g->slots[i];
		int64_t start = bb_mt_time_add(g->t0_ns, think(s, &g->cfg->tl[s->tl]));
		if (fill(g, s, start))
			g->heap[g->nheap++] = i;
	}
	for (uint32_t i = g->nheap / 2; i-- > 0;)
		heap_down(g, i);

	while (g->nheap && g->generated < g->max_msgs && !g->werr && !g->overflow) {
		uint32_t si = g->heap[0];
		struct slot *s = &g->slots[si];
		s->pos++;
		emit(g, s->tl, &s->inst, s->pos == 1, &s->buf[s->pos - 1]);
		if (s->pos == s->n) {
			const struct mt_tracelet *tl = &g->cfg->tl[s->tl];
			if (!fill(g, s, bb_mt_time_add(s->end_ns, think(s, tl))))
				g->heap[0] = g->heap[--g->nheap];
		}
		if (g->nheap)
			heap_down(g, 0);
		if (g->o.progress && g->generated % PROGRESS_EVERY == 0)
			g->o.progress(g->o.progress_ctx, g->generated);
	}
flush:
	while (g->rh.n && !g->werr) {
		write_ev(g, &g->rh.a[0]);
		ev_pop(&g->rh);
	}
	if (g->werr)
		return BB_ERR_IO;
	if (g->overflow) {
		bb_err_set(err, "%s: an instance of tracelet \"%s\" has more than %u messages",
		           g->cfg->name, g->cfg->tl[g->overflow_tl].name, MAX_INSTANCE_MSGS);
		return BB_ERR_LIMIT;
	}
	return 0;
}

void bb_mt_gen_summary(const struct bb_mt_gen *g, struct bb_mt_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->generated = g->generated;
	s->written = g->written;
	s->dropped_queue = g->loss.dropped_queue;
	s->dropped_random = g->loss.dropped_random;
	s->loss = g->loss_on;
	s->skew = g->skew_on;
	s->first_ns = g->first_ns;
	s->last_ns = g->last_ns;
	if (g->node_seen)
		for (uint32_t i = 0; i < bb_intern_count(g->cfg->nodes); i++)
			s->nodes += g->node_seen[i];
	s->edges = g->nedges;
	s->child_calls = g->par_n;
	s->parallelism = g->par_n ? g->par_sum / (double)g->par_n : 0;
	if (g->open_ns && g->gen_last > g->gen_first) {
		double sum = 0;
		for (uint32_t i = 0; i < bb_intern_count(g->cfg->nodes); i++) {
			if (!g->recv[i] || !g->sends[i])
				continue;
			sum += g->open_ns[i];
			s->internal_nodes++;
		}
		if (s->internal_nodes)
			s->open_calls = sum / (double)(g->gen_last - g->gen_first) / s->internal_nodes;
	}
	s->pool_calls = g->pool_calls;
	s->pool_waited = g->pool_waited;
	s->pool_lag_mean_ns = g->pool_waited ? g->pool_lag_sum / (double)g->pool_waited : 0;
	s->pool_lag_max_ns = g->pool_lag_max;
	s->ntracelets = g->cfg->ntl;
	s->tracelet_names = g->tl_names;
	s->instances = g->instances;
	s->seed = g->seed;
}
