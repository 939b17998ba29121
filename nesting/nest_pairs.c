/* nest_pairs.c - FindCallPairs: open calls, candidate parents, one streaming pass */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* Open calls live in three structures at once: a hash table by (caller,
 * callee, id) to match returns; a list of all open calls in call order, whose
 * head is the oldest (eviction); and, per callee B, a list of the calls into B
 * in call order, which is where a child B->C finds its candidate parents. A
 * call leaves B's list when it returns (or, with a skew window, once it has
 * been closed for longer than the window), so scanning that list costs the
 * per-node parallelism and the whole pass costs messages x parallelism. */

static uint32_t node_index(struct bb_nest *n, const char *s, size_t len);

/* The host part of a service name "H:P" (P digits; H an IPv4 address or
 * "[v6]", given without the brackets), as bbcap names servers that share an
 * address (docs/trace-format.md, "Node names"); 0 when s is not one. */
static size_t host_of(const char *s, size_t len, size_t *off)
{
	size_t c = len;
	while (c > 0 && (unsigned)(s[c - 1] - '0') < 10u)
		c--;
	if (c == len || c < 2 || s[c - 1] != ':')
		return 0;
	*off = 0;
	if (s[0] == '[' && s[c - 2] == ']') {
		*off = 1;
		return c - 3;
	}
	return memchr(s, ':', c - 1) ? 0 : c - 1;
}

/* The node index of name s, interned; with host aliases, a service "H:P"
 * is linked to its host "H". */
static uint32_t node_index(struct bb_nest *n, const char *s, size_t len)
{
	size_t before = n->nodes.ninto ? bb_intern_count(n->nodes.names) : 0;
	uint32_t k = bb_intern_add(n->nodes.names, s, len);
	if (k >= n->nodes.ninto) {
		size_t cap = n->nodes.ninto ? 2 * n->nodes.ninto : 16;
		while (cap <= k)
			cap *= 2;
		n->nodes.into = bb_xrealloc(n->nodes.into, cap * sizeof(*n->nodes.into));
		memset(&n->nodes.into[n->nodes.ninto], 0,
		       (cap - n->nodes.ninto) * sizeof(*n->nodes.into));
		for (size_t i = n->nodes.ninto; i < cap; i++)
			n->nodes.into[i].host = n->nodes.into[i].svc = n->nodes.into[i].svc_next =
			    BB_NONE;
		n->nodes.ninto = cap;
	}
	size_t off, hl;
	if (n->cfg.alias && k >= before && n->nodes.into[k].host == BB_NONE &&
	    (hl = host_of(s, len, &off)) > 0) {
		uint32_t h = node_index(n, s + off, hl);
		n->nodes.into[k].host = h;
		n->nodes.into[k].svc_next = n->nodes.into[h].svc;
		n->nodes.into[h].svc = k;
	}
	return k;
}

uint32_t nest_node(struct bb_nest *n, const struct bb_reader *r, uint32_t ri)
{
	if (ri >= n->nodes.nrmap) {
		size_t cap = n->nodes.nrmap ? n->nodes.nrmap : 16;
		while (cap <= ri)
			cap *= 2;
		n->nodes.rmap = bb_xrealloc(n->nodes.rmap, cap * sizeof(*n->nodes.rmap));
		for (size_t i = n->nodes.nrmap; i < cap; i++)
			n->nodes.rmap[i] = BB_NONE;
		n->nodes.nrmap = cap;
	}
	if (n->nodes.rmap[ri] == BB_NONE) {
		const char *s = bb_reader_node(r, ri);
		n->nodes.rmap[ri] = node_index(n, s, strlen(s));
	}
	return n->nodes.rmap[ri];
}

/* The open-call table's hash of (caller, callee, id), eight bytes of the id
 * at a time. Only the bucket depends on it: a return takes the earliest
 * matching call whatever the chain order. */
/* nest_node with the common case (a node already seen) inline. */
static inline uint32_t node_of(struct bb_nest *n, const struct bb_reader *r, uint32_t ri)
{
	return ri < n->nodes.nrmap && n->nodes.rmap[ri] != BB_NONE ? n->nodes.rmap[ri]
	                                                           : nest_node(n, r, ri);
}

/* Whether this pass only scores (pass 1, or the replay that builds the
 * return-side histograms): closed calls are freed, not kept for paths. */
static inline int scoring(const struct bb_nest *n)
{
	return n->phase.pass == 1 || n->phase.rstage || n->phase.gstage || n->phase.cstage;
}

/* id: a record's (bb_rec.id_str), which may be read past its end. */
static uint64_t key_hash(uint32_t from, uint32_t to, const char *id, size_t len)
{
	const uint64_t m = 0x9e3779b97f4a7c15ULL;
	uint64_t h = ((uint64_t)from << 32 | to) * m ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, id + i, 8);
		h = (h ^ w) * m;
		h ^= h >> 32;
	}
	if (i < len) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && BB_REC_ID_PAD >= 8
		/* a record's id may be read BB_REC_ID_PAD bytes past its end
		 * (trace.h): one word, its bytes past the id cleared (the same
		 * word as byte by byte) */
		uint64_t w;
		memcpy(&w, id + i, 8);
		w &= ~UINT64_C(0) >> (64 - 8 * (len - i));
#else
		uint64_t w = 0; /* byte by byte: a short memcpy into w stalls the load */
		for (size_t j = 0; i + j < len; j++)
			w |= (uint64_t)(unsigned char)id[i + j] << (8 * j);
#endif
		h = (h ^ w) * m;
		h ^= h >> 32;
	}
	return h ^ (h >> 29);
}

static struct call *call_new(struct bb_nest *n)
{
	struct call *c = n->calls.freelist;
	if (c)
		n->calls.freelist = c->hnext;
	else
		c = bb_xmalloc(sizeof(*c));
	/* every field but idbuf, member by member: a memset of the whole struct
	 * was a fifth of pass 1's own time (rep stos) */
	c->call_ts = c->ret_ts = c->max_ret = 0;
	c->end_ts = BB_NO_TIME;
	c->seq = c->line = c->idhash = 0;
	c->from = c->to = c->nchildren = c->ridx = c->idlen = 0;
	c->nsure = 0;
	c->id = c->path = NULL;
	c->hnext = c->gprev = c->gnext = c->nprev = c->nnext = NULL;
	c->cnext = c->rnext = c->parent = c->child = c->sibling = NULL;
	c->open = c->linked = c->path_borrowed = c->ambiguous = 0;
	c->cexact = c->pamb = c->palt = 0;
	c->req = BB_NONE;
	c->attr = NULL;
	c->attr_owned = c->parent_ambiguous = 0;
	n->calls.live++;
	if (n->calls.live > n->st.peak_open)
		n->st.peak_open = n->calls.live;
	return c;
}

static void call_free(struct bb_nest *n, struct call *c)
{
	if (c->id != c->idbuf)
		free(c->id);
	if (!c->path_borrowed)
		free(c->path);
	if (c->attr_owned)
		free((char *)(uintptr_t)c->attr);
	c->hnext = n->calls.freelist;
	n->calls.freelist = c;
	n->calls.live--;
}

static void htab_grow(struct bb_nest *n)
{
	size_t cap = n->calls.hcap ? 2 * n->calls.hcap : 1024;
	struct call **t = bb_xcalloc(cap, sizeof(*t));
	for (size_t i = 0; i < n->calls.hcap; i++) {
		struct call *c = n->calls.htab[i], *next;
		for (; c; c = next) {
			next = c->hnext;
			size_t k = c->idhash & (cap - 1);
			c->hnext = t[k];
			t[k] = c;
		}
	}
	free(n->calls.htab);
	n->calls.htab = t;
	n->calls.hcap = cap;
}

static void htab_remove(struct bb_nest *n, struct call *c)
{
	struct call **pp = &n->calls.htab[c->idhash & (n->calls.hcap - 1)];
	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	c->hnext = NULL;
	n->calls.hcount--;
}

static void into_link(struct bb_nest *n, struct call *c)
{
	struct node_list *l = &n->nodes.into[c->to];
	c->nprev = l->tail;
	c->nnext = NULL;
	if (l->tail)
		l->tail->nnext = c;
	else
		l->head = c;
	l->tail = c;
	c->linked = 1;
}

static void into_unlink(struct bb_nest *n, struct call *c)
{
	if (!c->linked)
		return;
	struct node_list *l = &n->nodes.into[c->to];
	if (c->nprev)
		c->nprev->nnext = c->nnext;
	else
		l->head = c->nnext;
	if (c->nnext)
		c->nnext->nprev = c->nprev;
	else
		l->tail = c->nprev;
	c->nprev = c->nnext = NULL;
	c->linked = 0;
}

static void open_unlink(struct bb_nest *n, struct call *c)
{
	if (c->gprev)
		c->gprev->gnext = c->gnext;
	else
		n->calls.ghead = c->gnext;
	if (c->gnext)
		c->gnext->gprev = c->gprev;
	else
		n->calls.gtail = c->gprev;
	c->gprev = c->gnext = NULL;
	c->open = 0;
}

static void skip_add(struct bb_nest *n, uint64_t line)
{
	if (n->calls.nskip == n->calls.capskip) {
		n->calls.capskip = n->calls.capskip ? 2 * n->calls.capskip : 64;
		n->calls.skip =
		    bb_xrealloc(n->calls.skip, n->calls.capskip * sizeof(*n->calls.skip));
	}
	n->calls.skip[n->calls.nskip++] = line;
}

static int skip_has(const struct bb_nest *n, uint64_t line)
{
	size_t lo = 0, hi = n->calls.nskip;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (n->calls.skip[mid] < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->calls.nskip && n->calls.skip[lo] == line;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Stops recording (over budget, or a node index too large to pack): pass 2
 * will read the trace again. */
static void rec_stop(struct bb_nest *n)
{
	nest_content_free(n);
	nest_recs_free(&n->recs, 0);
	n->phase.recording = 0;
}

/* The records' arrays grown to hold cap records (at most rec_max). */
static void recs_grow(struct bb_nest *n, size_t cap)
{
	if (cap > n->recs.rec_max)
		cap = n->recs.rec_max;
	n->recs.rec = bb_xrealloc(n->recs.rec, cap * sizeof(*n->recs.rec));
	if (n->cfg.mode == BB_NEST_ORACLE || n->cfg.p.bound)
		n->recs.rpath = bb_xrealloc(n->recs.rpath, cap * sizeof(*n->recs.rpath));
	if (n->cfg.mode == BB_NEST_INFER && (n->cfg.p.return_score || n->cfg.p.bound))
		n->recs.rret = bb_xrealloc(n->recs.rret, cap * sizeof(*n->recs.rret));
	if (n->content.rtok) {
		n->content.rtok = bb_xrealloc(n->content.rtok, cap * sizeof(*n->content.rtok));
		for (size_t i = n->recs.caprec; i < cap; i++)
			n->content.rtok[i] = BB_NONE;
	}
	n->recs.rreq = bb_xrealloc(n->recs.rreq, cap * sizeof(*n->recs.rreq));
	n->recs.caprec = cap;
}

/* Appends a record; returns its index, or BB_NONE once recording stopped. */
static inline uint32_t rec_push(struct bb_nest *n, int64_t ts, uint32_t op, uint32_t from,
                                uint32_t arg)
{
	if (!n->phase.recording)
		return BB_NONE;
	if (from > REC_NODE_MAX || n->recs.nrec >= n->recs.rec_max || n->recs.nrec >= BB_NONE - 1) {
		rec_stop(n);
		return BB_NONE;
	}
	if (n->recs.nrec == n->recs.caprec)
		recs_grow(n, n->recs.caprec ? 2 * n->recs.caprec : 4096);
	struct mrec *m = &n->recs.rec[n->recs.nrec];
	if (n->recs.rpath)
		n->recs.rpath[n->recs.nrec] = BB_NONE;
	if (n->recs.rreq)
		n->recs.rreq[n->recs.nrec] = BB_NONE;
	if (n->recs.rret)
		n->recs.rret[n->recs.nrec] = BB_NO_TIME;
	m->u.ts = ts;
	m->op_from = op << 30 | from;
	m->arg = arg;
	return (uint32_t)n->recs.nrec++;
}

/* Pass 1: call c counted on its edge and into its node, where the run uses
 * the counts (the caller scoreboard's scale, the capacities of --reassign
 * and --global). */
static void count_call(struct bb_nest *n, const struct call *c)
{
	if (n->phase.pass == 1 && n->cfg.mode == BB_NEST_INFER &&
	    (n->cfg.p.scoreboard == BB_NEST_SB_CALLER || n->cfg.p.reassign || n->cfg.p.global ||
	     n->cfg.auto_g)) {
		nest_pair_count(n, c->from, c->to);
		n->nodes.into[c->to].ncalls++;
	}
}

/* A call that will never return: pass 1 remembers it so that pass 2 never
 * offers it as a parent (a child under it would be lost with it), unless it
 * was in flight when the trace ended (in_flight), which pass 2 keeps. */
static void drop_open(struct bb_nest *n, struct call *c, int evicted, int in_flight)
{
	htab_remove(n, c);
	open_unlink(n, c);
	into_unlink(n, c);
	if (!in_flight) {
		skip_add(n, c->line);
		if (n->phase.recording)
			n->recs.rec[c->ridx].op_from = (uint32_t)REC_SKIP << 30;
	} else {
		/* the calls it made before the end are counted, so it is too: the
		 * capacities compare the two (nest_once: a front end whose calls in
		 * flight had made their redis calls seemed to call redis more often
		 * than it was called, and "at most one" was dropped) */
		count_call(n, c);
	}
	n->st.unmatched_calls++;
	n->st.evicted += evicted != 0;
	call_free(n, c);
}

/* Frees c and its subtree; returns how many calls that was. */
static uint64_t free_tree(struct bb_nest *n, struct call *c)
{
	uint64_t k = 1;
	struct call *ch = c->child, *next;
	for (; ch; ch = next) {
		next = ch->sibling;
		k += free_tree(n, ch);
	}
	into_unlink(n, c);
	call_free(n, c);
	return k;
}

static void release_root(struct bb_nest *n)
{
	struct call *r = n->calls.rhead;
	n->calls.rhead = r->rnext;
	if (!n->calls.rhead)
		n->calls.rtail = NULL;
	if (nest_rec_early(n, r->ridx)) {
		/* its request began before the capture: no instance */
		n->st.orphans += free_tree(n, r) - 1;
		return;
	}
	if (!n->phase.sstage) {
		uint32_t k = nest_add_instance(n, r);
		if (n->inst)
			nest_inst_emit(n, r, k);
	}
	free_tree(n, r);
}

/* Housekeeping before a record at time now: closed calls leave the candidate
 * lists once past the skew window; complete roots become pattern instances;
 * calls open longer than the timeout are evicted (pass 1). */
static void advance_slow(struct bb_nest *n)
{
	int64_t skew = n->cfg.p.skew_window_ns;
	while (n->calls.chead && nest_sub(n->phase.now, n->calls.chead->ret_ts) > skew) {
		struct call *c = n->calls.chead;
		n->calls.chead = c->cnext;
		if (!n->calls.chead)
			n->calls.ctail = NULL;
		c->cnext = NULL;
		into_unlink(n, c);
		if (scoring(n))
			call_free(n, c);
	}
	while (n->calls.rhead &&
	       (skew == 0 || nest_sub(n->phase.now, n->calls.rhead->max_ret) > skew))
		release_root(n);
	if (n->phase.pass == 1 && n->cfg.p.open_timeout_ns > 0 && n->phase.now != INT64_MAX)
		while (n->calls.ghead &&
		       n->calls.ghead->call_ts < nest_sub(n->phase.now, n->cfg.p.open_timeout_ns))
			drop_open(n, n->calls.ghead, 1, 0);
}

/* advance, with the common case (nothing to release) inline. */
static inline void advance(struct bb_nest *n)
{
	if (n->calls.chead || n->calls.rhead ||
	    (n->phase.pass == 1 && n->calls.ghead && n->cfg.p.open_timeout_ns > 0 &&
	     n->calls.ghead->call_ts < nest_sub(n->phase.now, n->cfg.p.open_timeout_ns)))
		advance_slow(n);
}

/* The request label of a call: its req= up to a '?' (the query of a URL
 * names one request, not a kind of them: GET /item?id=17 is GET /item),
 * interned for the run; BB_NONE without one. */
static uint32_t req_label(struct bb_nest *n, const struct bb_rec *rec)
{
	size_t len;
	const char *req = bb_rec_attr(rec, "req", &len);
	if (!req)
		return BB_NONE;
	const char *q = memchr(req, '?', len);
	if (q)
		len = (size_t)(q - req);
	if (!n->recs.reqs)
		n->recs.reqs = bb_intern_new();
	return bb_intern_add(n->recs.reqs, req, len);
}

static void on_call(struct bb_nest *n, const struct bb_reader *r, const struct bb_rec *rec)
{
	if (n->phase.pass == 2 && skip_has(n, rec->line))
		return;
	struct call *c = call_new(n);
	c->call_ts = rec->ts_ns;
	c->ret_ts = BB_NO_TIME;
	c->seq = n->phase.seq++;
	c->line = rec->line;
	c->from = node_of(n, r, rec->sender);
	c->to = node_of(n, r, rec->receiver);
	if (n->phase.pass == 1) {
		c->ridx = rec_push(n, rec->ts_ns, REC_CALL, c->from, c->to);
		size_t len;
		const char *path;
		if (n->recs.rpath && c->ridx != BB_NONE &&
		    (path = bb_rec_attr(rec, "path", &len))) {
			if (!n->recs.paths)
				n->recs.paths = bb_intern_new();
			n->recs.rpath[c->ridx] = bb_intern_add(n->recs.paths, path, len);
		}
		if (n->cfg.mode == BB_NEST_INFER)
			nest_content_record(n, rec, c->ridx);
	}
	c->req = req_label(n, rec);
	if (n->phase.pass == 1 && n->recs.rreq && c->ridx != BB_NONE)
		n->recs.rreq[c->ridx] = c->req;
	if (n->inst)
		nest_inst_on_call(n, c, rec);
	/* ids are compared as the C strings they were stored as (an id with a
	 * NUL in it matches only up to it): short ones live in the call */
	size_t idlen = strnlen(rec->id_str, rec->id_len);
	c->id = idlen < sizeof(c->idbuf) ? c->idbuf : bb_xmalloc(idlen + 1);
	memcpy(c->id, rec->id_str, idlen);
	c->id[idlen] = '\0';
	c->idlen = (uint32_t)idlen;
	c->idhash = key_hash(c->from, c->to, rec->id_str, rec->id_len);
	if (n->phase.pass == 2 && n->cfg.mode == BB_NEST_ORACLE) {
		size_t len;
		const char *path = bb_rec_attr(rec, "path", &len);
		if (path)
			c->path = bb_xstrndup(path, len);
		else
			n->st.no_path++;
	}
	if (2 * n->calls.hcount >= n->calls.hcap)
		htab_grow(n);
	size_t k = c->idhash & (n->calls.hcap - 1);
	c->hnext = n->calls.htab[k];
	n->calls.htab[k] = c;
	n->calls.hcount++;
	c->open = 1;
	c->gprev = n->calls.gtail;
	if (n->calls.gtail)
		n->calls.gtail->gnext = c;
	else
		n->calls.ghead = c;
	n->calls.gtail = c;
	into_link(n, c);
}

/* The earliest open call from -> to with this id, taken out of the table. */
static struct call *take_open(struct bb_nest *n, uint32_t from, uint32_t to, const char *id,
                              size_t len)
{
	if (!n->calls.hcap)
		return NULL;
	uint64_t h = key_hash(from, to, id, len);
	struct call *best = NULL;
	for (struct call *c = n->calls.htab[h & (n->calls.hcap - 1)]; c; c = c->hnext)
		if (c->idhash == h && c->from == from && c->to == to && c->idlen == len &&
		    memcmp(c->id, id, len) == 0 && (!best || c->seq < best->seq))
			best = c;
	if (best)
		htab_remove(n, best);
	return best;
}

/* Candidate parents of child B->C: calls into B that began before the child's
 * call and are still open at its return; the skew window widens both
 * comparisons. In call order, so the first is the earliest. */
static size_t candidates_into(struct bb_nest *n, struct call *c, uint32_t node, size_t nc)
{
	int64_t skew = n->cfg.p.skew_window_ns;
	int64_t limit = nest_sub(c->call_ts, -skew); /* skew >= 0 */
	for (struct call *p = n->nodes.into[node].head; p; p = p->nnext) {
		if (p->call_ts > limit || (p->call_ts == limit && p->seq > c->seq))
			break;
		if (p == c)
			continue;
		if (!p->open && !(skew > 0 && p->ret_ts >= nest_sub(n->phase.now, skew)))
			continue;
		if (nc == n->calls.capcand) {
			n->calls.capcand = n->calls.capcand ? 2 * n->calls.capcand : 64;
			n->calls.cand =
			    bb_xrealloc(n->calls.cand, n->calls.capcand * sizeof(*n->calls.cand));
		}
		n->calls.cand[nc++] = p;
	}
	return nc;
}

/* Host aliases: whether calls c->from -> c->to may nest under calls into
 * the services on c->from. Pass 1 counts how many of the edge's calls had
 * such a candidate; an edge that has none for more than NEST_ALIAS_ROOT of
 * its calls starts requests (a client on the same host as the services)
 * and takes none from pass 2 on (nest_alias_roots). */
static int alias_edge(struct bb_nest *n, const struct call *c)
{
	if (!n->cfg.alias || c->from >= n->nodes.ninto || n->nodes.into[c->from].svc == BB_NONE)
		return 0;
	if (n->phase.pass == 1)
		return 1;
	struct pairc *e = nest_pairc(n, c->from, c->to, 0);
	return !(e && e->al_root);
}

/* Candidate parents of child B->C: calls into B that began before the child's
 * call and are still open at its return; the skew window widens both
 * comparisons. In call order, so the first is the earliest. With host
 * aliases (a trace that names services H:P), calls into the services on B
 * too. */
static size_t candidates(struct bb_nest *n, struct call *c)
{
	size_t nc = candidates_into(n, c, c->from, 0);
	if (!alias_edge(n, c))
		return nc;
	size_t direct = nc;
	for (uint32_t s = n->nodes.into[c->from].svc; s != BB_NONE; s = n->nodes.into[s].svc_next)
		nc = candidates_into(n, c, s, nc);
	if (n->phase.pass == 1) {
		struct pairc *e = nest_pairc(n, c->from, c->to, 1);
		e->al_n++;
		e->al_has += nc > 0;
	}
	/* back in call order (the earliest wins ties) */
	for (size_t i = direct ? direct : 1; i < nc; i++)
		for (size_t j = i; j > 0 && n->calls.cand[j]->seq < n->calls.cand[j - 1]->seq;
		     j--) {
			struct call *t = n->calls.cand[j];
			n->calls.cand[j] = n->calls.cand[j - 1];
			n->calls.cand[j - 1] = t;
		}
	return nc;
}

/* After pass 1, host aliases: an edge whose calls often had no candidate
 * starts requests; its calls take no aliased parent. */
void nest_alias_roots(struct bb_nest *n)
{
	for (size_t i = 0; n->cfg.alias && i < n->board.pccap; i++) {
		struct pairc *e = &n->board.pc[i];
		if (e->a != UINT32_MAX && e->al_n &&
		    (double)e->al_has < NEST_ALIAS_ROOT * (double)e->al_n)
			e->al_root = 1;
	}
}

static void update_max_ret(struct call *c, int64_t t)
{
	for (; c && c->max_ret < t; c = c->parent)
		c->max_ret = t;
}

static struct call *oracle_parent(struct call *c, struct call **cand, size_t nc)
{
	if (!c->path)
		return NULL;
	struct call *best = NULL;
	for (size_t i = 0; i < nc; i++)
		if (cand[i]->path && strcmp(cand[i]->path, c->path) == 0 &&
		    (!best || nest_path_better(c, cand[i], best)))
			best = cand[i];
	return best;
}

/* --global: the parent the assignment chose, among the candidates */
static struct call *global_parent(struct bb_nest *n, struct call *c, struct call **cand,
                                  size_t nc)
{
	uint32_t want = n->solve.gpar[c->ridx];
	if (n->solve.ramb && (n->solve.ramb[c->ridx] & 1) && !c->pamb) {
		c->pamb = 1;
		n->st.ambiguous++;
	}
	for (size_t i = 0; i < nc; i++) {
		if (cand[i]->ridx != want)
			continue;
		/* a skew window lets a closed call under c be a candidate: never a
		 * cycle */
		for (struct call *a = cand[i]; a; a = a->parent)
			if (a == c)
				return NULL;
		return cand[i];
	}
	return NULL;
}

/* Call c has just returned at time ts: its candidate parents, then the
 * scoreboard (pass 1) or its parent (pass 2). */
static void on_close(struct bb_nest *n, struct call *c, int64_t ts)
{
	open_unlink(n, c);
	c->ret_ts = ts;
	c->max_ret = c->ret_ts;
	if (c->id != c->idbuf)
		free(c->id);
	c->id = NULL;
	if (n->phase.pass == 1) {
		n->st.call_pairs++;
		int64_t lat = nest_sub(ts, c->call_ts);
		if (lat > n->nodes.into[c->to].maxlat)
			n->nodes.into[c->to].maxlat = lat;
	}
	count_call(n, c);

	/* an early call's caller made it before the capture began: its parent,
	 * if any, is not in the trace */
	size_t nc = nest_rec_early(n, c->ridx) ? 0 : candidates(n, c);
	/* no tokens seen (yet): every class is CLS_NONE, which nothing reads
	 * then, and no candidate is dropped (nest_content_classes) */
	if (n->cfg.mode == BB_NEST_INFER && n->content.rtok)
		nc = nest_content_classes(n, c, n->calls.cand, nc);
	if (nc) {
		n->st.children++;
		n->st.candidates += nc;
	}
	if (n->phase.pass == 1) {
		if (n->cfg.mode == BB_NEST_INFER && nc)
			nest_score_child(n, c, n->calls.cand, nc);
		if (n->cfg.mode == BB_NEST_INFER)
			nest_sure_child(n, c, n->calls.cand, nc);
	} else if (n->phase.cstage) {
		nest_content_learn(n, c, nc);
		nest_content_closed(n, c);
	} else if (n->phase.rstage) {
		if (nc)
			nest_score_return(n, c, n->calls.cand, nc);
		if (nc && n->solve.glob.keep)
			nest_global_append(n, c, n->calls.cand, nc);
	} else if (n->phase.gstage) {
		if (nc && n->cfg.p.bound)
			nest_bound_collect(n, c, n->calls.cand, nc);
		else if (nc)
			nest_global_collect(n, c, n->calls.cand, nc);
	} else {
		struct call *parent = NULL;
		if (nc)
			parent = n->cfg.mode == BB_NEST_ORACLE ? oracle_parent(c, n->calls.cand, nc)
			         : n->solve.gpar ? global_parent(n, c, n->calls.cand, nc)
			                         : nest_choose_parent(n, c, n->calls.cand, nc);
		if (parent && n->phase.sstage)
			nest_seq_context(n, parent, c);
		if (n->phase.sstage)
			nest_seq_returned(n, c);
		if (parent && n->inst)
			c->parent_ambiguous =
			    nest_parent_ambiguous(n, c, n->calls.cand, nc, parent);
		if (parent) {
			nest_attach(parent, c);
			update_max_ret(parent, c->max_ret);
		} else {
			n->st.roots++;
			c->rnext = NULL;
			if (n->calls.rtail)
				n->calls.rtail->rnext = c;
			else
				n->calls.rhead = c;
			n->calls.rtail = c;
		}
	}
	if (n->cfg.p.skew_window_ns > 0) {
		c->cnext = NULL;
		if (n->calls.ctail)
			n->calls.ctail->cnext = c;
		else
			n->calls.chead = c;
		n->calls.ctail = c;
	} else {
		into_unlink(n, c);
		if (scoring(n))
			call_free(n, c);
	}
}

/* Pass 1: a return no call matched, which nest_recs_early may make a call of. */
static void uret_add(struct bb_nest *n, uint32_t ridx, uint32_t from, uint32_t to)
{
	struct nest_recs *r = &n->recs;
	if (n->cfg.mode != BB_NEST_INFER || n->cfg.p.bound || from > REC_NODE_MAX)
		return;
	if (r->nuret == r->capuret) {
		r->capuret = r->capuret ? 2 * r->capuret : 64;
		r->uret = bb_xrealloc(r->uret, r->capuret * sizeof(*r->uret));
	}
	r->uret[r->nuret++] = (struct uret){ridx, from, to};
}

static void on_ret(struct bb_nest *n, const struct bb_reader *r, const struct bb_rec *rec)
{
	/* a return travels callee -> caller */
	uint32_t caller = node_of(n, r, rec->receiver);
	uint32_t callee = node_of(n, r, rec->sender);
	struct call *c = take_open(n, caller, callee, rec->id_str, rec->id_len);
	if (n->phase.pass == 1) {
		uint32_t ri = rec_push(n, rec->ts_ns, REC_RET, 0, c ? c->ridx : BB_NONE);
		if (c && n->recs.rret && c->ridx != BB_NONE)
			n->recs.rret[c->ridx] = rec->ts_ns;
		if (!c && ri != BB_NONE)
			uret_add(n, ri, caller, callee);
	}
	if (!c) {
		if (n->phase.pass == 1)
			n->st.unmatched_returns++;
		return;
	}
	if (n->inst)
		nest_inst_on_ret(n, c, rec);
	on_close(n, c, rec->ts_ns);
}

static void discard(struct bb_nest *n);

/* Whether seen, the part of a call into node the trace shows, is shorter
 * than the longest returned call into it took: a call cut off by the
 * capture's end (in_flight) or start (early), not a lost message's. */
static int shorter_than_any(const struct bb_nest *n, uint32_t node, int64_t seen)
{
	return node < n->nodes.ninto && seen < n->nodes.into[node].maxlat;
}

/* A call still open at the end of pass 1 whose request was cut off by the
 * end of the capture, not one whose reply was lost: it had been open for
 * less time than the longest call into its node took (a lost reply's call,
 * open since long before the end, is not). Pass 2 keeps it as a candidate
 * parent: it holds the calls its request made before the end, which would
 * otherwise go to another request open at the time (a pattern that does not
 * exist); it never returns, so it and what it holds make no instance
 * (discard: orphaned_calls). The rig's example normal.pcap, whose capture
 * stopped with 7 requests in flight: 11 patterns that do not exist and 15
 * of 500 instances wrong, against none and the 7 cut off. */
static int in_flight(const struct bb_nest *n, const struct call *c, int64_t end)
{
	return shorter_than_any(n, c->to, nest_sub(end, c->call_ts));
}

/* The end of a pass: what is still open never returned. */
static void finish(struct bb_nest *n)
{
	int64_t end = n->phase.now;
	n->phase.now = INT64_MAX;
	int64_t skew = n->cfg.p.skew_window_ns;
	/* flush everything: -1 also releases calls that return at INT64_MAX */
	n->cfg.p.skew_window_ns = -1;
	advance(n);
	n->cfg.p.skew_window_ns = skew;
	if (n->phase.pass == 1) {
		n->recs.tend = end;
		while (n->calls.ghead)
			drop_open(n, n->calls.ghead, 0, in_flight(n, n->calls.ghead, end));
		if (n->calls.nskip)
			qsort(n->calls.skip, n->calls.nskip, sizeof(*n->calls.skip), cmp_u64);
	} else {
		discard(n);
	}
}

/* Frees every call still held, without making instances of them. In pass 2
 * every returned call is a pending root or hangs under a parent, so all are
 * reachable from the pending roots and the open calls. */
static void discard(struct bb_nest *n)
{
	while (n->calls.chead) {
		struct call *c = n->calls.chead;
		n->calls.chead = c->cnext;
		c->cnext = NULL;
		into_unlink(n, c);
		if (scoring(n))
			call_free(n, c);
	}
	n->calls.ctail = NULL;
	while (n->calls.rhead) {
		struct call *c = n->calls.rhead;
		n->calls.rhead = c->rnext;
		free_tree(n, c);
	}
	n->calls.rtail = NULL;
	while (n->calls.ghead) {
		struct call *c = n->calls.ghead;
		if (!n->phase.replay)
			htab_remove(n, c);
		else /* in flight at the end (in_flight): no RET put its time back */
			n->recs.rec[c->ridx].u.ts = c->call_ts;
		open_unlink(n, c);
		n->st.orphans += free_tree(n, c) - 1;
	}
}

/* Frees the open-call table, the scratch and the free calls (the passes
 * free the others: discard). */
void nest_calls_free(struct nest_calls *cs)
{
	while (cs->freelist) {
		struct call *c = cs->freelist;
		cs->freelist = c->hnext;
		free(c);
	}
	free(cs->htab);
	free(cs->skip);
	free(cs->cand);
	free(cs->ccls);
	free(cs->cscore);
	memset(cs, 0, sizeof(*cs));
}

void nest_nodes_init(struct nest_nodes *d)
{
	memset(d, 0, sizeof(*d));
	d->names = bb_intern_new();
}

void nest_nodes_free(struct nest_nodes *d)
{
	for (size_t i = 0; i < d->ninto; i++)
		free(d->into[i].dur);
	bb_intern_free(d->names);
	free(d->rmap);
	free(d->into);
	memset(d, 0, sizeof(*d));
}

/* Whether a return no call matched closes a call made before the capture
 * began, not one whose call message was lost: it came sooner after the
 * capture's first message than the longest call into its node took. */
static int early(const struct bb_nest *n, const struct uret *u)
{
	return shorter_than_any(n, u->to, nest_sub(n->recs.rec[u->ridx].u.ts, n->st.first_ns));
}

/* Makes room for k records before the others in a per-record array of
 * m-byte entries (nrec in use). */
static void *recs_shift(void *a, size_t nrec, size_t k, size_t m)
{
	if (!a)
		return NULL;
	a = bb_xrealloc(a, (nrec + k) * m);
	memmove((char *)a + k * m, a, nrec * m);
	return a;
}

/* nest_recs_early's k records, from the first k of recs.uret. */
static void recs_prepend(struct bb_nest *n, size_t k)
{
	struct nest_recs *r = &n->recs;
	size_t nrec = r->nrec;
	r->rec = recs_shift(r->rec, nrec, k, sizeof(*r->rec));
	r->rpath = recs_shift(r->rpath, nrec, k, sizeof(*r->rpath));
	r->rret = recs_shift(r->rret, nrec, k, sizeof(*r->rret));
	r->rreq = recs_shift(r->rreq, nrec, k, sizeof(*r->rreq));
	n->content.rtok = recs_shift(n->content.rtok, nrec, k, sizeof(*n->content.rtok));
	nest_inst_shift(n, k);
	for (size_t i = k; i < nrec + k; i++)
		if (r->rec[i].op_from >> 30 == REC_RET && r->rec[i].arg != BB_NONE)
			r->rec[i].arg += (uint32_t)k;
	for (size_t j = 0; j < k; j++) {
		const struct uret *u = &r->uret[j];
		r->rec[j].u.ts = n->st.first_ns;
		r->rec[j].op_from = (uint32_t)REC_CALL << 30 | u->from;
		r->rec[j].arg = u->to;
		r->rec[u->ridx + k].arg = (uint32_t)j;
		if (r->rpath)
			r->rpath[j] = BB_NONE;
		if (r->rret)
			r->rret[j] = r->rec[u->ridx + k].u.ts;
		if (r->rreq)
			r->rreq[j] = BB_NONE;
		if (n->content.rtok)
			n->content.rtok[j] = BB_NONE;
	}
	r->nrec = r->caprec = nrec + k;
	r->nearly = k;
}

/* After pass 1: a call in flight when the capture began, whose return is in
 * the trace (early), becomes a CALL record before all others, made at the
 * capture's first message: pass 2 offers it as a parent of the calls its
 * request made after the capture began, which would otherwise go to another
 * request open at the time (a pattern that does not exist, as at the end:
 * in_flight). Its caller made it before the capture began: it takes no
 * parent, and it and what it holds make no instance (orphaned_calls). The
 * records after it move up by their number, as the RET records' CALLs. */
void nest_recs_early(struct bb_nest *n)
{
	struct nest_recs *r = &n->recs;
	size_t k = 0;
	for (size_t i = 0; i < r->nuret; i++)
		if (early(n, &r->uret[i]))
			r->uret[k++] = r->uret[i];
	if (k && r->nrec + k < r->rec_max && r->nrec + k < BB_NONE - 1)
		recs_prepend(n, k);
	free(r->uret);
	r->uret = NULL;
	r->nuret = r->capuret = 0;
}

/* After pass 1, when there are early records (nest_recs_early): per node,
 * how many of the calls into it took each bin's time, from the records'
 * call and return times. An early call's score takes its unknown time from
 * these (nest_score.c, cut_score). */
void nest_durations(struct bb_nest *n)
{
	const struct nest_recs *r = &n->recs;
	if (!r->rret || !r->nearly)
		return;
	for (size_t i = r->nearly; i < r->nrec; i++) {
		const struct mrec *m = &r->rec[i];
		if (m->op_from >> 30 != REC_CALL || r->rret[i] == BB_NO_TIME ||
		    m->arg >= n->nodes.ninto)
			continue;
		struct node_list *l = &n->nodes.into[m->arg];
		if (!l->dur)
			l->dur = bb_xcalloc(n->cfg.bins.n, sizeof(*l->dur));
		l->dur[nest_bin(&n->cfg.bins, nest_sub(r->rret[i], m->u.ts))] += 1;
	}
}

/* After pass 1: the records' arrays shrink to the records kept (they grow
 * by doubling, up to a quarter of them unused), so the replays and
 * --global's candidates do not carry the slack. */
void nest_recs_trim(struct bb_nest *n)
{
	struct nest_recs *r = &n->recs;
	size_t cap = r->nrec ? r->nrec : 1;
	if (!r->rec || cap >= r->caprec)
		return;
	r->rec = bb_xrealloc(r->rec, cap * sizeof(*r->rec));
	if (r->rpath)
		r->rpath = bb_xrealloc(r->rpath, cap * sizeof(*r->rpath));
	if (r->rret)
		r->rret = bb_xrealloc(r->rret, cap * sizeof(*r->rret));
	if (r->rreq && !r->reqs) { /* no req= label: every entry BB_NONE */
		free(r->rreq);
		r->rreq = NULL;
	} else if (r->rreq) {
		r->rreq = bb_xrealloc(r->rreq, cap * sizeof(*r->rreq));
	}
	if (n->content.rtok)
		n->content.rtok = bb_xrealloc(n->content.rtok, cap * sizeof(*n->content.rtok));
	r->caprec = cap;
}

/* --global's solve reads no return times (the flow and the refinement
 * have the candidates' costs): rret, pass 1's per CALL record, is freed
 * while it runs and made again after from the RET records, each of which
 * holds its time and names its CALL as pass 1 wrote them (8 bytes a record
 * less at the flow's and the refinement's peak: 6.2 MB on
 * table1-par-medium). */
void nest_rret_drop(struct bb_nest *n)
{
	free(n->recs.rret);
	n->recs.rret = NULL;
}

void nest_rret_again(struct bb_nest *n)
{
	struct nest_recs *r = &n->recs;
	r->rret = bb_xmalloc((r->caprec ? r->caprec : 1) * sizeof(*r->rret));
	/* one pass: a RET record names a CALL before it, already cleared */
	for (size_t i = 0; i < r->nrec; i++) {
		r->rret[i] = BB_NO_TIME;
		if (r->rec[i].op_from >> 30 == REC_RET && r->rec[i].arg != BB_NONE)
			r->rret[r->rec[i].arg] = r->rec[i].u.ts;
	}
}

/* Frees the records; with keep_reqs the req= labels stay, for the patterns
 * that carry them. The budget stays. */
void nest_recs_free(struct nest_recs *r, int keep_reqs)
{
	free(r->rec);
	free(r->rpath);
	free(r->rret);
	free(r->rreq);
	bb_intern_free(r->paths);
	if (!keep_reqs) {
		bb_intern_free(r->reqs);
		r->reqs = NULL;
	}
	free(r->uret);
	r->rec = NULL;
	r->rpath = NULL;
	r->rret = NULL;
	r->rreq = NULL;
	r->paths = NULL;
	r->uret = NULL;
	r->nrec = r->caprec = r->nearly = r->nuret = r->capuret = 0;
}

/* A trace in memory holds about as many records for its length as its
 * first REC_HINT_AT lines do: the records' arrays grow to that many (and a
 * fiftieth more) at once instead of doubling up to them, copying the records
 * each time (1% of table1-short's and par-medium's instructions); what is
 * left over goes at nest_recs_trim. */
#define REC_HINT_AT 4096

static void hint_records(struct bb_nest *n, const struct bb_reader *r, uint64_t k)
{
	uint64_t off = bb_reader_offset(r);
	if (!off || off >= n->recs.in_len || !n->phase.recording)
		return;
	double est = (double)k * (double)n->recs.in_len / (double)off * 1.02 + 64;
	if (est > (double)n->recs.caprec)
		recs_grow(n, est < (double)n->recs.rec_max ? (size_t)est : n->recs.rec_max);
}

int nest_pass(struct bb_nest *n, struct bb_reader *r, struct bb_err *err)
{
	struct bb_rec rec;
	int rc;
	uint64_t k = 0;
	n->phase.seq = 0;
	n->phase.now = INT64_MIN;
	n->nodes.nrmap = 0;
	free(n->nodes.rmap);
	n->nodes.rmap = NULL;
	if (n->phase.pass == 2) {
		n->st.children = 0;
		n->st.candidates = 0;
	}
	if (n->phase.pass == 1)
		for (size_t i = 0; i < bb_reader_nmeta(r); i++)
			if (strncmp(bb_reader_meta(r, i), "naming servers=", 15) == 0 &&
			    strcmp(bb_reader_meta(r, i) + 15, "hosts") != 0)
				n->cfg.alias = 1;
	while ((rc = bb_reader_next(r, &rec, err)) > 0) {
		if ((++k & 0xffff) == 0 && n->phase.progress)
			n->phase.progress(n->phase.progress_ctx, n->phase.pass, k);
		if (rec.ts_ns > n->phase.now) {
			n->phase.now = rec.ts_ns;
			advance(n);
		}
		if (n->phase.pass == 1) {
			if (n->st.messages++ == 0)
				n->st.first_ns = rec.ts_ns;
			n->st.last_ns = n->phase.now;
			if (k == REC_HINT_AT && n->recs.in_len)
				hint_records(n, r, k);
		}
		if (rec.op == BB_CALL) {
			n->st.calls += n->phase.pass == 1;
			on_call(n, r, &rec);
		} else if (rec.op == BB_RET) {
			n->st.returns += n->phase.pass == 1;
			on_ret(n, r, &rec);
		} else if (n->phase.pass == 1) {
			rec_push(n, rec.ts_ns, REC_MSG, 0, 0);
		}
		if ((k & 0xffff) == 0) {
			nest_heap_sample(n);
		}
	}
	if (rc < 0) {
		discard(n); /* the run is void, but frees cleanly */
		return rc;
	}
	nest_heap_sample(n);
	finish(n);
	struct bb_reader_stats rs;
	bb_reader_stats(r, &rs);
	if (n->phase.pass == 1)
		n->st.skipped = rs.skipped;
	return 0;
}

/* Pass 2 from the records pass 1 kept: the same steps as nest_pass, in the
 * same order, without reading the trace. Each CALL's time is replaced by its
 * call while it is open and put back at its return, so that the records can
 * be replayed again (--return-score replays them twice). */
void nest_replay(struct bb_nest *n)
{
	n->phase.seq = 0;
	n->phase.now = INT64_MIN;
	n->st.children = 0;
	n->st.candidates = 0;
	n->st.roots = 0;
	n->st.orphans = 0;
	n->phase.replay = 1;
	n->st.replayed = 1;
	for (size_t i = 0; i < n->recs.nrec; i++) {
		struct mrec *m = &n->recs.rec[i];
		if (((i + 1) & 0xffff) == 0 && n->phase.progress)
			n->phase.progress(n->phase.progress_ctx, 2, i + 1);
		int64_t ts = m->u.ts;
		if (ts > n->phase.now) {
			n->phase.now = ts;
			advance(n);
		}
		uint32_t op = m->op_from >> 30;
		if (op == REC_CALL) {
			struct call *c = call_new(n);
			c->call_ts = ts;
			c->ret_ts = BB_NO_TIME;
			c->seq = n->phase.seq++;
			c->from = m->op_from & REC_NODE_MAX;
			c->to = m->arg;
			c->ridx = (uint32_t)i;
			c->req = n->recs.rreq ? n->recs.rreq[i] : BB_NONE;
			if (n->inst)
				nest_inst_on_replay(n, c);
			if (n->recs.rret)
				c->end_ts = n->recs.rret[i];
			if (n->solve.ramb && !n->phase.gstage)
				c->palt = n->solve.ramb[i] >> 1 & 1;
			if (n->cfg.mode == BB_NEST_ORACLE) {
				if (n->recs.rpath[i] != BB_NONE) {
					c->path = (char *)(uintptr_t)bb_intern_str(
					    n->recs.paths, n->recs.rpath[i]);
					c->path_borrowed = 1;
				} else {
					n->st.no_path++;
				}
			}
			c->open = 1;
			c->gprev = n->calls.gtail;
			if (n->calls.gtail)
				n->calls.gtail->gnext = c;
			else
				n->calls.ghead = c;
			n->calls.gtail = c;
			into_link(n, c);
			m->u.c = c;
		} else if (op == REC_RET && m->arg != BB_NONE) {
			struct call *c = n->recs.rec[m->arg].u.c;
			n->recs.rec[m->arg].u.ts = c->call_ts; /* the records stay replayable */
			on_close(n, c, ts);
		}
	}
	nest_heap_sample(n);
	finish(n);
	n->phase.replay = 0;
}
