/* nest_inst.c - path instances as they complete: their calls' attributes, ambiguity, viz's model */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* A call's proto= and req= are kept as one string "PROTO\0REQ\0" (either may
 * be empty: absent). Pass 2 reading the trace gives each call its own copy,
 * freed with the call, so memory follows the open calls; pass 2 replaying
 * pass 1's records finds them in a table pass 1 filled, one index a record. */
struct nest_inst {
	bb_nest_instance_fn fn;
	void *ctx;
	int stopped;               /* the sink failed: no more instances */
	uint64_t seq;
	struct bb_intern *attrs;   /* recorded attribute strings */
	uint32_t *rattr;           /* per recorded CALL: its string in attrs, or BB_NONE */
	size_t nrattr;
	char **shape, **pid;       /* per pattern (key index): text and id, or NULL */
	size_t npat;
	struct bb_vcall *calls;    /* scratch for one instance */
	size_t capcalls;
	char *buf;                 /* scratch for one attribute string */
	size_t capbuf;
};

void bb_nest_set_instances(struct bb_nest *n, bb_nest_instance_fn fn, void *ctx)
{
	if (!fn) {
		nest_inst_free(n->inst);
		n->inst = NULL;
		return;
	}
	if (!n->inst)
		n->inst = bb_xcalloc(1, sizeof(*n->inst));
	n->inst->fn = fn;
	n->inst->ctx = ctx;
}

void nest_inst_free(struct nest_inst *s)
{
	if (!s)
		return;
	bb_intern_free(s->attrs);
	free(s->rattr);
	for (size_t i = 0; i < s->npat; i++) {
		free(s->shape[i]);
		free(s->pid[i]);
	}
	free(s->shape);
	free(s->pid);
	free(s->calls);
	free(s->buf);
	free(s);
}

void nest_inst_restart(struct nest_inst *s)
{
	if (!s)
		return;
	bb_intern_free(s->attrs);
	free(s->rattr);
	s->attrs = NULL;
	s->rattr = NULL;
	s->nrattr = 0;
}

static size_t clen(const char *s, size_t len)
{
	return s ? strnlen(s, len) : 0;
}

/* Builds "PROTO\0REQ\0" in s->buf from the call's (old, may be NULL) and the
 * record's attributes: what the call has wins, the record fills the gaps.
 * Returns its length, or 0 when both are absent. */
static size_t merge(struct nest_inst *s, const char *old, const struct bb_rec *rec)
{
	size_t pl, rl;
	const char *p = bb_rec_attr(rec, "proto", &pl), *r = bb_rec_attr(rec, "req", &rl);
	pl = clen(p, pl);
	rl = clen(r, rl);
	if (old && *old) {
		p = old;
		pl = strlen(old);
	}
	if (old && old[strlen(old) + 1]) {
		r = old + strlen(old) + 1;
		rl = strlen(r);
	}
	if (!pl && !rl)
		return 0;
	if (s->capbuf < pl + rl + 2) {
		s->capbuf = 2 * (pl + rl + 2);
		s->buf = bb_xrealloc(s->buf, s->capbuf);
	}
	if (pl)
		memmove(s->buf, p, pl);
	s->buf[pl] = '\0';
	if (rl)
		memmove(s->buf + pl + 1, r, rl);
	s->buf[pl + 1 + rl] = '\0';
	return pl + rl + 2;
}

static void set_owned(struct call *c, const char *buf, size_t len)
{
	if (c->attr_owned)
		free((char *)(uintptr_t)c->attr);
	char *a = bb_xmalloc(len);
	memcpy(a, buf, len);
	c->attr = a;
	c->attr_owned = 1;
}

static void record(struct bb_nest *n, uint32_t ridx, size_t len)
{
	struct nest_inst *s = n->inst;
	if (ridx >= s->nrattr) {
		size_t cap = s->nrattr ? s->nrattr : 4096;
		while (cap <= ridx)
			cap *= 2;
		s->rattr = bb_xrealloc(s->rattr, cap * sizeof(*s->rattr));
		for (size_t i = s->nrattr; i < cap; i++)
			s->rattr[i] = BB_NONE;
		s->nrattr = cap;
	}
	if (!s->attrs)
		s->attrs = bb_intern_new();
	s->rattr[ridx] = bb_intern_add(s->attrs, s->buf, len);
}

/* k records were put before the others (nest_recs_early): the recorded
 * calls' strings move up with them. */
void nest_inst_shift(struct bb_nest *n, size_t k)
{
	struct nest_inst *s = n->inst;
	if (!s || !s->nrattr || !k)
		return;
	s->rattr = bb_xrealloc(s->rattr, (s->nrattr + k) * sizeof(*s->rattr));
	memmove(s->rattr + k, s->rattr, s->nrattr * sizeof(*s->rattr));
	for (size_t i = 0; i < k; i++)
		s->rattr[i] = BB_NONE;
	s->nrattr += k;
}

static const char *recorded(const struct bb_nest *n, uint32_t ridx)
{
	const struct nest_inst *s = n->inst;
	return ridx < s->nrattr && s->rattr[ridx] != BB_NONE ? bb_intern_str(s->attrs, s->rattr[ridx])
	                                                     : NULL;
}

void nest_inst_on_call(struct bb_nest *n, struct call *c, const struct bb_rec *rec)
{
	size_t len = merge(n->inst, NULL, rec);
	if (!len)
		return;
	if (n->phase.pass == 1) {
		if (n->phase.recording && c->ridx != BB_NONE)
			record(n, c->ridx, len);
	} else {
		set_owned(c, n->inst->buf, len);
	}
}

void nest_inst_on_ret(struct bb_nest *n, struct call *c, const struct bb_rec *rec)
{
	if (n->phase.pass == 1) {
		if (!n->phase.recording || c->ridx == BB_NONE)
			return;
		size_t len = merge(n->inst, recorded(n, c->ridx), rec);
		if (len)
			record(n, c->ridx, len);
	} else {
		size_t len = merge(n->inst, c->attr, rec);
		if (len)
			set_owned(c, n->inst->buf, len);
	}
}

void nest_inst_on_replay(struct bb_nest *n, struct call *c)
{
	c->attr = recorded(n, c->ridx);
	c->attr_owned = 0;
}

/* Whether child's parent was ambiguous: the one place that decides what
 * `ambiguous` means in bbnest --instances and --otlp. It is the flag the
 * choice set (nest_score.c for the greedy choice, nest_global.c for
 * --global; NEST_AMB_SHARE), so that the instances, the count intervals
 * and the stats agree. The oracle's parents are never ambiguous. */
int nest_parent_ambiguous(struct bb_nest *n, struct call *child, struct call **cand, size_t nc,
                          struct call *parent)
{
	(void)cand;
	(void)parent;
	if (n->cfg.mode == BB_NEST_ORACLE || nc < 2)
		return 0;
	return child->pamb;
}

static size_t count_calls(const struct call *c)
{
	size_t k = 1;
	for (const struct call *ch = c->child; ch; ch = ch->sibling)
		k += count_calls(ch);
	return k;
}

static void fill(struct bb_nest *n, const struct call *c, int32_t parent, int64_t pstart,
                 size_t *k)
{
	struct bb_vcall *v = &n->inst->calls[*k];
	int32_t me = (int32_t)(*k)++;
	v->caller = bb_intern_str(n->nodes.names, c->from);
	v->callee = bb_intern_str(n->nodes.names, c->to);
	v->start_ns = c->call_ts;
	v->end_ns = c->ret_ts;
	v->delay_ns = parent >= 0 ? nest_sub(c->call_ts, pstart) : 0;
	v->proto = c->attr && *c->attr ? c->attr : NULL;
	v->req = c->attr && c->attr[strlen(c->attr) + 1] ? c->attr + strlen(c->attr) + 1 : NULL;
	v->parent = parent;
	v->ambiguous = c->parent_ambiguous;
	for (const struct call *ch = c->child; ch; ch = ch->sibling)
		fill(n, ch, me, c->call_ts, k);
}

void nest_inst_emit(struct bb_nest *n, const struct call *root, uint32_t key)
{
	struct nest_inst *s = n->inst;
	if (s->stopped)
		return;
	if (key >= s->npat) {
		size_t cap = s->npat ? 2 * s->npat : 64;
		while (cap <= key)
			cap *= 2;
		s->shape = bb_xrealloc(s->shape, cap * sizeof(*s->shape));
		s->pid = bb_xrealloc(s->pid, cap * sizeof(*s->pid));
		memset(s->shape + s->npat, 0, (cap - s->npat) * sizeof(*s->shape));
		memset(s->pid + s->npat, 0, (cap - s->npat) * sizeof(*s->pid));
		s->npat = cap;
	}
	if (!s->shape[key]) {
		s->shape[key] = nest_pattern_text(n, &n->pats.pat[key]);
		s->pid[key] = bb_xmalloc(BB_PATTERN_ID_BUFSZ);
		bb_viz_shape_id(s->shape[key], s->pid[key]);
	}
	size_t nc = count_calls(root), k = 0;
	if (nc > s->capcalls) {
		s->capcalls = 2 * nc;
		s->calls = bb_xrealloc(s->calls, s->capcalls * sizeof(*s->calls));
	}
	fill(n, root, -1, root->call_ts, &k);
	struct bb_vinstance in = {
		.seq = s->seq++,
		.pattern = s->pid[key],
		.shape = s->shape[key],
		.start_ns = root->call_ts,
		.latency_ns = nest_sub(root->ret_ts, root->call_ts),
		.ncalls = nc,
		.calls = s->calls,
	};
	if (s->fn(s->ctx, &in) != 0)
		s->stopped = 1;
}
