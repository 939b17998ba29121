/* conv_core.c - the convolution run: messages in, per-node signals, search, delay graph out */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "convolution/conv_int.h"

#define MIN_LAGS 256

void bb_conv_params_default(struct bb_conv_params *p)
{
	memset(p, 0, sizeof(*p));
	p->quantum_ns = 10 * 1000 * 1000;
	p->tolerance_ns = -1;
	p->max_delay_ns = 60 * BB_NS_PER_S;
	p->skew_ns = -1;
	p->spike_n = 4;
	p->spike_s = 3;
	p->min_count = 10;
	p->max_depth = 32;
	p->max_vertices = 100000;
	p->cache_bytes = (size_t)64 << 20;
	p->method = BB_CONV_AUTO;
}

const char *bb_conv_fftw_version(void)
{
	return fftw_version;
}

struct bb_conv *bb_conv_new(const struct bb_conv_params *p, struct bb_err *err)
{
	if (p->quantum_ns <= 0) {
		bb_err_set(err, "the quantum must be positive");
		return NULL;
	}
	if (p->max_delay_ns < 0) {
		bb_err_set(err, "the maximum delay must not be negative");
		return NULL;
	}
	if (!(p->spike_n > p->spike_s) || p->spike_s < 0) {
		bb_err_set(err, "spike thresholds need N > S >= 0");
		return NULL;
	}
	/* Bounds that keep every sum of a timestamp, a shift and a tolerance
	 * within int64_t (see bb_conv_add), whatever the options say. */
	if (p->quantum_ns > BB_CONV_DURATION_MAX || p->max_delay_ns > BB_CONV_DURATION_MAX ||
	    p->skew_ns > BB_CONV_DURATION_MAX || p->tolerance_ns > BB_CONV_DURATION_MAX) {
		bb_err_set(err, "the quantum, tolerance, maximum delay and skew must each be at "
		                "most 2^50 ns (13 days)");
		return NULL;
	}
	if (p->max_delay_ns / p->quantum_ns > (int64_t)1 << 22) {
		/* 2^22 lags need transforms of 2^24 points, about 0.7 GB of buffers */
		bb_err_set(err, "the lag window (max delay / quantum) exceeds 2^22 quanta: "
		                "lower --max-delay or raise the quantum");
		return NULL;
	}
	if (p->skew_ns > 0 && p->skew_ns / p->quantum_ns > (int64_t)1 << 22) {
		/* negative lags cost as much as positive ones */
		bb_err_set(err, "the skew window (skew / quantum) exceeds 2^22 quanta: "
		                "lower --skew or raise the quantum");
		return NULL;
	}
	if (p->max_depth == 0 || p->max_depth > 10000) {
		bb_err_set(err, "the depth limit must be within 1..10000");
		return NULL;
	}
	struct bb_conv *c = bb_xcalloc(1, sizeof(*c));
	c->p = *p;
	if (c->p.tolerance_ns < 0)
		c->p.tolerance_ns = c->p.quantum_ns / 2;
	if (c->p.skew_ns < 0)
		c->p.skew_ns = 2 * c->p.quantum_ns;
	c->names = bb_intern_new();
	c->paths = bb_intern_new();
	c->keys = bb_intern_new();
	return c;
}

void bb_conv_free(struct bb_conv *c)
{
	if (!c)
		return;
	bb_intern_free(c->names);
	bb_intern_free(c->paths);
	bb_intern_free(c->keys);
	free(c->msgs);
	free(c->roots);
	for (size_t i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].out);
		conv_sig_free(&c->nodes[i].sig);
	}
	free(c->nodes);
	conv_fft_free(c->fft);
	free(c->corr);
	free(c->resid);
	free(c->spk);
	for (size_t i = 0; i < c->nverts; i++)
		free(c->verts[i].delays);
	free(c->verts);
	free(c->vv);
	free(c->ve);
	bb_vval_free(c->params);
	bb_vval_free(c->stats);
	bb_vval_free(c->accuracy);
	free(c);
}

int bb_conv_add(struct bb_conv *c, int64_t ts_ns, enum bb_op op, const char *sender,
                const char *receiver, const char *id, size_t id_len, const char *path,
                struct bb_err *err)
{
	if (c->nmsgs >= UINT32_MAX - 1) {
		bb_err_set(err, "more than %u messages", (unsigned)(UINT32_MAX - 1));
		return BB_ERR_LIMIT;
	}
	if (ts_ns < BB_CONV_TS_MIN || ts_ns > BB_CONV_TS_MAX) {
		char t[BB_TIME_BUFSZ];
		bb_time_format(ts_ns, t);
		bb_err_set(err, "timestamp %s is outside the range of the convolution "
		                "(+-2^62 ns around 1970: years 1824 to 2116)", t);
		return BB_ERR_LIMIT;
	}
	if (c->nmsgs == c->capmsgs) {
		c->capmsgs = c->capmsgs ? 2 * c->capmsgs : 1024;
		c->msgs = bb_xrealloc(c->msgs, c->capmsgs * sizeof(*c->msgs));
	}
	struct conv_msg *m = &c->msgs[c->nmsgs++];
	m->ts_ns = ts_ns;
	m->sender = bb_intern_add(c->names, sender, strlen(sender));
	m->receiver = bb_intern_add(c->names, receiver, strlen(receiver));
	m->path = BB_NONE;
	m->op = (uint8_t)op;
	m->key = BB_NONE;
	if (id && id_len && !(id_len == 1 && id[0] == '-') && op != BB_MSG &&
	    id_len <= BB_LINE_MAX) {
		/* (caller, callee, id): a RET runs from the callee to the caller */
		char kb[8 + 256];
		char *k = id_len <= 256 ? kb : bb_xmalloc(8 + id_len);
		uint32_t a = op == BB_CALL ? m->sender : m->receiver;
		uint32_t b = op == BB_CALL ? m->receiver : m->sender;
		memcpy(k, &a, 4);
		memcpy(k + 4, &b, 4);
		memcpy(k + 8, id, id_len);
		m->key = bb_intern_add(c->keys, k, 8 + id_len);
		if (k != kb)
			free(k);
	}
	if (path) {
		m->path = bb_intern_add(c->paths, path, strlen(path));
		c->has_paths = 1;
	}
	return 0;
}

static int cmp_msg(const void *a, const void *b)
{
	const struct conv_msg *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->sender != y->sender)
		return x->sender < y->sender ? -1 : 1;
	if (x->receiver != y->receiver)
		return x->receiver < y->receiver ? -1 : 1;
	return x->path < y->path ? -1 : x->path > y->path;
}

static int is_sorted(const struct bb_conv *c)
{
	for (size_t i = 1; i < c->nmsgs; i++)
		if (cmp_msg(&c->msgs[i - 1], &c->msgs[i]) > 0)
			return 0;
	return 1;
}

/* Per node: messages sent in time order, and their signal. */
static void build_nodes(struct bb_conv *c)
{
	c->nnodes = bb_intern_count(c->names);
	c->nodes = bb_xcalloc(c->nnodes ? c->nnodes : 1, sizeof(*c->nodes));
	for (size_t i = 0; i < c->nmsgs; i++) {
		struct conv_node *n = &c->nodes[c->msgs[i].sender];
		if (n->nout == n->capout) {
			n->capout = n->capout ? 2 * n->capout : 16;
			n->out = bb_xrealloc(n->out, n->capout * sizeof(*n->out));
		}
		n->out[n->nout++] = (uint32_t)i;
		n->calls += c->msgs[i].op != BB_RET;
		c->nodes[c->msgs[i].receiver].received++;
		c->nodes[c->msgs[i].receiver].called += c->msgs[i].op != BB_RET;
	}
	/* Calls and their returns, paired by (caller, callee, id) in time order:
	 * a RET answers the latest open CALL with its key. The longest answered
	 * call into a node bounds how long after a message reached it the node
	 * can still act on that message's behalf (conv_path.c). */
	size_t nkeys = bb_intern_count(c->keys);
	int64_t *open = bb_xmalloc((nkeys ? nkeys : 1) * sizeof(*open));
	for (size_t k = 0; k < nkeys; k++)
		open[k] = INT64_MIN;
	for (size_t i = 0; i < c->nmsgs; i++) {
		const struct conv_msg *m = &c->msgs[i];
		if (m->key == BB_NONE)
			continue;
		if (m->op == BB_CALL) {
			open[m->key] = m->ts_ns;
		} else if (open[m->key] != INT64_MIN) {
			struct conv_node *callee = &c->nodes[m->sender];
			int64_t held = m->ts_ns - open[m->key];
			if (!callee->paired || held > callee->hold_max)
				callee->hold_max = held;
			callee->paired++;
			c->st.paired_calls++;
			open[m->key] = INT64_MIN;
		}
	}
	free(open);
	int64_t *qs = NULL;
	size_t capq = 0;
	for (size_t i = 0; i < c->nnodes; i++) {
		struct conv_node *n = &c->nodes[i];
		if (n->nout > capq) {
			capq = n->nout;
			qs = bb_xrealloc(qs, capq * sizeof(*qs));
		}
		for (size_t k = 0; k < n->nout; k++)
			qs[k] = conv_quantum(c, c->msgs[n->out[k]].ts_ns);
		conv_sig_from_quanta(&n->sig, qs, n->nout);
	}
	free(qs);
}

static int cmp_child(const struct bb_conv *c, uint32_t a, uint32_t b)
{
	const struct conv_vert *x = &c->verts[a], *y = &c->verts[b];
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	int s = strcmp(bb_intern_str(c->names, x->node), bb_intern_str(c->names, y->node));
	if (s)
		return s;
	return a < b ? -1 : a > b;
}

/* Depth-first numbering of the live vertices: children by count, then name. */
static void emit(struct bb_conv *c, uint32_t v, uint32_t parent_id, size_t *nv, size_t *ne)
{
	uint32_t id = (uint32_t)*nv;
	c->vv[*nv].id = id;
	c->vv[*nv].node = bb_intern_str(c->names, c->verts[v].node);
	(*nv)++;
	if (parent_id != BB_NONE) {
		struct bb_vedge *e = &c->ve[(*ne)++];
		e->from = parent_id;
		e->to = id;
		e->count = c->verts[v].count;
		e->ndelays = c->verts[v].ndelays;
		e->delays = c->verts[v].delays;
	}
	size_t nch = 0;
	for (uint32_t ch = c->verts[v].first_child; ch != BB_NONE; ch = c->verts[ch].next_sibling)
		nch += !c->verts[ch].dead;
	if (!nch)
		return;
	uint32_t *kids = bb_xmalloc(nch * sizeof(*kids));
	size_t k = 0;
	for (uint32_t ch = c->verts[v].first_child; ch != BB_NONE; ch = c->verts[ch].next_sibling)
		if (!c->verts[ch].dead)
			kids[k++] = ch;
	/* insertion sort: sibling lists are short */
	for (size_t i = 1; i < nch; i++)
		for (size_t m = i; m > 0 && cmp_child(c, kids[m - 1], kids[m]) > 0; m--) {
			uint32_t t = kids[m];
			kids[m] = kids[m - 1];
			kids[m - 1] = t;
		}
	for (size_t i = 0; i < nch; i++)
		emit(c, kids[i], id, nv, ne);
	free(kids);
}

static const char *method_name(enum bb_conv_method m)
{
	return m == BB_CONV_FFT ? "fft" : m == BB_CONV_DIRECT ? "direct" : "auto";
}

static void build_values(struct bb_conv *c)
{
	struct bb_vval *p = c->params = bb_vval_object();
	bb_vval_set_int(p, "quantum_ns", c->p.quantum_ns);
	bb_vval_set_int(p, "tolerance_ns", c->p.tolerance_ns);
	bb_vval_set_int(p, "max_delay_ns", c->p.max_delay_ns);
	bb_vval_set_int(p, "skew_ns", c->p.skew_ns);
	bb_vval_set_num(p, "spike_n", c->p.spike_n);
	bb_vval_set_num(p, "spike_s", c->p.spike_s);
	bb_vval_set_int(p, "min_count", (int64_t)c->p.min_count);
	bb_vval_set_int(p, "max_depth", c->p.max_depth);
	bb_vval_set(p, "keep_derived", bb_vval_bool(c->p.keep_derived));
	bb_vval_set(p, "hold_bound", bb_vval_bool(!c->p.no_hold_bound));
	bb_vval_set_str(p, "root_rule", c->root_rule ? c->root_rule : "given");
	bb_vval_set_str(p, "method", method_name(c->p.method));
	struct bb_vval *roots = bb_vval_set(p, "roots", bb_vval_array());
	for (size_t i = 0; i < c->nroots; i++)
		bb_vval_push(roots, bb_vval_str(bb_intern_str(c->names, c->roots[i])));

	struct bb_vval *s = c->stats = bb_vval_object();
	bb_vval_set_int(s, "messages", (int64_t)c->st.messages);
	bb_vval_set_int(s, "nodes", (int64_t)c->st.nodes);
	bb_vval_set_int(s, "trace_edges", (int64_t)c->st.edges_in_trace);
	bb_vval_set_int(s, "duration_quanta", c->st.duration_quanta);
	bb_vval_set_int(s, "vertices", (int64_t)c->graph.nvertices);
	bb_vval_set_int(s, "derived_suppressed", (int64_t)c->st.derived_suppressed);
	bb_vval_set_int(s, "cycles_suppressed", (int64_t)c->st.cycles_suppressed);
	bb_vval_set_int(s, "hold_suppressed", (int64_t)c->st.hold_suppressed);
	bb_vval_set_int(s, "paired_calls", (int64_t)c->st.paired_calls);
	bb_vval_set_int(s, "truncated", (int64_t)c->st.truncated);
}

int bb_conv_run(struct bb_conv *c, struct bb_err *err)
{
	if (c->ran) {
		bb_err_set(err, "bb_conv_run called twice");
		return BB_ERR_ARG;
	}
	c->ran = 1;
	if (!is_sorted(c))
		qsort(c->msgs, c->nmsgs, sizeof(*c->msgs), cmp_msg);
	c->t0_ns = c->nmsgs ? c->msgs[0].ts_ns : 0;
	build_nodes(c);
	c->st.messages = c->nmsgs;
	c->st.nodes = c->nnodes;
	if (c->nmsgs)
		c->st.duration_quanta = conv_quantum(c, c->msgs[c->nmsgs - 1].ts_ns) + 1;

	{
		/* distinct directed edges in the trace */
		uint32_t *seen = bb_xmalloc((c->nnodes ? c->nnodes : 1) * sizeof(*seen));
		for (size_t i = 0; i < c->nnodes; i++)
			seen[i] = BB_NONE;
		for (uint32_t i = 0; i < c->nnodes; i++)
			for (size_t k = 0; k < c->nodes[i].nout; k++) {
				uint32_t r = c->msgs[c->nodes[i].out[k]].receiver;
				if (seen[r] != i) {
					seen[r] = i;
					c->st.edges_in_trace++;
				}
			}
		free(seen);
	}

	int64_t mu = c->p.quantum_ns;
	c->lag_lo = -((c->p.skew_ns + mu - 1) / mu);
	c->follow_hi = (c->p.max_delay_ns + mu - 1) / mu;
	/* The spike statistics need enough lags to mean something: at least
	 * MIN_LAGS are computed, but spikes beyond the maximum delay are not followed. */
	c->lag_hi = c->follow_hi;
	if (c->lag_hi - c->lag_lo + 1 < MIN_LAGS)
		c->lag_hi = c->lag_lo + MIN_LAGS - 1;
	size_t L = (size_t)(c->lag_hi - c->lag_lo + 1);
	c->corr = bb_xmalloc(L * sizeof(*c->corr));
	c->resid = bb_xmalloc(L * sizeof(*c->resid));
	c->spk = bb_xmalloc(L * sizeof(*c->spk));
	if (c->p.method != BB_CONV_DIRECT)
		c->fft = conv_fft_new(c->lag_lo, c->lag_hi, c->p.cache_bytes);

	int rc = conv_search(c, err);
	if (rc < 0)
		return rc;

	size_t live = 0;
	for (size_t i = 0; i < c->nverts; i++)
		live += !c->verts[i].dead;
	c->vv = bb_xcalloc(live ? live : 1, sizeof(*c->vv));
	c->ve = bb_xcalloc(live ? live : 1, sizeof(*c->ve));
	size_t nv = 0, ne = 0;
	for (uint32_t i = 0; i < c->nverts; i++)
		if (c->verts[i].parent == BB_NONE && !c->verts[i].dead)
			emit(c, i, BB_NONE, &nv, &ne);
	c->graph.nvertices = nv;
	c->graph.nedges = ne;
	c->graph.vertices = c->vv;
	c->graph.edges = c->ve;

	if (c->fft) {
		struct conv_fft_stats fs;
		conv_fft_stats(c->fft, &fs);
		c->st.ffts = fs.ffts;
		c->st.cache_hits = fs.hits;
		c->st.cache_misses = fs.misses;
		c->st.peak_cache_bytes = fs.peak_cache_bytes;
		c->st.fft_size = conv_fft_size(c->fft);
	}
	build_values(c);
	if (c->p.truth)
		c->accuracy = conv_truth(c);
	c->graph.params = c->params;
	c->graph.stats = c->stats;
	c->graph.accuracy = c->accuracy;
	return 0;
}

const struct bb_vgraph *bb_conv_graph(const struct bb_conv *c)
{
	return &c->graph;
}

void bb_conv_get_stats(const struct bb_conv *c, struct bb_conv_stats *st)
{
	*st = c->st;
}
