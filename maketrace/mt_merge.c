/* mt_merge.c - bbskew's engine: k-way merge of traces, per-node re-timing, duplicate removal */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "maketrace/maketrace.h"

/* The pipeline is: a k-way merge of the inputs on their own timestamps (each
 * reader hands out records in time order); the sender's shift; a reorder heap
 * that holds a record only until no later input can produce an earlier one;
 * duplicate removal among records with the same timestamp; the writer.
 *
 * The shift of a node is offset + drift * (ts - t0), non-decreasing in ts for
 * drifts above -1e6 ppm, so a record read at raw time t or later gets at least
 * t + min(0, shift of every node at t): that is the release bound. With offsets
 * only (de-skewing), the heap holds at most the records of one offset spread. */

#define UNSET (BB_NONE - 1)

struct mrec {
	int64_t ts_ns;          /* after the shift */
	uint64_t seq;           /* arrival order, breaks ties */
	enum bb_op op;
	const char *sender, *receiver; /* borrowed from the reader's node table */
	const char *id;
	uint32_t id_len;
	uint32_t nattrs;
	struct bb_attr *attrs;  /* in the same allocation, after the struct */
};

struct input {
	struct bb_reader *r;
	struct bb_rec rec;
	int has;                /* rec holds the next record */
	size_t nmeta;           /* metadata lines written so far */
	uint32_t *map;          /* reader node index -> skew index, BB_NONE or UNSET */
	size_t nmap;
};

struct merge {
	struct input *in;
	size_t n;
	const struct bb_mt_skew *sk;
	int64_t *off;           /* per skew entry */
	double *drift;
	size_t nsk;
	int shifting;
	int64_t t0;
	int have_t0;
	struct mrec **heap;
	size_t nheap, capheap;
	uint64_t seq;
	struct mrec **group;    /* written records with timestamp group_ts (n >= 2) */
	size_t ngroup, capgroup;
	int64_t group_ts;
	struct bb_writer *w;
	struct bb_mt_merge_stats *st;
	struct bb_err *err;
};

static int advance(struct merge *m, struct input *in)
{
	int rc = bb_reader_next(in->r, &in->rec, m->err);
	if (rc < 0)
		return rc;
	in->has = rc == 1;
	if (in->has)
		m->st->records++;
	return 0;
}

static int write_new_meta(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		size_t nm = bb_reader_nmeta(in->r);
		for (; in->nmeta < nm; in->nmeta++) {
			int rc = bb_writer_meta(m->w, bb_reader_meta(in->r, in->nmeta), m->err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Skew index of the sender of in's current record. */
static uint32_t skew_index(struct merge *m, struct input *in)
{
	uint32_t node = in->rec.sender;
	if (node >= in->nmap) {
		size_t n = in->nmap ? in->nmap : 16;
		while (n <= node)
			n *= 2;
		in->map = bb_xrealloc(in->map, n * sizeof(*in->map));
		for (size_t i = in->nmap; i < n; i++)
			in->map[i] = UNSET;
		in->nmap = n;
	}
	if (in->map[node] == UNSET) {
		const char *name = bb_reader_node(in->r, node);
		in->map[node] = bb_mt_skew_find(m->sk, name, strlen(name));
	}
	return in->map[node];
}

/* Copies the current record of in, shifted by shift_ns, into one allocation. */
static struct mrec *copy_rec(const struct input *in, int64_t shift_ns)
{
	const struct bb_rec *r = &in->rec;
	size_t sz = sizeof(struct mrec) + r->nattrs * sizeof(struct bb_attr) + r->id_len + 1 +
	            BB_TIME_BUFSZ;
	for (uint32_t i = 0; i < r->nattrs; i++)
		sz += r->attrs[i].key_len + 1 + r->attrs[i].val_len + 1;
	struct mrec *c = bb_xmalloc(sz);
	c->ts_ns = bb_mt_time_add(r->ts_ns, shift_ns);
	c->op = r->op;
	c->sender = bb_reader_node(in->r, r->sender);
	c->receiver = bb_reader_node(in->r, r->receiver);
	c->nattrs = r->nattrs;
	c->attrs = (struct bb_attr *)(c + 1);
	char *p = (char *)(c->attrs + r->nattrs);
	memcpy(p, r->id_str, r->id_len);
	p[r->id_len] = 0;
	c->id = p;
	c->id_len = r->id_len;
	p += r->id_len + 1;
	int end_done = 0;
	for (uint32_t i = 0; i < r->nattrs; i++) {
		const struct bb_attr *a = &r->attrs[i];
		struct bb_attr *b = &c->attrs[i];
		memcpy(p, a->key, a->key_len);
		p[a->key_len] = 0;
		b->key = p;
		b->key_len = a->key_len;
		p += a->key_len + 1;
		if (shift_ns && r->end_ns != BB_NO_TIME && !end_done && a->key_len == 3 &&
		    !memcmp(a->key, "end", 3)) {
			/* end= is stamped by the same clock as the timestamp: shift it too
			 * (the first end= is the one the reader parsed) */
			end_done = 1;
			size_t n = bb_time_format(bb_mt_time_add(r->end_ns, shift_ns), p);
			b->val = p;
			b->val_len = (uint32_t)n;
			p += n + 1;
			continue;
		}
		memcpy(p, a->val, a->val_len);
		p[a->val_len] = 0;
		b->val = p;
		b->val_len = a->val_len;
		p += a->val_len + 1;
	}
	return c;
}

static int rec_less(const struct mrec *a, const struct mrec *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static void heap_push(struct merge *m, struct mrec *c)
{
	if (m->nheap == m->capheap) {
		m->capheap = m->capheap ? 2 * m->capheap : 256;
		m->heap = bb_xrealloc(m->heap, m->capheap * sizeof(*m->heap));
	}
	size_t i = m->nheap++;
	while (i > 0 && rec_less(c, m->heap[(i - 1) / 2])) {
		m->heap[i] = m->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	m->heap[i] = c;
}

static struct mrec *heap_pop(struct merge *m)
{
	struct mrec *top = m->heap[0], *x = m->heap[--m->nheap];
	size_t i = 0, n = m->nheap;
	for (;;) {
		size_t l = 2 * i + 1, k;
		if (l >= n)
			break;
		k = (l + 1 < n && rec_less(m->heap[l + 1], m->heap[l])) ? l + 1 : l;
		if (!rec_less(m->heap[k], x))
			break;
		m->heap[i] = m->heap[k];
		i = k;
	}
	if (n)
		m->heap[i] = x;
	return top;
}

static int same(const struct mrec *a, const struct mrec *b)
{
	if (a->ts_ns != b->ts_ns || a->op != b->op || a->id_len != b->id_len ||
	    a->nattrs != b->nattrs || strcmp(a->sender, b->sender) ||
	    strcmp(a->receiver, b->receiver) || memcmp(a->id, b->id, a->id_len))
		return 0;
	for (uint32_t i = 0; i < a->nattrs; i++) {
		const struct bb_attr *x = &a->attrs[i], *y = &b->attrs[i];
		if (x->key_len != y->key_len || x->val_len != y->val_len ||
		    memcmp(x->key, y->key, x->key_len) || memcmp(x->val, y->val, x->val_len))
			return 0;
	}
	return 1;
}

static void group_clear(struct merge *m)
{
	for (size_t i = 0; i < m->ngroup; i++)
		free(m->group[i]);
	m->ngroup = 0;
}

/* Writes c (taking ownership) unless it duplicates a record already written. */
static int out(struct merge *m, struct mrec *c)
{
	if (m->n >= 2) {
		if (m->ngroup && c->ts_ns != m->group_ts)
			group_clear(m);
		for (size_t i = 0; i < m->ngroup; i++) {
			if (same(m->group[i], c)) {
				m->st->duplicates++;
				free(c);
				return 0;
			}
		}
	}
	int rc = bb_writer_put(m->w, c->ts_ns, c->op, c->sender, c->receiver, c->id, c->id_len,
	                       c->attrs, c->nattrs, m->err);
	if (!rc)
		m->st->written++;
	if (m->n < 2 || rc) {
		free(c);
		return rc;
	}
	if (m->ngroup == m->capgroup) {
		m->capgroup = m->capgroup ? 2 * m->capgroup : 16;
		m->group = bb_xrealloc(m->group, m->capgroup * sizeof(*m->group));
	}
	m->group[m->ngroup++] = c;
	m->group_ts = c->ts_ns;
	return 0;
}

/* The input with the earliest current record (ties: the earlier input), or NULL. */
static struct input *earliest(struct merge *m)
{
	struct input *best = NULL;
	for (size_t i = 0; i < m->n; i++)
		if (m->in[i].has && (!best || m->in[i].rec.ts_ns < best->rec.ts_ns))
			best = &m->in[i];
	return best;
}

static int run(struct merge *m, const char *source)
{
	int rc;
	for (size_t i = 0; i < m->n; i++)
		if ((rc = advance(m, &m->in[i])) != 0)
			return rc;
	if ((rc = write_new_meta(m)) != 0)
		return rc;
	if (source && (rc = bb_writer_meta(m->w, source, m->err)) != 0)
		return rc;

	struct input *in;
	while ((in = earliest(m))) {
		if (!m->have_t0) {
			m->t0 = in->rec.ts_ns;
			m->have_t0 = 1;
		}
		int64_t shift = 0;
		if (m->shifting) {
			uint32_t k = skew_index(m, in);
			if (k != BB_NONE)
				shift = bb_mt_skew_shift(m->off[k], m->drift[k], m->t0, in->rec.ts_ns);
		}
		struct mrec *c = copy_rec(in, shift);
		c->seq = m->seq++;
		heap_push(m, c);
		if ((rc = advance(m, in)) != 0)
			return rc;
		/* metadata seen while reading goes out now, ahead of held records */
		if ((rc = write_new_meta(m)) != 0)
			return rc;
		struct input *next = earliest(m);
		if (!next)
			break;
		int64_t t = next->rec.ts_ns, bound = t;
		for (size_t k = 0; k < m->nsk; k++) {
			int64_t b = bb_mt_time_add(t, bb_mt_skew_shift(m->off[k], m->drift[k], m->t0, t));
			if (b < bound)
				bound = b;
		}
		while (m->nheap && m->heap[0]->ts_ns <= bound)
			if ((rc = out(m, heap_pop(m))) != 0)
				return rc;
	}
	while (m->nheap)
		if ((rc = out(m, heap_pop(m))) != 0)
			return rc;
	return 0;
}

int bb_mt_merge(struct bb_reader *const *in, size_t n, const struct bb_mt_skew *skew,
                const char *source, struct bb_writer *w, struct bb_mt_merge_stats *st,
                struct bb_err *err)
{
	struct bb_mt_merge_stats dummy;
	struct merge m = {0};
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	m.n = n;
	m.in = bb_xcalloc(n ? n : 1, sizeof(*m.in));
	for (size_t i = 0; i < n; i++)
		m.in[i].r = in[i];
	m.sk = skew;
	m.nsk = bb_mt_skew_count(skew);
	m.off = bb_xcalloc(m.nsk ? m.nsk : 1, sizeof(*m.off));
	m.drift = bb_xcalloc(m.nsk ? m.nsk : 1, sizeof(*m.drift));
	for (size_t k = 0; k < m.nsk; k++)
		bb_mt_skew_entry(skew, k, &m.off[k], &m.drift[k], NULL, NULL);
	m.shifting = bb_mt_skew_active(skew);
	m.w = w;
	m.st = st;
	m.err = err;

	int rc = run(&m, source);

	while (m.nheap)
		free(heap_pop(&m));
	group_clear(&m);
	free(m.group);
	free(m.heap);
	for (size_t i = 0; i < n; i++)
		free(m.in[i].map);
	free(m.in);
	free(m.off);
	free(m.drift);
	return rc;
}
