/* nest_pairs.c - FindCallPairs: open calls, candidate parents, one streaming pass */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

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
	size_t before = n->ninto ? bb_intern_count(n->names) : 0;
	uint32_t k = bb_intern_add(n->names, s, len);
	if (k >= n->ninto) {
		size_t cap = n->ninto ? 2 * n->ninto : 16;
		while (cap <= k)
			cap *= 2;
		n->into = bb_xrealloc(n->into, cap * sizeof(*n->into));
		memset(&n->into[n->ninto], 0, (cap - n->ninto) * sizeof(*n->into));
		for (size_t i = n->ninto; i < cap; i++)
			n->into[i].host = n->into[i].svc = n->into[i].svc_next = BB_NONE;
		n->ninto = cap;
	}
	size_t off, hl;
	if (n->alias && k >= before && n->into[k].host == BB_NONE &&
	    (hl = host_of(s, len, &off)) > 0) {
		uint32_t h = node_index(n, s + off, hl);
		n->into[k].host = h;
		n->into[k].svc_next = n->into[h].svc;
		n->into[h].svc = k;
	}
	return k;
}

uint32_t nest_node(struct bb_nest *n, const struct bb_reader *r, uint32_t ri)
{
	if (ri >= n->nrmap) {
		size_t cap = n->nrmap ? n->nrmap : 16;
		while (cap <= ri)
			cap *= 2;
		n->rmap = bb_xrealloc(n->rmap, cap * sizeof(*n->rmap));
		for (size_t i = n->nrmap; i < cap; i++)
			n->rmap[i] = BB_NONE;
		n->nrmap = cap;
	}
	if (n->rmap[ri] == BB_NONE) {
		const char *s = bb_reader_node(r, ri);
		n->rmap[ri] = node_index(n, s, strlen(s));
	}
	return n->rmap[ri];
}

/* The open-call table's hash of (caller, callee, id), eight bytes of the id
 * at a time. Only the bucket depends on it: a return takes the earliest
 * matching call whatever the chain order. */
/* nest_node with the common case (a node already seen) inline. */
static inline uint32_t node_of(struct bb_nest *n, const struct bb_reader *r, uint32_t ri)
{
	return ri < n->nrmap && n->rmap[ri] != BB_NONE ? n->rmap[ri] : nest_node(n, r, ri);
}

/* Whether this pass only scores (pass 1, or the replay that builds the
 * return-side histograms): closed calls are freed, not kept for paths. */
static inline int scoring(const struct bb_nest *n)
{
	return n->pass == 1 || n->rstage || n->gstage || n->cstage;
}

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
		uint64_t w = 0; /* byte by byte: a short memcpy into w stalls the load */
		for (size_t j = 0; i + j < len; j++)
			w |= (uint64_t)(unsigned char)id[i + j] << (8 * j);
		h = (h ^ w) * m;
		h ^= h >> 32;
	}
	return h ^ (h >> 29);
}

static struct call *call_new(struct bb_nest *n)
{
	struct call *c = n->freelist;
	if (c)
		n->freelist = c->hnext;
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
	n->live++;
	if (n->live > n->st.peak_open)
		n->st.peak_open = n->live;
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
	c->hnext = n->freelist;
	n->freelist = c;
	n->live--;
}

static void htab_grow(struct bb_nest *n)
{
	size_t cap = n->hcap ? 2 * n->hcap : 1024;
	struct call **t = bb_xcalloc(cap, sizeof(*t));
	for (size_t i = 0; i < n->hcap; i++) {
		struct call *c = n->htab[i], *next;
		for (; c; c = next) {
			next = c->hnext;
			size_t k = c->idhash & (cap - 1);
			c->hnext = t[k];
			t[k] = c;
		}
	}
	free(n->htab);
	n->htab = t;
	n->hcap = cap;
}

static void htab_remove(struct bb_nest *n, struct call *c)
{
	struct call **pp = &n->htab[c->idhash & (n->hcap - 1)];
	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	c->hnext = NULL;
	n->hcount--;
}

static void into_link(struct bb_nest *n, struct call *c)
{
	struct node_list *l = &n->into[c->to];
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
	struct node_list *l = &n->into[c->to];
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
		n->ghead = c->gnext;
	if (c->gnext)
		c->gnext->gprev = c->gprev;
	else
		n->gtail = c->gprev;
	c->gprev = c->gnext = NULL;
	c->open = 0;
}

static void skip_add(struct bb_nest *n, uint64_t line)
{
	if (n->nskip == n->capskip) {
		n->capskip = n->capskip ? 2 * n->capskip : 64;
		n->skip = bb_xrealloc(n->skip, n->capskip * sizeof(*n->skip));
	}
	n->skip[n->nskip++] = line;
}

static int skip_has(const struct bb_nest *n, uint64_t line)
{
	size_t lo = 0, hi = n->nskip;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (n->skip[mid] < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n->nskip && n->skip[lo] == line;
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
	free(n->rec);
	free(n->rpath);
	free(n->rret);
	free(n->rreq);
	bb_intern_free(n->paths);
	bb_intern_free(n->reqs);
	n->rec = NULL;
	n->rpath = NULL;
	n->rret = NULL;
	n->rreq = NULL;
	n->paths = NULL;
	n->reqs = NULL;
	n->nrec = n->caprec = 0;
	n->recording = 0;
}

/* Appends a record; returns its index, or BB_NONE once recording stopped. */
static inline uint32_t rec_push(struct bb_nest *n, int64_t ts, uint32_t op, uint32_t from,
                                uint32_t arg)
{
	if (!n->recording)
		return BB_NONE;
	if (from > REC_NODE_MAX || n->nrec >= n->rec_max || n->nrec >= BB_NONE - 1) {
		rec_stop(n);
		return BB_NONE;
	}
	if (n->nrec == n->caprec) {
		size_t cap = n->caprec ? 2 * n->caprec : 4096;
		if (cap > n->rec_max)
			cap = n->rec_max;
		n->rec = bb_xrealloc(n->rec, cap * sizeof(*n->rec));
		if (n->mode == BB_NEST_ORACLE || n->p.bound)
			n->rpath = bb_xrealloc(n->rpath, cap * sizeof(*n->rpath));
		if (n->mode == BB_NEST_INFER && (n->p.return_score || n->p.bound))
			n->rret = bb_xrealloc(n->rret, cap * sizeof(*n->rret));
		if (n->rtok) {
			n->rtok = bb_xrealloc(n->rtok, cap * sizeof(*n->rtok));
			for (size_t i = n->caprec; i < cap; i++)
				n->rtok[i] = BB_NONE;
		}
		n->rreq = bb_xrealloc(n->rreq, cap * sizeof(*n->rreq));
		n->caprec = cap;
	}
	struct mrec *m = &n->rec[n->nrec];
	if (n->rpath)
		n->rpath[n->nrec] = BB_NONE;
	if (n->rreq)
		n->rreq[n->nrec] = BB_NONE;
	if (n->rret)
		n->rret[n->nrec] = BB_NO_TIME;
	m->u.ts = ts;
	m->op_from = op << 30 | from;
	m->arg = arg;
	return (uint32_t)n->nrec++;
}

/* A call that will never return: pass 1 remembers it so that pass 2 never
 * offers it as a parent (a child under it would be lost with it). */
static void drop_open(struct bb_nest *n, struct call *c, int evicted)
{
	htab_remove(n, c);
	open_unlink(n, c);
	into_unlink(n, c);
	skip_add(n, c->line);
	if (n->recording)
		n->rec[c->ridx].op_from = (uint32_t)REC_SKIP << 30;
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
	struct call *r = n->rhead;
	n->rhead = r->rnext;
	if (!n->rhead)
		n->rtail = NULL;
	if (!n->sstage) {
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
	int64_t skew = n->p.skew_window_ns;
	while (n->chead && nest_sub(n->now, n->chead->ret_ts) > skew) {
		struct call *c = n->chead;
		n->chead = c->cnext;
		if (!n->chead)
			n->ctail = NULL;
		c->cnext = NULL;
		into_unlink(n, c);
		if (scoring(n))
			call_free(n, c);
	}
	while (n->rhead && (skew == 0 || nest_sub(n->now, n->rhead->max_ret) > skew))
		release_root(n);
	if (n->pass == 1 && n->p.open_timeout_ns > 0 && n->now != INT64_MAX)
		while (n->ghead && n->ghead->call_ts < nest_sub(n->now, n->p.open_timeout_ns))
			drop_open(n, n->ghead, 1);
}

/* advance, with the common case (nothing to release) inline. */
static inline void advance(struct bb_nest *n)
{
	if (n->chead || n->rhead ||
	    (n->pass == 1 && n->ghead && n->p.open_timeout_ns > 0 &&
	     n->ghead->call_ts < nest_sub(n->now, n->p.open_timeout_ns)))
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
	if (!n->reqs)
		n->reqs = bb_intern_new();
	return bb_intern_add(n->reqs, req, len);
}

static void on_call(struct bb_nest *n, const struct bb_reader *r, const struct bb_rec *rec)
{
	if (n->pass == 2 && skip_has(n, rec->line))
		return;
	struct call *c = call_new(n);
	c->call_ts = rec->ts_ns;
	c->ret_ts = BB_NO_TIME;
	c->seq = n->seq++;
	c->line = rec->line;
	c->from = node_of(n, r, rec->sender);
	c->to = node_of(n, r, rec->receiver);
	if (n->pass == 1) {
		c->ridx = rec_push(n, rec->ts_ns, REC_CALL, c->from, c->to);
		size_t len;
		const char *path;
		if (n->rpath && c->ridx != BB_NONE && (path = bb_rec_attr(rec, "path", &len))) {
			if (!n->paths)
				n->paths = bb_intern_new();
			n->rpath[c->ridx] = bb_intern_add(n->paths, path, len);
		}
		if (n->mode == BB_NEST_INFER)
			nest_content_record(n, rec, c->ridx);
	}
	c->req = req_label(n, rec);
	if (n->pass == 1 && n->rreq && c->ridx != BB_NONE)
		n->rreq[c->ridx] = c->req;
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
	if (n->pass == 2 && n->mode == BB_NEST_ORACLE) {
		size_t len;
		const char *path = bb_rec_attr(rec, "path", &len);
		if (path)
			c->path = bb_xstrndup(path, len);
		else
			n->st.no_path++;
	}
	if (2 * n->hcount >= n->hcap)
		htab_grow(n);
	size_t k = c->idhash & (n->hcap - 1);
	c->hnext = n->htab[k];
	n->htab[k] = c;
	n->hcount++;
	c->open = 1;
	c->gprev = n->gtail;
	if (n->gtail)
		n->gtail->gnext = c;
	else
		n->ghead = c;
	n->gtail = c;
	into_link(n, c);
}

/* The earliest open call from -> to with this id, taken out of the table. */
static struct call *take_open(struct bb_nest *n, uint32_t from, uint32_t to, const char *id,
                              size_t len)
{
	if (!n->hcap)
		return NULL;
	uint64_t h = key_hash(from, to, id, len);
	struct call *best = NULL;
	for (struct call *c = n->htab[h & (n->hcap - 1)]; c; c = c->hnext)
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
	int64_t skew = n->p.skew_window_ns;
	int64_t limit = nest_sub(c->call_ts, -skew); /* skew >= 0 */
	for (struct call *p = n->into[node].head; p; p = p->nnext) {
		if (p->call_ts > limit || (p->call_ts == limit && p->seq > c->seq))
			break;
		if (p == c)
			continue;
		if (!p->open && !(skew > 0 && p->ret_ts >= nest_sub(n->now, skew)))
			continue;
		if (nc == n->capcand) {
			n->capcand = n->capcand ? 2 * n->capcand : 64;
			n->cand = bb_xrealloc(n->cand, n->capcand * sizeof(*n->cand));
		}
		n->cand[nc++] = p;
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
	if (!n->alias || c->from >= n->ninto || n->into[c->from].svc == BB_NONE)
		return 0;
	if (n->pass == 1)
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
	for (uint32_t s = n->into[c->from].svc; s != BB_NONE; s = n->into[s].svc_next)
		nc = candidates_into(n, c, s, nc);
	if (n->pass == 1) {
		struct pairc *e = nest_pairc(n, c->from, c->to, 1);
		e->al_n++;
		e->al_has += nc > 0;
	}
	/* back in call order (the earliest wins ties) */
	for (size_t i = direct ? direct : 1; i < nc; i++)
		for (size_t j = i; j > 0 && n->cand[j]->seq < n->cand[j - 1]->seq; j--) {
			struct call *t = n->cand[j];
			n->cand[j] = n->cand[j - 1];
			n->cand[j - 1] = t;
		}
	return nc;
}

/* After pass 1, host aliases: an edge whose calls often had no candidate
 * starts requests; its calls take no aliased parent. */
void nest_alias_roots(struct bb_nest *n)
{
	for (size_t i = 0; n->alias && i < n->pccap; i++) {
		struct pairc *e = &n->pc[i];
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
	for (size_t i = 0; i < nc; i++)
		if (cand[i]->path && strcmp(cand[i]->path, c->path) == 0)
			return cand[i];
	return NULL;
}

/* --global: the parent the assignment chose, among the candidates */
static struct call *global_parent(struct bb_nest *n, struct call *c, struct call **cand,
                                  size_t nc)
{
	uint32_t want = n->gpar[c->ridx];
	if (n->ramb && (n->ramb[c->ridx] & 1) && !c->pamb) {
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
	if (n->pass == 1)
		n->st.call_pairs++;
	if (n->pass == 1 && n->mode == BB_NEST_INFER &&
	    (n->p.scoreboard == BB_NEST_SB_CALLER || n->p.reassign || n->p.global ||
	     n->auto_g)) {
		nest_pair_count(n, c->from, c->to);
		n->into[c->to].ncalls++;
	}

	size_t nc = candidates(n, c);
	if (n->mode == BB_NEST_INFER)
		nc = nest_content_classes(n, c, n->cand, nc);
	if (nc) {
		n->st.children++;
		n->st.candidates += nc;
	}
	if (n->pass == 1) {
		if (n->mode == BB_NEST_INFER && nc)
			nest_score_child(n, c, n->cand, nc);
		if (n->mode == BB_NEST_INFER)
			nest_sure_child(n, c, n->cand, nc);
	} else if (n->cstage) {
		nest_content_learn(n, c, nc);
		nest_content_closed(n, c);
	} else if (n->rstage) {
		if (nc)
			nest_score_return(n, c, n->cand, nc);
	} else if (n->gstage) {
		if (nc && n->p.bound)
			nest_bound_collect(n, c, n->cand, nc);
		else if (nc)
			nest_global_collect(n, c, n->cand, nc);
	} else {
		struct call *parent = NULL;
		if (nc)
			parent = n->mode == BB_NEST_ORACLE ? oracle_parent(c, n->cand, nc)
			         : n->gpar                 ? global_parent(n, c, n->cand, nc)
			                                   : nest_choose_parent(n, c, n->cand, nc);
		if (parent && n->sstage)
			nest_seq_context(n, parent, c);
		if (n->sstage)
			nest_seq_returned(n, c);
		if (parent && n->inst)
			c->parent_ambiguous = nest_parent_ambiguous(n, c, n->cand, nc, parent);
		if (parent) {
			nest_attach(parent, c);
			update_max_ret(parent, c->max_ret);
		} else {
			n->st.roots++;
			c->rnext = NULL;
			if (n->rtail)
				n->rtail->rnext = c;
			else
				n->rhead = c;
			n->rtail = c;
		}
	}
	if (n->p.skew_window_ns > 0) {
		c->cnext = NULL;
		if (n->ctail)
			n->ctail->cnext = c;
		else
			n->chead = c;
		n->ctail = c;
	} else {
		into_unlink(n, c);
		if (scoring(n))
			call_free(n, c);
	}
}

static void on_ret(struct bb_nest *n, const struct bb_reader *r, const struct bb_rec *rec)
{
	/* a return travels callee -> caller */
	uint32_t caller = node_of(n, r, rec->receiver);
	uint32_t callee = node_of(n, r, rec->sender);
	struct call *c = take_open(n, caller, callee, rec->id_str, rec->id_len);
	if (n->pass == 1) {
		rec_push(n, rec->ts_ns, REC_RET, 0, c ? c->ridx : BB_NONE);
		if (c && n->rret && c->ridx != BB_NONE)
			n->rret[c->ridx] = rec->ts_ns;
	}
	if (!c) {
		if (n->pass == 1)
			n->st.unmatched_returns++;
		return;
	}
	if (n->inst)
		nest_inst_on_ret(n, c, rec);
	on_close(n, c, rec->ts_ns);
}

static void discard(struct bb_nest *n);

/* The end of a pass: what is still open never returned. */
static void finish(struct bb_nest *n)
{
	n->now = INT64_MAX;
	int64_t skew = n->p.skew_window_ns;
	/* flush everything: -1 also releases calls that return at INT64_MAX */
	n->p.skew_window_ns = -1;
	advance(n);
	n->p.skew_window_ns = skew;
	if (n->pass == 1) {
		while (n->ghead)
			drop_open(n, n->ghead, 0);
		if (n->nskip)
			qsort(n->skip, n->nskip, sizeof(*n->skip), cmp_u64);
	} else {
		discard(n);
	}
}

/* Frees every call still held, without making instances of them. In pass 2
 * every returned call is a pending root or hangs under a parent, so all are
 * reachable from the pending roots and the open calls. */
static void discard(struct bb_nest *n)
{
	while (n->chead) {
		struct call *c = n->chead;
		n->chead = c->cnext;
		c->cnext = NULL;
		into_unlink(n, c);
		if (scoring(n))
			call_free(n, c);
	}
	n->ctail = NULL;
	while (n->rhead) {
		struct call *c = n->rhead;
		n->rhead = c->rnext;
		free_tree(n, c);
	}
	n->rtail = NULL;
	while (n->ghead) {
		struct call *c = n->ghead;
		if (!n->replay)
			htab_remove(n, c);
		open_unlink(n, c);
		n->st.orphans += free_tree(n, c) - 1;
	}
}

void nest_reset_calls(struct bb_nest *n)
{
	while (n->freelist) {
		struct call *c = n->freelist;
		n->freelist = c->hnext;
		free(c);
	}
}

/* Samples the heap in use (glibc's mallinfo2: arena bytes in use plus
 * mmapped blocks), keeping the largest: the paper's "data space allocated".
 * It is process-wide, so it counts the reader and output too. */
static void heap_sample(struct bb_nest *n)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();
	size_t used = mi.uordblks + mi.hblkhd;
	if (used > n->heap_peak)
		n->heap_peak = used;
#else
	(void)n;
#endif
}


int nest_pass(struct bb_nest *n, struct bb_reader *r, struct bb_err *err)
{
	struct bb_rec rec;
	int rc;
	uint64_t k = 0;
	n->seq = 0;
	n->now = INT64_MIN;
	n->nrmap = 0;
	free(n->rmap);
	n->rmap = NULL;
	if (n->pass == 2) {
		n->st.children = 0;
		n->st.candidates = 0;
	}
	if (n->pass == 1)
		for (size_t i = 0; i < bb_reader_nmeta(r); i++)
			if (strncmp(bb_reader_meta(r, i), "naming servers=", 15) == 0 &&
			    strcmp(bb_reader_meta(r, i) + 15, "hosts") != 0)
				n->alias = 1;
	while ((rc = bb_reader_next(r, &rec, err)) > 0) {
		if ((++k & 0xffff) == 0 && n->progress)
			n->progress(n->progress_ctx, n->pass, k);
		if (rec.ts_ns > n->now) {
			n->now = rec.ts_ns;
			advance(n);
		}
		if (n->pass == 1) {
			if (n->st.messages++ == 0)
				n->st.first_ns = rec.ts_ns;
			n->st.last_ns = n->now;
		}
		if (rec.op == BB_CALL) {
			n->st.calls += n->pass == 1;
			on_call(n, r, &rec);
		} else if (rec.op == BB_RET) {
			n->st.returns += n->pass == 1;
			on_ret(n, r, &rec);
		} else if (n->pass == 1) {
			rec_push(n, rec.ts_ns, REC_MSG, 0, 0);
		}
		if ((k & 0xffff) == 0) {
			heap_sample(n);
		}
	}
	if (rc < 0) {
		discard(n); /* the run is void, but frees cleanly */
		return rc;
	}
	heap_sample(n);
	finish(n);
	struct bb_reader_stats rs;
	bb_reader_stats(r, &rs);
	if (n->pass == 1)
		n->st.skipped = rs.skipped;
	return 0;
}

/* Pass 2 from the records pass 1 kept: the same steps as nest_pass, in the
 * same order, without reading the trace. Each CALL's time is replaced by its
 * call while it is open and put back at its return, so that the records can
 * be replayed again (--return-score replays them twice). */
void nest_replay(struct bb_nest *n)
{
	n->seq = 0;
	n->now = INT64_MIN;
	n->st.children = 0;
	n->st.candidates = 0;
	n->st.roots = 0;
	n->st.orphans = 0;
	n->replay = 1;
	n->st.replayed = 1;
	for (size_t i = 0; i < n->nrec; i++) {
		struct mrec *m = &n->rec[i];
		if (((i + 1) & 0xffff) == 0 && n->progress)
			n->progress(n->progress_ctx, 2, i + 1);
		int64_t ts = m->u.ts;
		if (ts > n->now) {
			n->now = ts;
			advance(n);
		}
		uint32_t op = m->op_from >> 30;
		if (op == REC_CALL) {
			struct call *c = call_new(n);
			c->call_ts = ts;
			c->ret_ts = BB_NO_TIME;
			c->seq = n->seq++;
			c->from = m->op_from & REC_NODE_MAX;
			c->to = m->arg;
			c->ridx = (uint32_t)i;
			c->req = n->rreq ? n->rreq[i] : BB_NONE;
			if (n->inst)
				nest_inst_on_replay(n, c);
			if (n->rret)
				c->end_ts = n->rret[i];
			if (n->ramb && !n->gstage)
				c->palt = n->ramb[i] >> 1 & 1;
			if (n->mode == BB_NEST_ORACLE) {
				if (n->rpath[i] != BB_NONE) {
					c->path = (char *)(uintptr_t)bb_intern_str(n->paths, n->rpath[i]);
					c->path_borrowed = 1;
				} else {
					n->st.no_path++;
				}
			}
			c->open = 1;
			c->gprev = n->gtail;
			if (n->gtail)
				n->gtail->gnext = c;
			else
				n->ghead = c;
			n->gtail = c;
			into_link(n, c);
			m->u.c = c;
		} else if (op == REC_RET && m->arg != BB_NONE) {
			struct call *c = n->rec[m->arg].u.c;
			n->rec[m->arg].u.ts = c->call_ts; /* the records stay replayable */
			on_close(n, c, ts);
		}
	}
	heap_sample(n);
	finish(n);
	n->replay = 0;
}
