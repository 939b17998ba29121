/* conv_path.c - the recursive path search of figure 6, with its suppressions */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convolution/conv_int.h"

/* From a root node i, every destination j of i's messages starts a path
 * (FindPathsFromRoot). ProcessNode(j, V): V are the messages that reached j
 * on this path; the correlation of V's signal with the signal of everything
 * j sends has a spike at each delay d after which j tends to send; the
 * messages j sent d +- v after some message of V are the caused ones, grouped
 * by destination k; each group W continues the path at k. Unlike the
 * pseudo-code (which passes all of j->k), W holds only the matched messages,
 * so that a path's later edges are measured on that path's own messages.
 *
 * Suppressions (section 5.2.3, 5.3.1):
 *  - noise: a destination or a delay with fewer than min_count messages, or
 *    not clearly more than random coincidence would match (see below);
 *  - negative delays: lags in [-w, 0) are computed and count in the spike
 *    statistics, but hold no spike (see conv_spike.c);
 *  - cycles: a directed edge j->k is used at most once on a path;
 *  - derived paths: at vertex x_j, an edge j->k is derived when a sibling's
 *    subtree (j->c->...->j->k) already reaches k from j (when two siblings
 *    reach each other so, the one with the earlier delay stays); A->B->A is
 *    then dropped beside A->B->C->B->A (--keep-derived keeps it);
 *  - a path that comes back to its root node ends there (the root's next
 *    message starts a new path);
 *  - depth (max_depth) and graph size (max_vertices) bound the search. */

#define MAX_SPIKES 32
#define DETREND 16

static uint32_t new_vert(struct bb_conv *c, uint32_t node, uint32_t parent, uint64_t count)
{
	if (c->nverts == c->capverts) {
		c->capverts = c->capverts ? 2 * c->capverts : 64;
		c->verts = bb_xrealloc(c->verts, c->capverts * sizeof(*c->verts));
	}
	uint32_t v = (uint32_t)c->nverts++;
	struct conv_vert *x = &c->verts[v];
	memset(x, 0, sizeof(*x));
	x->node = node;
	x->parent = parent;
	x->count = count;
	x->first_child = x->next_sibling = BB_NONE;
	if (parent != BB_NONE) {
		/* append, keeping discovery order */
		uint32_t *pp = &c->verts[parent].first_child;
		while (*pp != BB_NONE)
			pp = &c->verts[*pp].next_sibling;
		*pp = v;
	}
	return v;
}

static int64_t primary_delay(const struct conv_vert *x)
{
	return x->ndelays ? x->delays[0].delay_ns : 0;
}

/* Whether the subtree below vertex u (u's own edge excluded) holds a live
 * edge from node j to node k. */
static int subtree_has_edge(const struct bb_conv *c, uint32_t u, uint32_t j, uint32_t k)
{
	for (uint32_t ch = c->verts[u].first_child; ch != BB_NONE; ch = c->verts[ch].next_sibling) {
		const struct conv_vert *y = &c->verts[ch];
		if (y->dead)
			continue;
		if (y->node == k && c->verts[u].node == j)
			return 1;
		if (subtree_has_edge(c, ch, j, k))
			return 1;
	}
	return 0;
}

static void kill(struct bb_conv *c, uint32_t u)
{
	c->verts[u].dead = 1;
	for (uint32_t ch = c->verts[u].first_child; ch != BB_NONE; ch = c->verts[ch].next_sibling)
		kill(c, ch);
}

static void suppress_derived(struct bb_conv *c, uint32_t x)
{
	uint32_t j = c->verts[x].node;
	for (uint32_t a = c->verts[x].first_child; a != BB_NONE; a = c->verts[a].next_sibling) {
		if (c->verts[a].dead)
			continue;
		int64_t da = primary_delay(&c->verts[a]);
		for (uint32_t s = c->verts[x].first_child; s != BB_NONE;
		     s = c->verts[s].next_sibling) {
			if (s == a || c->verts[s].dead)
				continue;
			int64_t ds = primary_delay(&c->verts[s]);
			if (!subtree_has_edge(c, s, j, c->verts[a].node))
				continue;
			/* s reaches a's node through j again. If a also reaches s's
			 * node so, the earlier delay (then the earlier found) wins. */
			if (!subtree_has_edge(c, a, j, c->verts[s].node) || ds < da ||
			    (ds == da && s < a)) {
				kill(c, a);
				c->st.derived_suppressed++;
				break;
			}
		}
	}
}

/* First index in node j's outgoing list with time >= t. */
static size_t out_lower(const struct bb_conv *c, const struct conv_node *n, int64_t t)
{
	size_t lo = 0, hi = n->nout;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->msgs[n->out[mid]].ts_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct found {
	uint32_t node;
	uint64_t total;     /* messages kept */
	uint64_t nin;       /* messages to node in the scanned span */
	uint64_t nk, nnull; /* null shifts: messages scanned, matched by chance */
	uint32_t kept;      /* mask of the spikes kept for this destination */
	uint64_t per[MAX_SPIKES];
};

static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_delay(const void *a, const void *b)
{
	const struct bb_vdelay *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->delay_ns < y->delay_ns ? -1 : x->delay_ns > y->delay_ns;
}

struct spike {
	int64_t lag;
	double height;
};

static int cmp_spike_height(const void *a, const void *b)
{
	const struct spike *x = a, *y = b;
	if (x->height != y->height)
		return x->height > y->height ? -1 : 1;
	return x->lag < y->lag ? -1 : x->lag > y->lag;
}

/* Path stack of directed edges (j, k), for cycle suppression. */
struct pstack {
	uint32_t *from, *to;
	size_t n;
};

static int on_path(const struct pstack *ps, uint32_t j, uint32_t k)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->from[i] == j && ps->to[i] == k)
			return 1;
	return 0;
}

#define NULLS 4

/* Matches at NULLS shifts, at least 2 v + 2 mu away from every spike,
 * added up per destination already in fd (nk: messages scanned, nnull:
 * matched). The shifts lie in the outer half of [0, hi], hi the lag window
 * but at most half of V's time span, so that the shifted V still overlaps
 * the messages it is matched against (a window longer than the trace would
 * otherwise put every shift past its end, and the null would see nothing);
 * when that half span is within reach of the causal delays (lo), the whole
 * window is used as before. */
static void null_counts(struct bb_conv *c, const struct conv_node *nj, const uint32_t *V, size_t nv,
                        const struct spike *sp, size_t nsp, int64_t lo, struct found *fd,
                        size_t nfd)
{
	int64_t mu = c->p.quantum_ns, tol = c->p.tolerance_ns;
	int64_t hi = c->follow_hi > 8 ? c->follow_hi : c->lag_hi;
	int64_t span = (c->msgs[V[nv - 1]].ts_ns - c->msgs[V[0]].ts_ns) / mu;
	if (span / 2 < hi && span / 4 > lo + 2)
		hi = span / 2;
	int used = 0;
	for (int i = 0; i < 4 * NULLS && used < NULLS; i++) {
		int64_t lag = hi / 2 + (hi / 2) * i / (4 * NULLS);
		int near = 0;
		for (size_t s = 0; s < nsp; s++) {
			int64_t dist = (lag - sp[s].lag) * mu;
			if (dist < 0)
				dist = -dist;
			if (dist <= 2 * tol + 2 * mu)
				near = 1;
		}
		if (near)
			continue;
		used++;
		int64_t shift = lag * mu;
		size_t z0 = out_lower(c, nj, c->msgs[V[0]].ts_ns + shift - tol);
		size_t z1 = out_lower(c, nj, c->msgs[V[nv - 1]].ts_ns + shift + tol + 1);
		for (size_t f = 0; f < nfd; f++) {
			size_t p = z0;
			for (size_t vi = 0; vi < nv; vi++) {
				int64_t lo_t = c->msgs[V[vi]].ts_ns + shift - tol,
				        up = lo_t + 2 * tol;
				while (p < z1 && (c->msgs[nj->out[p]].ts_ns < lo_t ||
				                  c->msgs[nj->out[p]].receiver != fd[f].node)) {
					if (c->msgs[nj->out[p]].ts_ns >= lo_t &&
					    c->msgs[nj->out[p]].ts_ns > up)
						break;
					p++;
				}
				if (p < z1 && c->msgs[nj->out[p]].ts_ns <= up &&
				    c->msgs[nj->out[p]].receiver == fd[f].node) {
					fd[f].nnull++;
					p++;
				}
			}
			for (size_t z = z0; z < z1; z++)
				fd[f].nk += c->msgs[nj->out[z]].receiver == fd[f].node;
		}
	}
}

/* The upper tail of the standard normal, and its inverse by bisection. */
static double normal_tail(double z)
{
	return 0.5 * erfc(z / sqrt(2.0));
}

static double normal_tail_inv(double a)
{
	double lo = -40, hi = 40;
	for (int i = 0; i < 200; i++) {
		double m = 0.5 * (lo + hi);
		if (normal_tail(m) > a)
			lo = m;
		else
			hi = m;
	}
	return hi;
}

/* The least x with P(X >= x) <= a for X ~ Binomial(n, p): the count of
 * chance matches that one lag reaches with probability at most a. Summed
 * exactly from the top of the range (so that a small a keeps its
 * precision) while n p (1 - p) <= 500, by the normal approximation above. */
static double binomial_need(double n, double p, double a)
{
	if (n <= 0 || p <= 0)
		return 1;
	if (p >= 1)
		return n + 1 <= 1 ? 1 : n; /* every message matches by chance */
	double var = n * p * (1 - p);
	if (var > 500)
		return ceil(n * p + normal_tail_inv(a) * sqrt(var));
	double top = floor(n * p + 40 * sqrt(var) + 60);
	if (top > floor(n))
		top = floor(n);
	double ln = lgamma(n + 1), lp = log(p), lq = log1p(-p), tail = 0, x = top + 1;
	while (x > 0) {
		double k = x - 1;
		double pmf = exp(ln - lgamma(k + 1) - lgamma(n - k + 1) + k * lp + (n - k) * lq);
		if (tail + pmf > a)
			break;
		tail += pmf;
		x--;
	}
	return x;
}

/* One step of the search (ProcessNode): the vertex x of node j reached by the
 * messages V, and what correlating V with j's messages found there. */
struct step {
	uint32_t x, j;
	const struct conv_node *nj;
	const uint32_t *V; /* message indices, in time order */
	size_t nv;
	int64_t hold_hi;             /* the latest lag followed (see hold_bound) */
	struct spike sp[MAX_SPIKES]; /* the spikes kept, strongest first */
	size_t nsp;
	size_t z0, nz;    /* j's messages in reach: out[z0 .. z0 + nz) */
	uint32_t *mask;   /* per message in reach: the spikes it matched */
	struct found *fd; /* per destination of those messages */
	size_t nfd;
};

/* FindCorrelation(V, T_j), over the lag window only, into c->corr: by FFT
 * or directly, whichever is asked for or (auto) cheaper. */
static void correlate(struct bb_conv *c, const struct step *s)
{
	struct conv_sig s1 = {0};
	int64_t *qs = bb_xmalloc(s->nv * sizeof(*qs));
	for (size_t i = 0; i < s->nv; i++)
		qs[i] = conv_quantum(c, c->msgs[s->V[i]].ts_ns);
	conv_sig_from_quanta(&s1, qs, s->nv);
	free(qs);
	int use_fft;
	if (c->p.method == BB_CONV_FFT)
		use_fft = 1;
	else if (c->p.method == BB_CONV_DIRECT)
		use_fft = 0;
	else
		use_fft =
		    conv_fft_cost(c->fft, &s1, s->j) <
		    (double)conv_xcorr_pairs(&s1, &s->nj->sig, c->lag_lo, c->lag_hi) + (double)s1.n;
	if (use_fft) {
		conv_xcorr_fft(c->fft, &s1, &s->nj->sig, s->j, c->corr);
		c->st.xcorr_fft++;
	} else {
		conv_xcorr_direct(&s1, &s->nj->sig, c->lag_lo, c->lag_hi, c->corr);
		c->st.xcorr_direct++;
	}
	conv_sig_free(&s1);
}

/* The hold bound: when V are calls into j or returns to j, and j answers
 * calls (CALL/RET pairs with ids), whatever j sends on behalf of a message
 * of V it sends before it returns, so no later than the longest call into
 * j. A later spike is a coincidence of load (bursts repeat), not a cause.
 * One-way messages (MSG) have no such bound. Returns the latest lag to
 * follow, in quanta. */
static int64_t hold_bound(const struct bb_conv *c, const struct step *s)
{
	int64_t hold_hi = c->follow_hi;
	if (!c->p.no_hold_bound && s->nj->paired) {
		int oneway = 0;
		for (size_t i = 0; i < s->nv && !oneway; i++)
			oneway = c->msgs[s->V[i]].op == BB_MSG;
		int64_t mu0 = c->p.quantum_ns;
		int64_t lim = (s->nj->hold_max + c->p.tolerance_ns + mu0 - 1) / mu0;
		if (!oneway && lim < hold_hi)
			hold_hi = lim;
	}
	return hold_hi;
}

/* Spikes of c->corr, strongest first, into s->sp; negative lags and lags
 * past the hold bound dropped. They are looked for in the correlation minus
 * its sliding median over 2 DETREND + 1 lags: with dense signals the
 * correlation also follows slow swings of load (over seconds), which would
 * otherwise dominate its deviation. */
static void pick_spikes(struct bb_conv *c, struct step *s)
{
	size_t L = (size_t)(c->lag_hi - c->lag_lo + 1);
	conv_detrend(c->corr, L, DETREND, c->resid);
	const double *r = c->resid;
	size_t zero = (size_t)-c->lag_lo, top = 0;
	for (size_t i = 1; i < L; i++)
		if (r[i] > r[top])
			top = i;
	if (top < zero)
		c->st.negative_suppressed++; /* the strongest correlation is anti-causal */
	size_t nfound = conv_spikes(r, L, zero, c->p.spike_n, c->p.spike_s, c->spk, L);
	struct spike *all = bb_xmalloc((nfound ? nfound : 1) * sizeof(*all));
	size_t na = 0;
	for (size_t i = 0; i < nfound; i++) {
		int64_t lag = c->lag_lo + (int64_t)c->spk[i];
		if (lag > c->follow_hi)
			continue;
		if (lag > s->hold_hi) {
			c->st.hold_suppressed++;
			continue;
		}
		/* C(d) roughly counts the message pairs at lag d: a spike lower
		 * than half the noise threshold cannot carry an edge. */
		if (r[c->spk[i]] < (double)c->p.min_count / 2)
			continue;
		all[na].lag = lag;
		all[na].height = r[c->spk[i]];
		na++;
	}
	qsort(all, na, sizeof(*all), cmp_spike_height);
	s->nsp = na < MAX_SPIKES ? na : MAX_SPIKES;
	memcpy(s->sp, all, s->nsp * sizeof(*s->sp));
	free(all);
}

/* FindCausedMessages, the range: j's messages sent d +- v after one of V for
 * some spike d, as s->z0 and s->nz. Returns 0 when there are none. */
static int caused_range(const struct bb_conv *c, struct step *s)
{
	int64_t mu = c->p.quantum_ns, tol = c->p.tolerance_ns;
	int64_t minshift = INT64_MAX, maxshift = INT64_MIN;
	for (size_t k = 0; k < s->nsp; k++) {
		minshift = s->sp[k].lag * mu < minshift ? s->sp[k].lag * mu : minshift;
		maxshift = s->sp[k].lag * mu > maxshift ? s->sp[k].lag * mu : maxshift;
	}
	size_t z0 = out_lower(c, s->nj, c->msgs[s->V[0]].ts_ns + minshift - tol);
	size_t z1 = out_lower(c, s->nj, c->msgs[s->V[s->nv - 1]].ts_ns + maxshift + tol + 1);
	if (z1 <= z0)
		return 0;
	s->z0 = z0;
	s->nz = z1 - z0;
	return 1;
}

/* The destinations of the messages in reach, in order of first sight, into
 * s->fd (with nin counted); returns new (caller frees) the index into s->fd
 * of each message's destination. */
static uint32_t *group_by_dest(const struct bb_conv *c, struct step *s)
{
	const uint32_t *out = s->nj->out + s->z0;
	size_t nz = s->nz, nfd = 0, capfd = 0;
	struct found *fd = NULL;
	uint32_t *dest = bb_xmalloc(nz * sizeof(*dest));
	for (size_t z = 0; z < nz; z++) {
		uint32_t k = c->msgs[out[z]].receiver;
		size_t f = 0;
		while (f < nfd && fd[f].node != k)
			f++;
		if (f == nfd) {
			if (nfd == capfd) {
				capfd = capfd ? 2 * capfd : 8;
				fd = bb_xrealloc(fd, capfd * sizeof(*fd));
			}
			memset(&fd[nfd], 0, sizeof(*fd));
			fd[nfd++].node = k;
		}
		dest[z] = (uint32_t)f;
		fd[f].nin++;
	}
	s->fd = fd;
	s->nfd = nfd;
	return dest;
}

/* Matches each spike one to one, per destination: a message of V causes at
 * most one message to each destination at each delay. Without this, on a
 * busy edge with a coarse quantum nearly every message lies within +- v of
 * some message of V, and W swells past V (the path loses its identity).
 * Spikes in order of height (s->sp is sorted so): a message claimed by a
 * stronger spike is not counted again by a weaker one, and a message of V
 * that caused one message to this destination causes no other. Sets
 * s->mask and the per-spike counts of s->fd. */
static void match_spikes(const struct bb_conv *c, struct step *s, const uint32_t *dest)
{
	const struct conv_msg *msgs = c->msgs;
	const uint32_t *V = s->V, *out = s->nj->out + s->z0;
	size_t nv = s->nv, nz = s->nz;
	int64_t mu = c->p.quantum_ns, tol = c->p.tolerance_ns;
	uint32_t *mask = s->mask;
	struct found *fd = s->fd;
	uint32_t *list = bb_xmalloc(nz * sizeof(*list));
	unsigned char *used = bb_xmalloc(nv);
	for (size_t f = 0; f < s->nfd; f++) {
		memset(used, 0, nv);
		size_t n = 0;
		for (size_t z = 0; z < nz; z++)
			if (dest[z] == f)
				list[n++] = (uint32_t)z;
		for (size_t k = 0; k < s->nsp; k++) {
			size_t p = 0;
			int64_t shift = s->sp[k].lag * mu;
			for (size_t i = 0; i < nv; i++) {
				int64_t lo = msgs[V[i]].ts_ns + shift - tol, hi = lo + 2 * tol;
				while (p < n && (msgs[out[list[p]]].ts_ns < lo ||
				                 (mask[list[p]] && msgs[out[list[p]]].ts_ns <= hi)))
					p++;
				if (!used[i] && p < n && msgs[out[list[p]]].ts_ns <= hi) {
					mask[list[p]] |= UINT32_C(1) << k;
					fd[f].per[k]++;
					used[i] = 1;
					p++;
				}
			}
		}
	}
	free(used);
	free(list);
}

/* Noise: besides min_count, a delay must match clearly more messages than
 * chance does. Chance is measured, not modelled (requests cluster in
 * sessions, so V is far from uniform): the same matching at NULLS shifts far
 * from every spike (and within the trace: see null_counts) counts per
 * destination how many of its n messages fall within +- v of V by accident,
 * a fraction p (one chance match added, so that a null that saw none does
 * not promise none). A delay needs a count that Binomial(n, p) reaches with
 * probability under alpha, the normal tail at N deviations (the paper's
 * threshold), summed exactly: the normal approximation overstates the tail
 * when n p is small. Sets each destination's kept spikes and the messages
 * they keep (total), and sorts s->fd by that total. */
static void keep_delays(struct bb_conv *c, struct step *s)
{
	struct found *fd = s->fd;
	size_t nfd = s->nfd;
	null_counts(c, s->nj, s->V, s->nv, s->sp, s->nsp,
	            s->hold_hi < c->follow_hi ? s->hold_hi : 0, fd, nfd);
	double alpha = normal_tail(c->p.spike_n);
	for (size_t f = 0; f < nfd; f++) {
		/* too few messages at the null shifts (a short trace) say nothing */
		double n = (double)fd[f].nk;
		double need = 0;
		if (n >= 30) {
			double p = ((double)fd[f].nnull + 1) / (n + 1);
			if (p > 1)
				p = 1;
			need = binomial_need((double)fd[f].nin, p, alpha);
		}
		/* min_count applies to the edge (all its delays together, below);
		 * a single delay needs half of it, and at least 2 messages. */
		uint64_t mind = c->p.min_count / 2 > 2 ? c->p.min_count / 2 : 2;
		for (size_t k = 0; k < s->nsp; k++)
			if (fd[f].per[k] >= mind && (double)fd[f].per[k] >= need)
				fd[f].kept |= UINT32_C(1) << k;
			else if (fd[f].per[k] >= mind)
				c->st.noise_suppressed++;
	}
	const uint32_t *out = s->nj->out + s->z0, *mask = s->mask;
	for (size_t z = 0; z < s->nz; z++) {
		if (!mask[z])
			continue;
		uint32_t k = c->msgs[out[z]].receiver;
		for (size_t f = 0; f < nfd; f++)
			if (fd[f].node == k && (mask[z] & fd[f].kept))
				fd[f].total++;
	}
	qsort(fd, nfd, sizeof(*fd), cmp_found);
}

static void process(struct bb_conv *c, uint32_t x, const uint32_t *V, size_t nv, unsigned depth,
                    struct pstack *ps);

/* The child vertex of s->x for destination f, its edge's delays (the kept
 * spikes, most frequent first), and the search on from it with the messages
 * W it was reached by. */
static void follow(struct bb_conv *c, const struct step *s, const struct found *f, unsigned depth,
                   struct pstack *ps)
{
	uint32_t k = f->node;
	const uint32_t *out = s->nj->out + s->z0;
	uint32_t *W = bb_xmalloc(f->total * sizeof(*W));
	size_t nw = 0;
	for (size_t z = 0; z < s->nz; z++) {
		uint32_t m = out[z];
		if ((s->mask[z] & f->kept) && c->msgs[m].receiver == k)
			W[nw++] = m;
	}
	uint32_t y = new_vert(c, k, s->x, nw);
	struct conv_vert *vy = &c->verts[y];
	for (size_t i = 0; i < s->nsp; i++) {
		if (!(f->kept & (UINT32_C(1) << i)))
			continue;
		vy->delays = bb_xrealloc(vy->delays, (vy->ndelays + 1) * sizeof(*vy->delays));
		vy->delays[vy->ndelays].delay_ns = s->sp[i].lag * c->p.quantum_ns;
		vy->delays[vy->ndelays].count = f->per[i];
		vy->ndelays++;
	}
	qsort(vy->delays, vy->ndelays, sizeof(*vy->delays), cmp_delay);
	ps->from[ps->n] = s->j;
	ps->to[ps->n] = k;
	ps->n++;
	process(c, y, W, nw, depth + 1, ps);
	ps->n--;
	free(W);
}

/* Whether the search stops at vertex x of node j before correlating. */
static int search_ends(struct bb_conv *c, uint32_t j, size_t nv, unsigned depth,
                       const struct pstack *ps)
{
	if (nv == 0 || c->nodes[j].nout == 0)
		return 1;
	/* A path that comes back to its root ends there: what the root sends
	 * next (the client's next request) starts a new path. */
	if (ps->n && ps->from[0] == j)
		return 1;
	if (depth >= c->p.max_depth || c->nverts >= c->p.max_vertices) {
		c->st.truncated++;
		if (c->nverts >= c->p.max_vertices)
			c->st.cut_vertices++;
		return 1;
	}
	return 0;
}

/* ProcessNode(j, x_j, V): V (message indices, in time order) reached vertex x. */
static void process(struct bb_conv *c, uint32_t x, const uint32_t *V, size_t nv, unsigned depth,
                    struct pstack *ps)
{
	uint32_t j = c->verts[x].node;
	if (search_ends(c, j, nv, depth, ps))
		return;
	struct step s = {.x = x, .j = j, .nj = &c->nodes[j], .V = V, .nv = nv};
	correlate(c, &s);
	s.hold_hi = hold_bound(c, &s);
	pick_spikes(c, &s);
	if (s.nsp == 0 || !caused_range(c, &s))
		return;
	s.mask = bb_xcalloc(s.nz, sizeof(*s.mask));
	uint32_t *dest = group_by_dest(c, &s);
	match_spikes(c, &s, dest);
	free(dest);
	keep_delays(c, &s);
	for (size_t f = 0; f < s.nfd; f++) {
		if (!s.fd[f].kept || s.fd[f].total < c->p.min_count || s.fd[f].total == 0)
			continue;
		if (on_path(ps, j, s.fd[f].node)) {
			c->st.cycles_suppressed++;
			continue;
		}
		if (c->nverts >= c->p.max_vertices) {
			c->st.truncated++;
			c->st.cut_vertices++;
			break;
		}
		follow(c, &s, &s.fd[f], depth, ps);
	}
	free(s.fd);
	free(s.mask);
	if (!c->p.keep_derived)
		suppress_derived(c, x);
}

/* A destination of a root and how many messages the root sends it. */
struct dest_count {
	uint64_t n;
	uint32_t node;
};

/* qsort order: more messages first, then the lower node index (first seen). */
static int cmp_dest_count(const void *pa, const void *pb)
{
	const struct dest_count *a = pa, *b = pb;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

/* A default root's sort key: by name (the order roots are searched and
 * listed), or more calls sent first, then the name (the fallback's choice). */
struct root_key {
	uint64_t calls;
	const char *name;
	uint32_t node;
};

static int cmp_root(const void *pa, const void *pb)
{
	const struct root_key *a = pa, *b = pb;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_root_name(const void *pa, const void *pb)
{
	const struct root_key *a = pa, *b = pb;
	return strcmp(a->name, b->name);
}

static struct root_key root_key(const struct bb_conv *c, uint32_t i)
{
	struct root_key k = {c->nodes[i].calls, bb_intern_str(c->names, i), i};
	return k;
}

/* Default roots: the sources of the call graph whose edges are the directed
 * CALL/MSG edges that carry at least min_count calls (an edge with fewer is
 * noise to the search, so a few stray calls into a client, e.g. a connection
 * picked up mid-stream the wrong way round, do not unseat it). Without such
 * edges, the nodes that send and are never called; when every node of the
 * call graph is called (a cycle), the one that sends the most calls (then
 * the first name). In name order: the same trace gives the same roots in the
 * same order, whatever order its nodes first appear in. */
static size_t default_roots(struct bb_conv *c, uint32_t *roots)
{
	size_t nn = c->nnodes, nroots = 0;
	uint64_t *cnt = bb_xcalloc(nn ? nn : 1, sizeof(*cnt));
	uint32_t *seen = bb_xmalloc((nn ? nn : 1) * sizeof(*seen));
	unsigned char *in = bb_xcalloc(nn ? nn : 1, 1), *out = bb_xcalloc(nn ? nn : 1, 1);
	size_t gedges = 0;
	for (uint32_t i = 0; i < nn; i++) {
		const struct conv_node *ni = &c->nodes[i];
		size_t ns = 0;
		for (size_t m = 0; m < ni->nout; m++) {
			const struct conv_msg *msg = &c->msgs[ni->out[m]];
			if (msg->op == BB_RET)
				continue;
			if (!cnt[msg->receiver]++)
				seen[ns++] = msg->receiver;
		}
		for (size_t k = 0; k < ns; k++) {
			if (cnt[seen[k]] >= c->p.min_count && cnt[seen[k]] > 0) {
				in[seen[k]] = out[i] = 1;
				gedges++;
			}
			cnt[seen[k]] = 0;
		}
	}
	if (gedges) {
		c->root_rule = "call graph sources";
		for (uint32_t i = 0; i < nn; i++)
			if (out[i] && !in[i])
				roots[nroots++] = i;
		if (!nroots) {
			c->root_rule = "most calls sent (the call graph has no source)";
			for (uint32_t i = 0; i < nn; i++) {
				struct root_key a = root_key(c, i), b;
				if (nroots)
					b = root_key(c, roots[0]);
				if (out[i] && (!nroots || cmp_root(&a, &b) < 0)) {
					roots[0] = i;
					nroots = 1;
				}
			}
		}
	} else {
		c->root_rule = "never called";
		for (uint32_t i = 0; i < nn; i++)
			if (c->nodes[i].nout && !c->nodes[i].called)
				roots[nroots++] = i;
	}
	struct root_key *keys = bb_xmalloc((nroots ? nroots : 1) * sizeof(*keys));
	for (size_t r = 0; r < nroots; r++)
		keys[r] = root_key(c, roots[r]);
	qsort(keys, nroots, sizeof(*keys), cmp_root_name);
	for (size_t r = 0; r < nroots; r++)
		roots[r] = keys[r].node;
	free(keys);
	free(cnt);
	free(seen);
	free(in);
	free(out);
	return nroots;
}

int conv_search(struct bb_conv *c, struct bb_err *err)
{
	size_t nn = c->nnodes;
	uint32_t *roots = c->roots = bb_xmalloc((nn ? nn : 1) * sizeof(*roots));
	size_t nroots = 0;
	if (c->p.nroots) {
		c->root_rule = "given";
		for (size_t r = 0; r < c->p.nroots; r++) {
			const char *name = c->p.roots[r];
			uint32_t i = bb_intern_find(c->names, name, strlen(name));
			if (i == BB_NONE) {
				bb_err_set(err, "root node \"%s\" is not in the trace", name);
				return BB_ERR_ARG;
			}
			roots[nroots++] = i;
		}
	} else {
		nroots = default_roots(c, roots);
	}
	c->nroots = nroots;

	struct pstack ps;
	ps.from = bb_xmalloc((c->p.max_depth + 2) * sizeof(*ps.from));
	ps.to = bb_xmalloc((c->p.max_depth + 2) * sizeof(*ps.to));
	ps.n = 0;
	uint64_t *cnt = bb_xcalloc(nn ? nn : 1, sizeof(*cnt));
	struct dest_count *dst = bb_xmalloc((nn ? nn : 1) * sizeof(*dst));
	for (size_t r = 0; r < nroots; r++) {
		uint32_t i = roots[r];
		const struct conv_node *ni = &c->nodes[i];
		if (c->nverts >= c->p.max_vertices) {
			c->st.truncated++; /* roots count against the limit too */
			c->st.cut_vertices++;
			break;
		}
		uint32_t xi = new_vert(c, i, BB_NONE, 0);
		/* Count only the receivers this root sends to: scanning every node
		 * per root is quadratic in the number of nodes. */
		size_t nd = 0;
		for (size_t m = 0; m < ni->nout; m++) {
			uint32_t rv = c->msgs[ni->out[m]].receiver;
			if (!cnt[rv]++)
				dst[nd++].node = rv;
		}
		for (size_t d = 0; d < nd; d++) {
			dst[d].n = cnt[dst[d].node];
			cnt[dst[d].node] = 0;
		}
		/* destinations in order of message count, then first sight */
		qsort(dst, nd, sizeof(*dst), cmp_dest_count);
		for (size_t d = 0; d < nd; d++) {
			uint32_t best = dst[d].node;
			uint64_t n = dst[d].n;
			if (n < c->p.min_count || n == 0)
				continue;
			if (c->nverts >= c->p.max_vertices) {
				c->st.truncated++;
				c->st.cut_vertices++;
				break;
			}
			uint32_t *V = bb_xmalloc(n * sizeof(*V));
			size_t nv = 0;
			for (size_t m = 0; m < ni->nout; m++)
				if (c->msgs[ni->out[m]].receiver == best)
					V[nv++] = ni->out[m];
			uint32_t xj = new_vert(c, best, xi, nv);
			ps.from[0] = i;
			ps.to[0] = best;
			ps.n = 1;
			process(c, xj, V, nv, 1, &ps);
			ps.n = 0;
			free(V);
		}
	}
	free(dst);
	free(cnt);
	free(ps.from);
	free(ps.to);
	return 0;
}
