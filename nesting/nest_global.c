/* nest_global.c - --global: FindNestedPairs as one assignment of children to parents */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))

static inline int bit_get(const uint8_t *a, size_t i)
{
	return a[i >> 3] >> (i & 7) & 1;
}

static inline void bit_set(uint8_t *a, size_t i)
{
	a[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* Whether child ci keeps its parent this round (a round near the changes
 * that does not decide it again: near_changes). */
static inline int kept(const struct nest_global *g, size_t ci)
{
	return g->redo && !bit_get(g->redo, ci);
}

/* The greedy FindNestedPairs gives each child the best parent for it alone,
 * one child at a time. At high parallelism that gives a web-server call two
 * application-server children and leaves a sibling call with none, though
 * the call counts show every web-server call makes exactly two calls, at
 * most one into each callee. --global first collects every child's
 * candidates with their scores (a replay of the kept messages), then
 * chooses all parents at once: the assignment that maximises the sum of the
 * children's log scores, subject to capacities pass 1's counts support
 * (nest_total_cap, nest_once), as a min-cost flow solved by successive shortest
 * paths (nest_global_solve); then a last replay builds the paths from the
 * chosen parents. */

/* Scores child x (call c) against its candidates cand (its entries' order)
 * into its entries: each one's log score, queue offset (ek) and the
 * ambiguity marks. */
static void score_child(struct bb_nest *n, const struct nest_gchild *x, const struct call *c,
                        struct call **cand, size_t nc)
{
	struct nest_global *g = &n->solve.glob;
	double best = 0, sum = 0;
	size_t first = x->off;
	if (g->ek)
		nest_queue_ranks(n, c, cand, nc, &g->ek[first]);
	struct nest_edge_look look;
	nest_edge_look(n, c, &look);
	/* without tokens every content factor is 1 (nest_content_factor) */
	int content = n->content.rtok && n->phase.pass == 2;
	for (size_t i = 0; i < nc; i++) {
		struct nest_gent *e = &g->ent[first + i];
		double s = nest_base_score(n, cand[i], c, &look);
		if (content)
			s *= nest_content_factor(n, c, i);
		if (s > 0) {
			sum += s;
			best = s > best ? s : best;
		}
		e->par = cand[i]->ridx;
		e->w = s > 0 ? (float)log(s) : -INFINITY;
	}
	/* ambiguous: even the best candidate has under NEST_AMB_SHARE of the
	 * scores (the assignment may pick another, which is less sure still) */
	if (nc > 1 && !c->cexact && !(best > 0 && best >= NEST_AMB_SHARE * sum)) {
		if (!n->solve.ramb)
			n->solve.ramb = bb_xcalloc(n->recs.nrec ? n->recs.nrec : 1, 1);
		n->solve.ramb[c->ridx] |= 1;
		/* the others that could be its parent may lack a child of theirs */
		float wmin = (float)log((1 - NEST_AMB_SHARE) * sum);
		for (size_t i = 0; i < nc; i++)
			if (g->ent[first + i].w >= wmin)
				n->solve.ramb[cand[i]->ridx] |= 2;
	}
}

/* Appends child c and its candidates, unscored; returns it, or NULL over
 * the budget. */
static struct nest_gchild *append_child(struct bb_nest *n, const struct call *c,
                                        struct call **cand, size_t nc)
{
	struct nest_global *g = &n->solve.glob;
	if (g->full)
		return NULL;
	/* the budget counts 16 bytes a candidate, 20 a child (the entry's
	 * former size: the same traces fit as before) */
	if ((g->nent + nc) * 16 + g->nch * 20 > n->cfg.p.memory_bytes) {
		g->full = 1; /* greedy choice instead (global_used stays 0) */
		return NULL;
	}
	if (g->nch == g->capch) {
		g->capch = g->capch ? 2 * g->capch : MAX(g->hintch, 1024);
		g->ch = bb_xrealloc(g->ch, g->capch * sizeof(*g->ch));
		if (g->keep && n->content.rtok)
			g->cex = bb_xrealloc(g->cex, g->capch);
	}
	if (g->nent + nc > g->capent) {
		while (g->nent + nc > g->capent)
			g->capent = g->capent ? 2 * g->capent : MAX(g->hintent, 4096);
		g->ent = bb_xrealloc(g->ent, g->capent * sizeof(*g->ent));
		if (n->gaps.soff) /* a last round's assignment: queue offsets */
			g->ek = bb_xrealloc(g->ek, g->capent);
		if (g->keep && n->content.rtok)
			g->cls = bb_xrealloc(g->cls, g->capent);
	}
	struct nest_gchild *x = &g->ch[g->nch];
	x->ridx = c->ridx;
	x->c = c->to;
	x->off = g->nent;
	x->nc = (uint32_t)nc;
	if (g->cls) {
		g->cex[g->nch] = c->cexact;
		memcpy(&g->cls[g->nent], n->calls.ccls, nc);
	}
	for (size_t i = 0; i < nc; i++)
		g->ent[g->nent + i].par = cand[i]->ridx; /* scored later: append */
	g->nch++;
	g->nent += nc;
	return x;
}

void nest_global_append(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc)
{
	append_child(n, c, cand, nc);
}

/* Appends child c (a CALL record index) with its candidates' scores. */
void nest_global_collect(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc)
{
	struct nest_gchild *x = append_child(n, c, cand, nc);
	if (x)
		score_child(n, x, c, cand, nc);
}

/* The children a round decides again, as a bit per child, or NULL for
 * all: after a round that changed few parents' children
 * (n->solve.gdirty, note_changes), each child with one of those parents
 * among its candidates, when they are at most NEST_NEAR_MAX of the
 * children. Every other child keeps its parent: the round before placed
 * it in the same context, and its scores change only as much as the
 * relearnt gaps move them. table1-long's third round decides 26,538 of its
 * 762,642 children again, par-medium's fourth 1,031 of 288,756
 * (docs/performance.md, "Rounds near the changes"). */
static uint8_t *near_changes(struct bb_nest *n)
{
	const struct nest_global *g = &n->solve.glob;
	const uint8_t *dirty = n->solve.gdirty;
	if (!dirty)
		return NULL;
	uint8_t *redo = bb_xcalloc(g->nch / 8 + 1, 1);
	size_t near = 0;
	for (size_t ci = 0; ci < g->nch; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		for (uint32_t j = 0; j < x->nc; j++)
			if (bit_get(dirty, g->ent[x->off + j].par)) {
				bit_set(redo, ci);
				near++;
				break;
			}
	}
	if ((double)near > NEST_NEAR_MAX * (double)g->nch) {
		free(redo);
		return NULL;
	}
	n->st.global_near_rounds++;
	n->st.global_near_children += near;
	return redo;
}

/* A round after the first, with keep: the children and candidates the
 * first round's replay collected, in the same order, as the calls the
 * replay would make of their records (what scoring reads: nodes, times,
 * the return times of pass 1, the content classes), scored again. */
void nest_global_rescore(struct bb_nest *n)
{
	struct nest_global *g = &n->solve.glob;
	const struct mrec *rec = n->recs.rec;
	const int64_t *rret = n->recs.rret;
	if (n->gaps.soff && !g->ek)
		g->ek = bb_xmalloc(g->capent ? g->capent : 1);
	size_t cap = 0;
	struct call *pc = NULL, **cand = NULL;
	struct call *c = bb_xcalloc(1, sizeof(*c));
	g->redo = near_changes(n); /* freed after the round's solve */
	for (size_t ci = 0; ci < g->nch; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		if (kept(g, ci)) {
			/* kept where it is: nest_queue_weigh leaves its costs */
			if (g->ek)
				memset(&g->ek[x->off], NEST_Q_NONE, x->nc);
			continue;
		}
		if (x->nc > cap) {
			size_t nc = cap ? 2 * cap : 64;
			while (nc < x->nc)
				nc *= 2;
			pc = bb_xrealloc(pc, nc * sizeof(*pc));
			memset(&pc[cap], 0, (nc - cap) * sizeof(*pc));
			cand = bb_xrealloc(cand, nc * sizeof(*cand));
			cap = nc;
		}
		if (g->cls && n->calls.capccls < x->nc) {
			n->calls.capccls = x->nc;
			n->calls.ccls = bb_xrealloc(n->calls.ccls, n->calls.capccls);
		}
		if (g->cls) /* else no tokens: no class is read, no ctx= mark */
			memcpy(n->calls.ccls, &g->cls[x->off], x->nc);
		c->ridx = x->ridx;
		c->from = rec[x->ridx].op_from & REC_NODE_MAX;
		c->to = x->c;
		c->call_ts = rec[x->ridx].u.ts;
		c->ret_ts = c->end_ts = rret[x->ridx];
		c->cexact = g->cls ? g->cex[ci] : 0;
		for (uint32_t j = 0; j < x->nc; j++) {
			uint32_t p = g->ent[x->off + j].par;
			struct call *q = &pc[j];
			q->ridx = p;
			q->from = rec[p].op_from & REC_NODE_MAX;
			q->to = rec[p].arg;
			q->call_ts = rec[p].u.ts;
			q->end_ts = rret[p];
			cand[j] = q;
		}
		score_child(n, x, c, cand, x->nc);
	}
	free(c);
	free(pc);
	free(cand);
}

#define CAP_MIN 20 /* sure calls a hard total capacity needs (nest_total_cap) */

/* Children per call into b, from pass 1's counts: k when the calls into b
 * made sum(N(b->c)) / N(into b) = k children on average, k whole (within
 * 1%), and every call pass 1 saw with all its children sure had k; 0 when
 * the counts support no such bound. The bound is hard (*hard set) when the
 * calls made exactly k each on average or at least CAP_MIN calls were seen
 * sure; else it is soft: each child past k costs SOFT_COST, as past
 * soft_cap's. A mix of kinds averages to nearly a whole number by chance:
 * the rig's first app (carts and items 3 children, logins 2, lookups 4)
 * made 1,292 children in 431 calls on a capture where no call was sure,
 * and a hard 3 pushed each lookup's fourth child onto another request,
 * which passed one of its own on, along a chain of 45 requests (i1a1
 * poisson-8: 24 of 800 instances wrong, none with the bound soft). Where
 * every call makes k, nothing but the capture's ends changes the count:
 * figure 17's trace (parallelism 42, no call ever sure) has 114 of 24,100
 * instances wrong with its exact 2 hard, 263 soft (docs/accuracy.md, "A
 * whole average is no capacity"). */
uint32_t nest_total_cap(struct bb_nest *n, uint32_t b, int *hard)
{
	*hard = 0;
	if (b >= n->nodes.ninto || !n->nodes.into[b].ncalls)
		return 0;
	const struct node_list *l = &n->nodes.into[b];
	uint64_t sum = 0;
	for (size_t i = 0; i < n->board.pccap; i++)
		if (n->board.pc[i].a == b)
			sum += n->board.pc[i].n;
	double r = (double)sum / (double)l->ncalls;
	double k = floor(r + 0.5);
	if (k < 1 || fabs(r - k) > 0.01)
		return 0;
	if (l->nobs && (l->smin != (uint32_t)k || l->smax != (uint32_t)k))
		return 0;
	*hard = l->nobs >= CAP_MIN || sum == (uint64_t)k * l->ncalls;
	return (uint32_t)k;
}

/* The nodes whose calls got a hard capacity from an exact average alone
 * (fewer than CAP_MIN calls seen sure, and not all): an assumption the
 * counts fit and the calls did not show, which bbnest names. Figure 17's
 * web servers make exactly 2 calls each, and hardly a call is seen alone:
 * right there; a mix of kinds can average a whole number by chance ("A
 * whole average is no capacity", docs/accuracy.md). */
void nest_caps_note(struct bb_nest *n)
{
	struct nest_solve *sv = &n->solve;
	free(sv->acap);
	sv->acap = NULL;
	sv->nacap = 0;
	size_t nn = bb_intern_count(n->nodes.names), cap = 0;
	for (uint32_t b = 0; b < nn && b < n->nodes.ninto; b++) {
		int hard;
		uint32_t k = nest_total_cap(n, b, &hard);
		const struct node_list *l = &n->nodes.into[b];
		if (!k || !hard || l->nobs >= CAP_MIN || l->nobs == l->ncalls)
			continue; /* none, or shown by the calls seen sure */
		if (sv->nacap == cap) {
			cap = cap ? 2 * cap : 4;
			sv->acap = bb_xrealloc(sv->acap, cap * sizeof(*sv->acap));
		}
		struct bb_nest_cap *c = &sv->acap[sv->nacap++];
		c->node = bb_intern_str(n->nodes.names, b);
		c->children = k;
		c->calls = l->ncalls;
		c->calls_sure = l->nobs;
	}
}

#define NO_CAP NEST_NO_CAP
#define NO_CAP_SOFT UINT32_MAX

/* A node of the flow network: its potential, which every search reads and
 * updates, and while a search has reached it its place in the search's
 * states (struct sstate) + 1, else 0. A search reaches few of the nodes:
 * its state there (distance, the node before, state) lives in a table as
 * large as the most any search reached, not in every node (par-medium: 32
 * bytes a node for 853,693 nodes before, 12 now). */
struct gnode {
	double pot;
	uint32_t slot;
} __attribute__((packed)); /* 12 bytes, not 16: 3.4 MB on par-medium */

/* The flow network: child -> (parent, callee) -> parent -> sink. Every
 * entry gets its (parent, callee) node (slot_c, capacity 1 when the callee
 * is called at most once per call, nest_once) and its parent node (its
 * par, capacity nest_total_cap of the parent's node, when there is one). What
 * the search reads of a node sits in one struct (a cache line holds four),
 * and a parent's (parent, callee) nodes are numbered one after another:
 * the search reaches them at random, and a miss for each array and for
 * each of a parent's nodes was most of its time. */
struct pcnode {
	uint32_t flow, cap;
	uint32_t head;         /* its first child, or BB_NONE */
	uint32_t par : 31;     /* its parent node */
	uint32_t once : 1;     /* a second child costs SOFT_COST (nest_once) */
};
struct tnode {
	uint32_t flow, cap;
	uint32_t soft; /* children past this cost SOFT_COST */
	uint32_t off;  /* its (parent, callee) nodes: off up to the next parent's off */
};
struct cnode {
	uint32_t assign; /* its entry (index in ent), or BB_NONE */
	uint32_t next;   /* the next child of the same (parent, callee) node */
};
struct net {
	size_t nch, npc, npar;
	struct pcnode *pc; /* per (parent, callee) node */
	struct tnode *t;   /* per parent node, and one past the last (its off: npc) */
	uint32_t *trec;    /* per parent node: its CALL record (the entries' par) */
	struct cnode *ch;  /* per child */
	struct gnode *nd;  /* per node: potential and search state */
	double pen_y, pen_z; /* same- and generic-child penalty exponents */
};

/* The cost of the k-th unit on an edge whose penalty exponent is e: the
 * greedy choice multiplies a parent's score by (c + 1)^-e for c children
 * already there, so a parent with m children has paid (m!)^-e in all and its
 * k-th child e log k: a convex cost, which successive shortest paths take as
 * it is. */
static double unit_cost(double e, uint32_t k)
{
	return e > 0 && k > 1 ? e * log((double)k) : 0;
}

/* Soft capacity: a call into b whose children were all sure had at most
 * smax of them, over at least SOFT_MIN such calls; more cost SOFT_COST each
 * (a factor 100 against the scores), so a call takes more only when the
 * times insist. The sure calls lean to fewer children (more of them, more
 * chances that one is unsure), hence soft. The rig's nginx makes one
 * upstream call or none (static files): no whole child count, no hard
 * capacity, yet two upstream calls under one client request were most of
 * its errors (docs/accuracy.md). */
#define SOFT_MIN 20
#define SOFT_COST 4.605170185988091 /* log(100) */

static uint32_t soft_cap(const struct bb_nest *n, uint32_t b)
{
	if (b >= n->nodes.ninto || n->nodes.into[b].nobs < SOFT_MIN)
		return NO_CAP_SOFT;
	return n->nodes.into[b].smax;
}


static double parent_unit_cost(const struct net *k, uint32_t t, uint32_t units)
{
	return unit_cost(k->pen_z, units) + (units > k->t[t].soft ? SOFT_COST : 0);
}

/* "At most one child into this callee" (nest_once) is soft too: the counts
 * cannot tell "once each call" from "twice in a few calls" when few calls
 * are seen with all their children sure (the rig's lookups call dns twice
 * in 4% of the requests), and a hard capacity then forces the second call
 * onto another request. */
static double callee_unit_cost(const struct net *k, uint32_t v, uint32_t units)
{
	return unit_cost(k->pen_y, units) + (k->pc[v].once && units > 1 ? SOFT_COST : 0);
}

/* The network while make_net builds it: the arrays' capacities, each CALL
 * record's parent node, and the (parent record, callee) nodes by key. */
struct net_build {
	size_t cappc, capt;
	uint32_t *pccap, *pcpar; /* per (parent, callee) node, in the order made */
	uint8_t *pconce;
	uint32_t *tcap, *tsoft, *trec; /* per parent node */
	uint32_t *tslot;  /* per CALL record: its parent node, or BB_NONE */
	uint32_t *thead;  /* per parent node: its first (parent, callee) node */
	uint32_t *pcnext; /* per (parent, callee) node: the parent's next one */
	uint32_t *pccal;  /* per (parent, callee) node: the callee */
	uint32_t *ncap;   /* per node: its total capacity, once ndone */
	uint8_t *ndone;   /* per node: 1 done, 2 done and ncap hard */
	uint32_t *tfix, *pcfix; /* with redo: per parent and (parent, callee) node,
	                           the children kept where they were */
};

/* The parent node of candidate e, made on first sight with its capacities. */
static uint32_t parent_node(struct bb_nest *n, struct net *k, struct net_build *bd,
                            const struct nest_gent *e)
{
	struct nest_global *g = &n->solve.glob;
	if (bd->tslot[e->par] != BB_NONE)
		return bd->tslot[e->par];
	uint32_t pb = n->recs.rec[e->par].arg; /* the parent CALL's callee */
	if (!g->cap && pb < n->nodes.ninto && !bd->ndone[pb]) {
		int hard;
		bd->ncap[pb] = nest_total_cap(n, pb, &hard);
		bd->ndone[pb] = (uint8_t)(1 + hard);
	}
	uint32_t tk = NO_CAP, ts = g->cap ? NO_CAP_SOFT : soft_cap(n, pb);
	if (pb < n->nodes.ninto && bd->ncap[pb] && bd->ndone[pb] == 2)
		tk = bd->ncap[pb];
	else if (pb < n->nodes.ninto && bd->ncap[pb] && bd->ncap[pb] < ts)
		ts = bd->ncap[pb];
	if (k->npar == bd->capt) {
		bd->capt *= 2;
		bd->tcap = bb_xrealloc(bd->tcap, bd->capt * sizeof(uint32_t));
		bd->tsoft = bb_xrealloc(bd->tsoft, bd->capt * sizeof(uint32_t));
		bd->thead = bb_xrealloc(bd->thead, bd->capt * sizeof(uint32_t));
		bd->trec = bb_xrealloc(bd->trec, bd->capt * sizeof(uint32_t));
	}
	bd->thead[k->npar] = BB_NONE;
	bd->trec[k->npar] = e->par;
	bd->tslot[e->par] = (uint32_t)k->npar;
	bd->tsoft[k->npar] = ts;
	bd->tcap[k->npar++] = g->cap ? g->cap(n, e->par, NEST_ANY) : tk;
	return bd->tslot[e->par];
}

/* The (parent, callee) node of candidate e of child x, whose parent node is
 * t, made on first sight with its capacity: once (at most one child into
 * x->c), hard or soft. A parent node has few: its list is searched. */
static uint32_t callee_node(struct bb_nest *n, struct net *k, struct net_build *bd,
                            const struct nest_gent *e, uint32_t t, const struct nest_gchild *x,
                            int once, int once_hard)
{
	struct nest_global *g = &n->solve.glob;
	for (uint32_t v = bd->thead[t]; v != BB_NONE; v = bd->pcnext[v])
		if (bd->pccal[v] == x->c)
			return v;
	if (k->npc == bd->cappc) {
		bd->cappc *= 2;
		bd->pccap = bb_xrealloc(bd->pccap, bd->cappc * sizeof(uint32_t));
		bd->pconce = bb_xrealloc(bd->pconce, bd->cappc);
		bd->pcpar = bb_xrealloc(bd->pcpar, bd->cappc * sizeof(uint32_t));
		bd->pcnext = bb_xrealloc(bd->pcnext, bd->cappc * sizeof(uint32_t));
		bd->pccal = bb_xrealloc(bd->pccal, bd->cappc * sizeof(uint32_t));
	}
	uint32_t v = (uint32_t)k->npc++;
	bd->pccap[v] = g->cap ? g->cap(n, e->par, x->c) : once_hard ? 1 : NO_CAP;
	bd->pconce[v] = once && !once_hard;
	bd->pcpar[v] = t;
	bd->pccal[v] = x->c;
	bd->pcnext[v] = bd->thead[t];
	bd->thead[t] = v;
	return v;
}

/* The network's arrays once its nodes are known: each parent's (parent,
 * callee) nodes numbered together, in the order they were made (the
 * search meets them in the same order: the same ties, the same flow), the
 * entries pointed at the new numbers, the flows, and each entry's cost. */
static void net_arrays(struct bb_nest *n, struct net *k, const struct net_build *bd)
{
	struct nest_global *g = &n->solve.glob;
	uint32_t *off = bb_xcalloc(k->npar + 2, sizeof(uint32_t));
	for (size_t v = 0; v < k->npc; v++)
		off[bd->pcpar[v] + 2]++;
	for (size_t t = 0; t < k->npar; t++)
		off[t + 2] += off[t + 1];
	uint32_t *num = bb_xmalloc((k->npc + 1) * sizeof(uint32_t)); /* old number -> new */
	k->pc = bb_xmalloc((k->npc + 1) * sizeof(*k->pc));
	for (size_t v = 0; v < k->npc; v++) {
		uint32_t q = off[bd->pcpar[v] + 1]++;
		num[v] = q;
		k->pc[q].flow = bd->pcfix ? bd->pcfix[v] : 0;
		k->pc[q].cap = bd->pccap[v];
		k->pc[q].head = BB_NONE;
		k->pc[q].par = bd->pcpar[v];
		k->pc[q].once = bd->pconce[v];
	}
	k->t = bb_xmalloc((k->npar + 1) * sizeof(*k->t));
	for (size_t t = 0; t <= k->npar; t++) {
		k->t[t].flow = t < k->npar && bd->tfix ? bd->tfix[t] : 0;
		k->t[t].cap = t < k->npar ? bd->tcap[t] : 0;
		k->t[t].soft = t < k->npar ? bd->tsoft[t] : 0;
		k->t[t].off = off[t];
	}
	free(off);
	k->ch = bb_xmalloc((k->nch + 1) * sizeof(*k->ch));
	for (size_t ci = 0; ci < g->nch; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		k->ch[ci].assign = BB_NONE;
		if (kept(g, ci))
			continue; /* kept: its entries hold the costs of its round */
		float wmax = -INFINITY;
		for (uint32_t j = 0; j < x->nc; j++)
			if (g->ent[x->off + j].w > wmax)
				wmax = g->ent[x->off + j].w;
		/* each entry's cost: the child's best log score less its own (inf:
		 * no edge; every cost inf: no candidate scores) */
		for (uint32_t j = 0; j < x->nc; j++) {
			struct nest_gent *e = &g->ent[x->off + j];
			e->w = isinf(wmax) ? INFINITY : wmax - e->w;
			e->slot_c = num[e->slot_c];
		}
	}
	free(num);
	k->nd = NULL; /* nest_global_solve's, once the children are in order */
	k->pen_y = n->cfg.p.penalty_y;
	k->pen_z = n->cfg.p.penalty_z;
}

/* A round that decides only some children again (redo): every other one
 * keeps its parent (prev, per CALL record), and takes its room in the
 * parent's node and its (parent, callee) node where the network has them. */
static void kept_room(struct bb_nest *n, const struct net *k, struct net_build *bd,
                      const uint32_t *prev)
{
	const struct nest_global *g = &n->solve.glob;
	bd->tfix = bb_xcalloc(k->npar + 1, sizeof(uint32_t));
	bd->pcfix = bb_xcalloc(k->npc + 1, sizeof(uint32_t));
	if (!prev)
		return; /* none kept anywhere (kept_entry takes their cheapest) */
	for (size_t ci = 0; ci < g->nch; ci++) {
		if (!kept(g, ci))
			continue;
		uint32_t p = prev[g->ch[ci].ridx];
		uint32_t t = p == BB_NONE ? BB_NONE : bd->tslot[p];
		if (t == BB_NONE)
			continue;
		bd->tfix[t]++;
		for (uint32_t v = bd->thead[t]; v != BB_NONE; v = bd->pcnext[v])
			if (bd->pccal[v] == g->ch[ci].c) {
				bd->pcfix[v]++;
				break;
			}
	}
}

static void make_net(struct bb_nest *n, struct net *k, const uint32_t *prev)
{
	struct nest_global *g = &n->solve.glob;
	struct net_build bd = {.cappc = MAX(g->npc_was, 1024), .capt = MAX(g->npar_was, 1024)};
	k->nch = g->nch;
	k->npc = k->npar = 0;
	bd.pccap = bb_xmalloc(bd.cappc * sizeof(uint32_t));
	bd.pconce = bb_xmalloc(bd.cappc);
	bd.pcpar = bb_xmalloc(bd.cappc * sizeof(uint32_t));
	bd.tcap = bb_xmalloc(bd.capt * sizeof(uint32_t));
	bd.tsoft = bb_xmalloc(bd.capt * sizeof(uint32_t));
	bd.tslot = bb_xmalloc(n->recs.nrec * sizeof(*bd.tslot));
	for (size_t i = 0; i < n->recs.nrec; i++)
		bd.tslot[i] = BB_NONE;
	bd.thead = bb_xmalloc(bd.capt * sizeof(uint32_t));
	bd.trec = bb_xmalloc(bd.capt * sizeof(uint32_t));
	bd.pcnext = bb_xmalloc(bd.cappc * sizeof(uint32_t));
	bd.pccal = bb_xmalloc(bd.cappc * sizeof(uint32_t));
	bd.ncap = bb_xcalloc(n->nodes.ninto + 1, sizeof(*bd.ncap));
	bd.ndone = bb_xcalloc(n->nodes.ninto + 1, 1);
	struct nest_once_memo memo = {.v = {0}};
	for (size_t ci = 0; ci < g->nch; ci++) {
		struct nest_gchild *x = &g->ch[ci];
		if (kept(g, ci))
			continue;
		/* the parents' node is each candidate's callee: the child's
		 * caller, or with host aliases a service on it */
		uint32_t b = n->recs.rec[x->ridx].op_from & REC_NODE_MAX; /* its caller */
		int kind = g->cap ? 0 : nest_once_of(n, &memo, b, x->c);
		uint8_t once = kind > 0;
		/* nearly every call into b calls c (at least half as many b->c calls
		 * as calls into b): "once" is a hard capacity (figure 17's web
		 * servers, one application call each: 262 instances wrong with it
		 * soft, 180 hard); a rarer callee may be "twice in a few", soft */
		int once_hard = kind == 2;
		for (uint32_t j = 0; j < x->nc; j++) {
			struct nest_gent *e = &g->ent[x->off + j];
			uint32_t t = parent_node(n, k, &bd, e);
			e->slot_c = callee_node(n, k, &bd, e, t, x, once, once_hard);
		}
	}
	if (g->redo)
		kept_room(n, k, &bd, prev);
	free(bd.thead);
	free(bd.pcnext);
	free(bd.pccal);
	free(bd.tslot);
	free(bd.ncap);
	free(bd.ndone);
	net_arrays(n, k, &bd);
	free(bd.tfix);
	free(bd.pcfix);
	g->npc_was = k->npc;
	g->npar_was = k->npar;
	k->trec = bb_xrealloc(bd.trec, (k->npar + 1) * sizeof(uint32_t));
	free(bd.pccap);
	free(bd.pconce);
	free(bd.pcpar);
	free(bd.tcap);
	free(bd.tsoft);
}

static void free_net(struct net *k)
{
	free(k->trec);
	free(k->pc);
	free(k->t);
	free(k->ch);
	free(k->nd);
}

/* Dijkstra's heap, with lazy deletion. Of two nodes at the same distance
 * the one of the higher rank comes first: the sink, then parents, then
 * (parent, callee) nodes, then children; of the same rank, the one pushed
 * first. So a search that reaches the sink at distance 0 goes straight
 * there (augment_direct takes that path without the heap). */
struct hent {
	double d;
	uint32_t v;
	uint32_t tie; /* the rank (2 bits), then the pushes left (30): the higher first */
};
struct heap {
	struct hent *a;
	size_t n, cap;
	uint32_t left; /* pushes left to this search, for tie */
};

#define HEAP_TIE_RANK 30
enum { RANK_CHILD, RANK_PC, RANK_PARENT, RANK_SINK };

static inline int hent_before(double d, uint32_t tie, const struct hent *b)
{
	return d < b->d || (d == b->d && tie > b->tie);
}

static void heap_push(struct heap *h, double d, uint32_t v, uint32_t rank)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->a = bb_xrealloc(h->a, h->cap * sizeof(*h->a));
	}
	uint32_t tie = rank << HEAP_TIE_RANK | h->left;
	h->left -= h->left > 0;
	size_t i = h->n++;
	while (i && hent_before(d, tie, &h->a[(i - 1) / 2])) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i].d = d;
	h->a[i].v = v;
	h->a[i].tie = tie;
}

static struct hent heap_pop(struct heap *h)
{
	struct hent top = h->a[0], last = h->a[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && hent_before(h->a[c + 1].d, h->a[c + 1].tie, &h->a[c]))
			c++;
		if (!hent_before(h->a[c].d, h->a[c].tie, &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

/* The search's state at a node it reached. */
struct sstate {
	double dist;
	uint32_t pred, via; /* the node before it; for a (parent, callee) node
	                       reached from a child, the entry */
	uint32_t v;         /* the node */
	uint8_t state;      /* 1 reached, 2 settled */
};

/* The search's state beyond the nodes' potentials: the nodes it reached, in
 * the order it reached them, the path (as long as st at most) and the heap.
 * Nodes: children 0..nch-1, (parent, callee) nodes from PC0, parents from
 * T0, and the sink. */
struct search {
	struct sstate *st;
	size_t nst, capst;
	uint32_t *path;
	struct heap heap;
};

static void search_grow(struct search *s)
{
	s->capst = s->capst ? 2 * s->capst : 4096;
	s->st = bb_xrealloc(s->st, s->capst * sizeof(*s->st));
	s->path = bb_xrealloc(s->path, (s->capst + 1) * sizeof(*s->path));
}

/* Inlined at its five calls in augment (the search's inner step: a call
 * each was 1.2% of table1-par-medium's instructions). */
static inline __attribute__((always_inline)) void relax(struct search *s, struct gnode *nd,
                                                        uint32_t u, uint32_t v, uint32_t via,
                                                        double d, uint32_t rank)
{
	struct gnode *x = &nd[v];
	struct sstate *y;
	if (!x->slot) {
		if (s->nst == s->capst)
			search_grow(s);
		y = &s->st[s->nst++];
		x->slot = (uint32_t)s->nst;
		y->v = v;
		y->state = 1;
	} else {
		y = &s->st[x->slot - 1];
		if (y->state == 2 || d >= y->dist)
			return;
	}
	y->dist = d;
	y->pred = u;
	y->via = via;
	heap_push(&s->heap, d, v, rank);
}

/* relax of a search's first node (distance 0, no node before it),
 * settled. */
static inline void relax_first(struct search *s, struct gnode *nd, uint32_t v)
{
	if (s->nst == s->capst)
		search_grow(s);
	struct sstate *y = &s->st[s->nst++];
	nd[v].slot = (uint32_t)s->nst;
	y->v = v;
	y->state = 2;
	y->dist = 0;
	y->pred = BB_NONE;
	y->via = BB_NONE;
}

static void unlink_child(struct net *k, uint32_t v, uint32_t ci)
{
	uint32_t *pp = &k->pc[v].head;
	while (*pp != ci)
		pp = &k->ch[*pp].next;
	*pp = k->ch[ci].next;
}

/* A build may set -DNEST_DIRECT=0 to search for every child: the output is
 * the same, byte for byte (docs/performance.md; the test bbnest_direct
 * compares bbnest with such a build, bbnest_nodirect). */
#ifndef NEST_DIRECT
#define NEST_DIRECT 1
#endif

/* The search's first steps when they lead straight to the sink at distance
 * 0: child ci's first (parent, callee) node at reduced cost 0 (in its
 * candidates' order), its parent, the sink, each with room and at
 * reduced cost 0. The heap would settle them in that order (hent_before)
 * and stop, and with the sink at distance 0 no potential changes: the same
 * flow, without the search's states and heap. Most children take this path
 * (table1-par-medium: 84-97% in each round, table1-short 97%). Returns 0,
 * having changed nothing, when the search has to look further. */
static int augment_direct(struct nest_global *g, struct net *k, uint32_t ci)
{
	const size_t PC0 = k->nch, T0 = PC0 + k->npc, SINK = T0 + k->npar;
	const struct nest_gchild *x = &g->ch[ci];
	uint32_t best = BB_NONE, bv = 0;
	for (uint32_t j = 0; j < x->nc && best == BB_NONE; j++) {
		uint32_t e = x->off + j;
		if (isinf(g->ent[e].w) || e == k->ch[ci].assign)
			continue;
		uint32_t v = (uint32_t)PC0 + g->ent[e].slot_c;
		double rc = g->ent[e].w + k->nd[ci].pot - k->nd[v].pot;
		if (!(rc > 0)) { /* the search's distance du + (rc > 0 ? rc : 0) is 0 */
			best = e;
			bv = v;
		}
	}
	if (best == BB_NONE)
		return 0;
	uint32_t pv = bv - (uint32_t)PC0, t = k->pc[pv].par;
	if (k->pc[pv].flow >= k->pc[pv].cap || k->t[t].flow >= k->t[t].cap)
		return 0;
	double rc = callee_unit_cost(k, pv, k->pc[pv].flow + 1) + k->nd[bv].pot - k->nd[T0 + t].pot;
	if (rc > 0)
		return 0;
	rc = parent_unit_cost(k, t, k->t[t].flow + 1) + k->nd[T0 + t].pot - k->nd[SINK].pot;
	if (rc > 0)
		return 0;
	k->ch[ci].assign = best;
	k->ch[ci].next = k->pc[pv].head;
	k->pc[pv].head = ci;
	k->pc[pv].flow++;
	k->t[t].flow++;
	return 1;
}

/* A new child's potential: every edge out of it has a reduced cost >= 0. */
static inline double child_potential(const struct nest_global *g, const struct net *k, uint32_t ci)
{
	const struct nest_gchild *x = &g->ch[ci];
	double pmax = -INFINITY;
	for (uint32_t j = 0; j < x->nc; j++)
		if (!isinf(g->ent[x->off + j].w)) {
			double p =
			    k->nd[k->nch + g->ent[x->off + j].slot_c].pot - g->ent[x->off + j].w;
			if (p > pmax)
				pmax = p;
		}
	return pmax;
}

/* Adds child ci to the flow along a shortest path; returns 0 when no
 * parent has room for it along any path. */
static int augment(struct nest_global *g, struct net *k, struct search *s, uint32_t ci)
{
	const size_t PC0 = k->nch, T0 = PC0 + k->npc, SINK = T0 + k->npar;
	k->nd[ci].pot = child_potential(g, k, ci);
	s->nst = 0;
	if (NEST_DIRECT && augment_direct(g, k, ci))
		return 1;
	s->heap.n = 0;
	s->heap.left = (UINT32_C(1) << HEAP_TIE_RANK) - 1;
	/* the child is reached first and settled at once (at distance 0: the
	 * heap would hold it alone), without the heap */
	relax_first(s, k->nd, ci);
	double dt = -1;
	for (uint32_t u = ci;;) {
		double du = s->st[k->nd[u].slot - 1].dist;
		if (u == SINK) {
			dt = du;
			break;
		}
		if (u < PC0) {
			const struct nest_gchild *x = &g->ch[u];
			for (uint32_t j = 0; j < x->nc; j++) {
				uint32_t e = x->off + j;
				if (isinf(g->ent[e].w) || e == k->ch[u].assign)
					continue;
				uint32_t v = (uint32_t)PC0 + g->ent[e].slot_c;
				double rc = g->ent[e].w + k->nd[u].pot - k->nd[v].pot;
				relax(s, k->nd, u, v, e, du + (rc > 0 ? rc : 0), RANK_PC);
			}
		} else if (u < T0) {
			uint32_t v = (uint32_t)(u - PC0);
			const struct pcnode *pv = &k->pc[v];
			uint32_t t = (uint32_t)T0 + pv->par;
			if (pv->flow < pv->cap) {
				double rc = callee_unit_cost(k, v, pv->flow + 1) +
				            k->nd[u].pot - k->nd[t].pot;
				relax(s, k->nd, u, t, BB_NONE, du + (rc > 0 ? rc : 0), RANK_PARENT);
			}
			for (uint32_t c = pv->head; c != BB_NONE; c = k->ch[c].next) {
				double rc = -g->ent[k->ch[c].assign].w + k->nd[u].pot - k->nd[c].pot;
				relax(s, k->nd, u, c, BB_NONE, du + (rc > 0 ? rc : 0), RANK_CHILD);
			}
		} else {
			uint32_t t = (uint32_t)(u - T0);
			if (k->t[t].flow < k->t[t].cap) {
				double rc = parent_unit_cost(k, t, k->t[t].flow + 1) + k->nd[u].pot -
				            k->nd[SINK].pot;
				relax(s, k->nd, u, (uint32_t)SINK, BB_NONE, du + (rc > 0 ? rc : 0),
				      RANK_SINK);
			}
			for (uint32_t v = k->t[t].off; v < k->t[t + 1].off; v++) {
				if (k->pc[v].flow == 0)
					continue;
				double rc = -callee_unit_cost(k, v, k->pc[v].flow) + k->nd[u].pot -
				            k->nd[PC0 + v].pot;
				relax(s, k->nd, u, (uint32_t)(PC0 + v), BB_NONE,
				      du + (rc > 0 ? rc : 0), RANK_PC);
			}
		}
		/* the next node to settle */
		struct sstate *su = NULL;
		while (s->heap.n) {
			struct hent h = heap_pop(&s->heap);
			su = &s->st[k->nd[h.v].slot - 1];
			if (su->state == 2 || h.d > su->dist) {
				su = NULL;
				continue;
			}
			su->state = 2;
			u = h.v;
			break;
		}
		if (!su)
			break;
	}
	if (dt >= 0) {
		/* the path, then the flow along it from the child on */
		size_t np = 0;
		for (uint32_t v = (uint32_t)SINK; v != BB_NONE; v = s->st[k->nd[v].slot - 1].pred)
			s->path[np++] = v;
		for (size_t i = np - 1; i > 0; i--) {
			uint32_t u = s->path[i], v = s->path[i - 1];
			if (v == SINK) {
				k->t[u - T0].flow++;
			} else if (v >= T0) {
				k->pc[u - PC0].flow++; /* (parent, callee) -> parent */
			} else if (v >= PC0) {
				if (u >= T0) {
					k->pc[v - PC0].flow--; /* parent -> (parent, callee), backward */
				} else {
					k->ch[u].assign = s->st[k->nd[v].slot - 1].via; /* child -> (parent, callee) */
					k->ch[u].next = k->pc[v - PC0].head;
					k->pc[v - PC0].head = u;
				}
			} else {
				unlink_child(k, u - (uint32_t)PC0,
				             v); /* (parent, callee) -> child, backward */
				k->ch[v].assign = BB_NONE;
			}
		}
	}
	/* potentials: settled nodes closer than the sink keep the reduced costs
	 * of the residual edges >= 0 */
	double d = dt >= 0 ? dt : 0;
	for (size_t i = 0; i < s->nst; i++) {
		const struct sstate *y = &s->st[i];
		if (y->state == 2 && dt >= 0 && y->dist < dt)
			k->nd[y->v].pot += y->dist - d;
		k->nd[y->v].slot = 0;
	}
	return dt >= 0;
}

struct gorder {
	float margin;
	uint32_t i;
};

static int cmp_order(const void *a, const void *b)
{
	const struct gorder *x = a, *y = b;
	if (x->margin != y->margin)
		return x->margin < y->margin ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Sorts ord (in child order) by margin, ties by child: cmp_order's order.
 * The margins are >= 0 (or +inf), whose bits order as the values do, so a
 * stable radix sort on them gives it in linear time (three digits of 11
 * bits, their counts taken in one pass); anything else (a NaN) goes to
 * qsort. */
#define RDIG 11
#define RNDIG 3
static void sort_order(struct gorder *ord, size_t m)
{
	uint32_t *key = bb_xmalloc((m + 1) * sizeof(*key));
	static const uint32_t dmask = (1u << RDIG) - 1;
	size_t(*cnt)[(1u << RDIG) + 1] = bb_xcalloc(RNDIG, sizeof(*cnt));
	for (size_t i = 0; i < m; i++) {
		float f = ord[i].margin;
		if (!(f >= 0)) {
			free(cnt);
			free(key);
			qsort(ord, m, sizeof(*ord), cmp_order);
			return;
		}
		f = f == 0 ? 0 : f; /* -0 sorts as 0 */
		memcpy(&key[i], &f, sizeof(f));
		for (int d = 0; d < RNDIG; d++)
			cnt[d][(key[i] >> (d * RDIG) & dmask) + 1]++;
	}
	struct gorder *tmp = bb_xmalloc((m + 1) * sizeof(*tmp));
	struct gorder *src = ord;
	uint32_t *ktmp = bb_xmalloc((m + 1) * sizeof(*ktmp));
	for (int dg = 0; dg < RNDIG; dg++) {
		int shift = dg * RDIG;
		size_t *c = cnt[dg];
		if (c[(key[0] >> shift & dmask) + 1] == m)
			continue; /* one digit for all: the order stays */
		for (uint32_t d = 0; d < dmask + 1; d++)
			c[d + 1] += c[d];
		for (size_t i = 0; i < m; i++) {
			size_t q = c[key[i] >> shift & dmask]++;
			tmp[q] = src[i];
			ktmp[q] = key[i];
		}
		struct gorder *t = src;
		src = tmp;
		tmp = t;
		uint32_t *kt = key;
		key = ktmp;
		ktmp = kt;
	}
	if (src != ord) {
		memcpy(ord, src, m * sizeof(*ord));
		tmp = src;
	}
	free(cnt);
	free(tmp);
	free(ktmp);
	free(key);
}

/* The children in ord come in no order of memory: their data is fetched
 * ahead, the child PF_AHEAD places on, its candidates half as far, their
 * (parent, callee) nodes closer still (each step reads what the last one
 * fetched). */
#define PF_AHEAD 16

static void prefetch_child(const struct nest_global *g, const struct net *k,
                           const uint32_t *ord, size_t m, size_t oi)
{
	if (oi + PF_AHEAD < m)
		__builtin_prefetch(&g->ch[ord[oi + PF_AHEAD]]);
	if (oi + PF_AHEAD / 2 < m) {
		const struct nest_gchild *x = &g->ch[ord[oi + PF_AHEAD / 2]];
		__builtin_prefetch(&g->ent[x->off]);
		__builtin_prefetch(&g->ent[x->off + x->nc - 1]);
		__builtin_prefetch(&k->nd[ord[oi + PF_AHEAD / 2]]);
		__builtin_prefetch(&k->ch[ord[oi + PF_AHEAD / 2]]);
	}
	if (oi + PF_AHEAD / 4 < m) {
		const struct nest_gchild *x = &g->ch[ord[oi + PF_AHEAD / 4]];
		for (uint32_t j = 0; j < x->nc; j++) {
			uint32_t v = g->ent[x->off + j].slot_c;
			__builtin_prefetch(&k->nd[k->nch + v]);
			__builtin_prefetch(&k->pc[v]);
		}
	}
	if (oi + PF_AHEAD / 8 < m) { /* their parent nodes */
		const struct nest_gchild *x = &g->ch[ord[oi + PF_AHEAD / 8]];
		for (uint32_t j = 0; j < x->nc; j++) {
			uint32_t t = k->pc[g->ent[x->off + j].slot_c].par;
			__builtin_prefetch(&k->nd[k->nch + k->npc + t]);
			__builtin_prefetch(&k->t[t]);
		}
	}
}

/* The first of child x's cheapest entries (its best candidate), with the
 * cheapest cost in *b1 and the next in *b2. */
static uint32_t cheapest(const struct nest_global *g, const struct nest_gchild *x, float *b1,
                         float *b2)
{
	uint32_t best = 0;
	*b1 = *b2 = INFINITY;
	for (uint32_t j = 0; j < x->nc; j++) {
		float c = g->ent[x->off + j].w;
		if (c < *b1) {
			*b2 = *b1;
			*b1 = c;
			best = j;
		} else if (c < *b2) {
			*b2 = c;
		}
	}
	return x->off + best;
}

/* A kept child's entry: its parent of the round before (prev), or with
 * none there its first cheapest. */
static uint32_t kept_entry(const struct nest_global *g, size_t ci, const uint32_t *prev)
{
	const struct nest_gchild *x = &g->ch[ci];
	uint32_t p = prev ? prev[x->ridx] : BB_NONE;
	for (uint32_t j = 0; j < x->nc && p != BB_NONE; j++)
		if (g->ent[x->off + j].par == p)
			return x->off + j;
	float b1, b2;
	return cheapest(g, x, &b1, &b2);
}

/* From the second round on (a round before's parents in prev): the CALL
 * records whose children this round changed (n->solve.gdirty), which the
 * next round decides again (nest_global_rescore). */
static void note_changes(struct bb_nest *n, const uint32_t *force, const uint32_t *prev)
{
	struct nest_solve *sv = &n->solve;
	const struct nest_global *g = &sv->glob;
	free(sv->gdirty);
	sv->gdirty = NULL;
	if (!prev || !sv->round || !g->keep)
		return;
	sv->gdirty = bb_xcalloc(n->recs.nrec / 8 + 1, 1);
	for (size_t ci = 0; ci < g->nch; ci++) {
		uint32_t p = g->ent[force[ci]].par, was = prev[g->ch[ci].ridx];
		if (p == was)
			continue;
		bit_set(sv->gdirty, p);
		if (was != BB_NONE)
			bit_set(sv->gdirty, was);
	}
}

/* Successive shortest paths: each child in turn joins the flow along the
 * cheapest path in the residual network, which may move children already
 * placed to other parents; with the potentials every reduced cost stays
 * >= 0, so Dijkstra finds the path, and the flow stays the cheapest for
 * the children placed so far (costs: the child's best log score minus the
 * candidate's). The search stops at the sink, so it stays among the calls
 * near the child. A child no path has room for takes its best candidate
 * over capacity (counted in global_over); one with no candidate scoring
 * takes the earliest, as the greedy choice does. */
void nest_global_solve(struct bb_nest *n)
{
	struct nest_global *g = &n->solve.glob;
	struct net k;
	/* the queue offsets are in the costs now (nest_queue_weigh) */
	free(g->ek);
	g->ek = NULL;
	const uint32_t *prev = n->solve.gpar ? n->solve.gpar : n->solve.gprev;
	make_net(n, &k, prev);
	struct search s = {0};
	search_grow(&s);
	uint64_t over = 0, visited = 0;
	/* the order changes the work, not the result (the optimum, but for
	 * ties): least sure first, by the margin of the best candidate over the
	 * second, is 7 times faster than the trace's order on the figure 17
	 * trace p (10 against 54 million nodes searched) */
	/* a child no candidate scores for joins no flow (below): left out */
	struct gorder *ord = bb_xmalloc((g->nch + 1) * sizeof(*ord));
	size_t m = 0;
	for (size_t ci = 0; ci < g->nch; ci++) {
		float b1, b2;
		if (kept(g, ci))
			continue; /* kept */
		cheapest(g, &g->ch[ci], &b1, &b2);
		if (isinf(b1))
			continue;
		ord[m].margin = b2 - b1; /* inf - x = inf */
		ord[m++].i = (uint32_t)ci;
	}
	if (m)
		sort_order(ord, m);
	/* the children in order, 4 bytes each instead of 8 */
	uint32_t *order = bb_xmalloc((m + 1) * sizeof(*order));
	for (size_t oi = 0; oi < m; oi++)
		order[oi] = ord[oi].i;
	free(ord);
	/* after the sort's copies are freed: the peak is the larger of the two */
	k.nd = bb_xcalloc(k.nch + k.npc + k.npar + 2, sizeof(*k.nd));
	for (size_t oi = 0; oi < m; oi++) {
		size_t ci = order[oi];
		prefetch_child(g, &k, order, m, oi);
		if (!augment(g, &k, &s, (uint32_t)ci))
			over++;
		visited += s.nst;
	}
	n->st.global_searched = visited;
	n->st.global_over = over;

	nest_heap_sample(n); /* the flow's network at its largest */
	free(order);
	free(s.st);
	free(s.path);
	free(s.heap.a);
	free(k.nd);
	k.nd = NULL;
	/* each child's entry: the flow's, or (no room, or no candidate scores)
	 * the first of its cheapest; made after the flow, which keeps every
	 * child it placed placed (4 bytes a child less at its peak) */
	uint32_t *force = bb_xmalloc((g->nch + 1) * sizeof(*force));
	for (size_t ci = 0; ci < g->nch; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		if (kept(g, ci)) {
			force[ci] = kept_entry(g, ci, prev);
			continue;
		}
		float b1, b2;
		force[ci] = k.ch[ci].assign != BB_NONE ? k.ch[ci].assign : cheapest(g, x, &b1, &b2);
		for (uint32_t j = 0; j < x->nc; j++) /* the entries' parents again */
			g->ent[x->off + j].par = k.trec[k.pc[g->ent[x->off + j].slot_c].par];
	}
	free_net(&k); /* before the refinement: the peak is the larger of the two */
	if (!g->cap) /* not for --bound: its true counts decide the sets */
		n->st.global_refined += nest_refine(n, force);
	free(g->redo);
	g->redo = NULL;
	note_changes(n, force, prev);
	/* the round before's parents, if kept, until the refinement compared */
	free(n->solve.gpar);
	n->solve.gpar = bb_xmalloc(n->recs.nrec * sizeof(*n->solve.gpar));
	for (size_t i = 0; i < n->recs.nrec; i++)
		n->solve.gpar[i] = BB_NONE;
	for (size_t ci = 0; ci < g->nch; ci++)
		n->solve.gpar[g->ch[ci].ridx] = g->ent[force[ci]].par;
	free(force);
	nest_global_round_end(n);
}

void nest_global_free(struct bb_nest *n)
{
	free(n->solve.glob.ch);
	free(n->solve.glob.ent);
	free(n->solve.glob.truth);
	free(n->solve.glob.ek);
	free(n->solve.glob.cls);
	free(n->solve.glob.cex);
	free(n->solve.glob.redo);
	memset(&n->solve.glob, 0, sizeof(n->solve.glob));
}

void nest_global_round_end(struct bb_nest *n)
{
	struct nest_global *g = &n->solve.glob;
	if (!g->keep || g->full) {
		nest_global_free(n);
		return;
	}
	free(g->truth);
	g->truth = NULL;
	g->captruth = 0;
}
