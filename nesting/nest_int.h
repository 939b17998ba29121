/* nest_int.h - private structures of the nesting algorithm */
/* SPDX-License-Identifier: MIT */
#ifndef BB_NEST_INT_H
#define BB_NEST_INT_H

#include "nesting/nesting.h"

/* ---- log bins (nest_hist.c) ------------------------------------------------- */

/* Bin 0 holds everything below min (negative delays too), bins 1..n-2 are
 * [min*base^(k-1), min*base^k), bin n-1 holds max and above. */
struct nest_bins {
	int64_t min_ns, max_ns;
	double base, lbase; /* lbase = log(base) */
	uint32_t n;
	int64_t *edge;      /* n: edge[k] = lower end of bin k (edge[n-1] = max) */
	uint32_t *cell;     /* ncell: first bin of each octave cell (fast lookup) */
	uint32_t cell0, ncell; /* ncell 0: no fast lookup, log() */
};

#define NEST_CELL_BITS 6 /* 64 cells an octave: narrower than a bin of base 1.05 */

/* Fills b (bins_free releases it). */
void nest_bins_init(struct nest_bins *b, int64_t min_ns, int64_t max_ns, double base);
void nest_bins_free(struct nest_bins *b);
/* The bin of d_ns by the log formula (nest_bin without octave cells). */
uint32_t nest_bin_log(const struct nest_bins *b, int64_t d_ns);
/* The same by log() alone (the reference the unit test compares with). */
uint32_t nest_bin_slow(const struct nest_bins *b, int64_t d_ns);

/* The octave cell of d: its binary exponent and top NEST_CELL_BITS mantissa
 * bits (d < 2^53, so the conversion is exact). */
static inline uint32_t nest_cell_of(int64_t d)
{
	union {
		double v;
		uint64_t u;
	} x = {.v = (double)d};
	return (uint32_t)(x.u >> (52 - NEST_CELL_BITS));
}

/* The bin of d_ns: its octave cell's first bin, then a step or none (a cell
 * is narrower than a bin). Inline: every score looks one up or two, 6.7 M
 * on table1-par-medium, where the call was 1.3% of the instructions. */
static inline uint32_t nest_bin(const struct nest_bins *b, int64_t d_ns)
{
	if (d_ns < b->min_ns)
		return 0;
	if (d_ns >= b->max_ns)
		return b->n - 1;
	if (!b->ncell)
		return nest_bin_log(b, d_ns);
	uint32_t k = b->cell[nest_cell_of(d_ns) - b->cell0];
	while (k < b->n - 2 && b->edge[k + 1] <= d_ns)
		k++;
	return k;
}
void nest_bin_range(const struct nest_bins *b, uint32_t k, int64_t *lo, int64_t *hi);

/* A sparse histogram of durations, for pattern statistics: bounded by the
 * number of bins, not by the number of samples. */
struct nest_hbin {
	uint32_t bin;
	uint64_t count;
};
struct nest_hist {
	uint64_t n;
	double sum;
	int64_t min, max;
	uint32_t nb, cap;
	struct nest_hbin *b; /* sorted by bin */
	uint64_t *dense;     /* or, once busy, a count per bin (nest_hist_seal: b again) */
};

void nest_hist_add(struct nest_hist *h, const struct nest_bins *bins, int64_t v);
/* Back to the sorted bins alone (b, nb), which every reader reads. */
void nest_hist_seal(struct nest_hist *h, const struct nest_bins *bins);
void nest_hist_free(struct nest_hist *h);
/* The q-quantile (0 < q <= 1): the geometric middle of the bin that holds it,
 * clamped to the observed [min, max]. */
int64_t nest_hist_quantile(const struct nest_hist *h, const struct nest_bins *bins, double q);

/* ---- calls (nest_pairs.c) ------------------------------------------------------ */

struct call {
	int64_t call_ts, ret_ts;  /* ret_ts BB_NO_TIME while open */
	int64_t max_ret;          /* roots: latest return in the tree */
	int64_t end_ts;           /* replay: the time it will return (pass 1 saw it) */
	uint64_t seq;             /* order of the CALL record */
	uint64_t line;
	uint32_t from, to;        /* node indices (the run's own table) */
	uint32_t nchildren;
	uint32_t sure_to[4];      /* pass 1, --reassign: callees of its sure children */
	uint32_t nsure;           /* how many (more than 4: not all kept) */
	int64_t sure_call[4], sure_ret[4]; /* pass 1: their times */
	uint32_t ridx;            /* pass 1: index of its CALL in the recorded records */
	uint64_t idhash;
	char *id;                 /* while open: idbuf, or allocated when longer */
	uint32_t idlen;           /* up to the first NUL, as strlen would see it */
	char idbuf[20];
	char *path;               /* oracle: path= value, or NULL */
	struct call *hnext;                 /* open-call hash chain */
	struct call *gprev, *gnext;         /* all open calls, in call order */
	struct call *nprev, *nnext;         /* calls into `to`, in call order */
	struct call *cnext;                 /* closed FIFO (skew window) */
	struct call *rnext;                 /* pending roots (pass 2) */
	struct call *parent;
	struct call *child, *sibling;       /* children in call order */
	unsigned open : 1, linked : 1, path_borrowed : 1;
	unsigned ambiguous : 1;   /* pass 1, --reassign: a candidate of a child with others */
	unsigned cexact : 1;      /* its parent was found by ctx= (nest_content.c) */
	uint32_t req;             /* its req= label in reqs, or BB_NONE */
	unsigned pamb : 1;        /* pass 2: its parent was ambiguous (NEST_AMB_SHARE) */
	unsigned palt : 1;        /* pass 2: a likely other parent of an ambiguous child */
	unsigned attr_owned : 1, parent_ambiguous : 1; /* instances (nest_inst.c) */
	const char *attr;         /* instances: "PROTO\0REQ\0", or NULL */
};

struct node_list {
	struct call *head, *tail;
	uint64_t ncalls; /* pass 1: call pairs into this node (--reassign) */
	uint64_t nobs;   /* pass 1: of them, with children all sure (--reassign) */
	uint32_t smin, smax; /* pass 1: fewest and most sure children of those (--global) */
	uint64_t pobs, povl; /* pass 1: pairs of sure children of one call into it, and
	                        of them, pairs that overlapped in time */
	int parallel;        /* its calls make calls in parallel: no overlap penalty */
	uint32_t host;       /* a service "H:P" of a trace with #naming: the node "H", or
	                        BB_NONE (nest_pairs.c, host aliases) */
	uint32_t svc;        /* a host "H": its first service node, or BB_NONE ... */
	uint32_t svc_next;   /* ... and each service the next on its host */
	uint32_t clast;      /* pass 1: 1 + the CALL record of the last call into this
	                        node that returned with tokens, or 0 (nest_content.c) */
	int64_t maxlat;      /* pass 1: the longest a call into it took to return */
	float *dur;          /* after pass 1, with early records: how many calls into
	                        it took each bin's time to return (nest_durations),
	                        or NULL */
};

/* Pass 1 records every message in 16 bytes when the budget allows, so that
 * pass 2 replays them instead of reading and parsing the trace again: a
 * CALL holds its nodes, a RET the index of the CALL it closes (so pass 2
 * needs no id matching), a MSG only its time. Pass 2 overwrites each CALL's
 * time with the call it creates, which its RET then finds. */
enum { REC_CALL = 0, REC_RET = 1, REC_MSG = 2, REC_SKIP = 3 }; /* SKIP: a call never returned */
#define REC_NODE_MAX ((UINT32_C(1) << 30) - 1)
struct mrec {
	union {
		int64_t ts;
		struct call *c; /* pass 2, CALL records, once replayed */
	} u;
	uint32_t op_from; /* op << 30 | caller node (CALL) */
	uint32_t arg;     /* CALL: callee node; RET: CALL's index or BB_NONE */
};

/* ---- the scoreboard (nest_score.c) ----------------------------------------- */

/* Classes of candidates by the tokens they share with the child: 0 to
 * NEST_CT_K - 1 shared (the last: that many or more). */
#define NEST_CT_K 4

/* The caller A of a pooled (EDGE) histogram (B, C). */
#define NEST_ANY UINT32_MAX

struct triple {
	uint32_t a, b, c;
	double *h;   /* bins.n values, or 2 * bins.n once neg (NULL: a sequence
	                histogram no round reads now, nest_seq.c); read and
	                counted through nest_tri_get and nest_tri_at */
	double norm; /* CALLER: 1 / (A->B call pairs), else 1 (see nest_triple_norms) */
	int seq;     /* a NEST_SEQ_FIRST histogram: its edge is measured from the
	                anchors (nest_seq_from_assignment) */
	int neg;     /* h holds the second half, the negative delays' (made on the
	                first count there: only skew or reordering makes one) */
};

/* Call pairs per edge (A, B): a = UINT32_MAX marks an empty slot. */
struct pairc {
	uint32_t a, b;
	uint64_t n;
	uint64_t once;  /* --reassign: calls into a whose children were all sure, one
	                   of them into b */
	uint64_t twice; /* --reassign: calls into a seen with two sure children into b */
	uint64_t al_n, al_has; /* pass 1, host aliases: calls a->b, and of them with a
	                          candidate parent */
	int al_root;    /* host aliases: calls a->b start requests (nest_alias_roots) */
	/* content evidence of children a->b (nest_content.c), by how many tokens
	 * two calls share (k, 0 to NEST_CT_K - 1, the last "or more"): sure
	 * children with tokens on both sides, and of them sharing k with the
	 * parent; pairs with a call into a that was not the parent, and of them
	 * sharing k; children with several candidates, their candidates sharing
	 * k, and the candidates with tokens less one */
	uint64_t ct_sure, ct_sure_k[NEST_CT_K], ct_rand, ct_rand_k[NEST_CT_K];
	uint64_t ct_amb, ct_amb_k[NEST_CT_K], ct_amb_other;
	double lr[NEST_CT_K]; /* likelihood ratio of a candidate sharing k tokens */
	uint64_t q_first, q_all; /* --global, the last round's assignment: children a->b
	                            that were their parent's first, and all (nest_queue.c) */
};

/* The content counts of e (ct_*) at zero: a new edge, or the counts learnt
 * again from a round's parents (nest_content_relearn). */
static inline void nest_pairc_ct_clear(struct pairc *e)
{
	e->ct_sure = e->ct_rand = e->ct_amb = e->ct_amb_other = 0;
	for (int k = 0; k < NEST_CT_K; k++)
		e->ct_sure_k[k] = e->ct_rand_k[k] = e->ct_amb_k[k] = 0;
}

/* ---- --global (nest_global.c) ----------------------------------------------- */

struct nest_gent {    /* a candidate parent of a child */
	union {           /* 8 bytes an entry, not 12 */
		uint32_t par;    /* its CALL record */
		uint32_t slot_c; /* while the flow runs (nest_global_solve): its (parent,
		                    callee) node, whose parent node holds par */
	};
	float w;          /* log score (-inf: none); then the cost, best - this */
};
struct nest_gchild {
	uint32_t ridx;    /* its CALL record (which holds its caller node) */
	uint32_t c;       /* its callee node */
	uint32_t off, nc; /* its candidates in ent */
};
/* Capacities of the flow network: how many children parent call par (a CALL
 * record) may take into callee node c, and in all (c == NEST_ANY); NEST_NO_CAP
 * for no bound. */
#define NEST_NO_CAP UINT32_MAX
typedef uint32_t (*nest_cap_fn)(struct bb_nest *n, uint32_t par, uint32_t c);
struct nest_global {
	struct nest_gchild *ch;
	size_t nch, capch;
	struct nest_gent *ent;
	size_t nent, capent;
	size_t hintch, hintent; /* the children and candidates expected (the last
	                           replay's): the first allocation */
	int full;         /* the candidates outgrew the memory budget: not used */
	nest_cap_fn cap;  /* NULL: the capacities pass 1's call counts support */
	uint32_t *truth;  /* --bound: per child, its true parent's entry, or BB_NONE */
	size_t captruth;
	uint8_t *ek;      /* per entry, with a last round's assignment: its queue count
	                     (nest_queue.c), or NULL */
	int keep;         /* the rounds keep the children and their candidates (ch, ent's
	                     par) from the first round's replay and score them again
	                     (nest_global_rescore) instead of replaying */
	uint8_t *cls;     /* with keep and tokens (content.rtok): per entry, its content
	                     class (nest_content.c); NULL without tokens, which leave
	                     every class CLS_NONE and no child marked */
	uint8_t *cex;     /* with cls: per child, its parent found by ctx= (cexact) */
	int have;         /* with keep: the return-side replay collected them all */
	uint8_t *redo;    /* a round after the second: per child a bit, set when the
	                     round decides it again (nest_global_rescore); NULL:
	                     every child */
	size_t npc_was, npar_was; /* the last round's network: its (parent, callee) and
	                             parent nodes (the same candidates make the same
	                             ones), the next network's first allocation */
};

/* ---- patterns (nest_paths.c) ------------------------------------------------- */

struct anode {
	uint32_t name;
	uint32_t nchildren;
	struct nest_hist lat, delay;
	struct anode *children;
};

struct pattern {
	uint64_t count;
	uint64_t ambiguous;  /* instances with a call whose parent was ambiguous */
	uint64_t exact;      /* instances whose every parent was found by ctx= */
	uint32_t req;        /* its root call's req= label in reqs, or BB_NONE */
	int req_mixed;       /* its instances' root calls had different labels */
	double root_lat_sum; /* sum of root latencies, ns */
	uint32_t key;        /* index in the pattern-key table */
	int moved;           /* mlo, mhi: its count interval from the changes of the
	                        unsure parents (nest_interval.c) */
	uint64_t mlo, mhi;
	struct anode root;
};

#define NEST_PEN_TAB 64

/* A 64-bit mixer (splitmix64's finaliser): hashes of call sequences and
 * of instance trees. */
static inline uint64_t nest_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Tokens kept per call (tok= values past this are ignored). */
#define NEST_TOK_MAX 8

/* A child's parent is ambiguous when the chosen one has less than this share
 * of the scores of all its candidates. */
#define NEST_AMB_SHARE 0.9

/* Sure calls (all children with one candidate) that must lack a child into
 * c before "at most one child into c" is refuted (nest_score.c conflict). */
#define NEST_ONCE_EXPECT 5.0

/* The automatic choice takes --global while its candidates (16 bytes each,
 * 24 a child) take at most this: beyond, the greedy choice (Table 1's
 * memory targets hold with it). */
#define NEST_AUTO_GLOBAL_BYTES ((uint64_t)64 << 20)

/* Host aliases: an edge of which fewer than this share of the calls had a
 * candidate parent among the calls into its caller's services starts
 * requests (nest_alias_roots). */
#define NEST_ALIAS_ROOT 0.99

/* --global solves at most this many times by default (--rounds, params
 * rounds), each round from the last one's parents
 * (context, and the sequence gaps nest_seq_from_assignment learns from
 * them). Each round after the second still moves 0.2-3% of the parents at
 * high load and gains there (the rig's second app at 64 in flight: 9.6% of
 * the instances wrong after 2 rounds, 4.7% after 3, 1.9% after 6, 1.7% after
 * 10); each costs a replay and a solve (figure 17's trace: 5.5 s of CPU with
 * 2, 11.1 s with 6). Ten since the rounds stop by themselves once their
 * moves reshape no pattern (NEST_SETTLED): only traces still reshaping run
 * more, and there 10 against 6 put 18,470 instead of 19,010 of 30 fresh
 * generated loads' instances wrong, 556 instead of 737 of the rig's 48
 * timing-only runs (--no-content), for 1.2-1.5 times the CPU; Table 1's
 * traces and figure 17's settle in 1 (nest_refine.c, settled; before
 * 2026-11-29 in 2 or 3: docs/performance.md, "Ten rounds at most"). A
 * build may set another default (-DNEST_GLOBAL_ROUNDS=N in CMAKE_C_FLAGS);
 * `--rounds N` measures what the rounds buy
 * (tests/bench/bench_rounds.sh, docs/performance.md). */
#ifndef NEST_GLOBAL_ROUNDS
#define NEST_GLOBAL_ROUNDS 10
#endif

/* ... but a round that moves at most this share of the children's parents
 * (from the round before's) is the last: the next one would start from the
 * same anchors, or all but, and move as few or none (before the queue order,
 * on table1-normal round 2 moved 4 of 76,341 and every later round none; on
 * table1-par-medium 27, 14, 8, 8 of 290,000 parents). At 1 in 10,000 before
 * 2026-11-29: stopping at 1 in 1,000 changed the output of 70 of 173 traces
 * and the instances wrong on them 627 -> 631 (30 fresh generated loads: 19,006
 * -> 19,007), and saves table1-par-medium's fourth round (145 moved in its
 * third, none in the fourth) and par-low's third (276 moved in its second):
 * 6% and 11% of their instructions (docs/performance.md, "Rounds that move a
 * thousandth"). So is a round whose moves change the callee sequences of at
 * most this share (of the children) of parents: the others only passed
 * children between calls of the same sequence, which no pattern shows
 * (nest_refine.c, reshaped). table1-par-medium's second round moves 22,380
 * children and reshapes 146 parents, short's 111 and none, social-r520's
 * second to fifth 971, 433, 198, 99 and 582, 251, 117, 53 (docs/performance.md,
 * "Rounds that reshape no pattern"). */
#define NEST_SETTLED 1e-3

/* A round after one whose changes reach at most this share of the children
 * (each child with a candidate whose children changed) decides only those
 * again (nest_global.c, near_changes): table1-long's third round (26,538 of
 * 762,642 children; its CPU 1.36 -> 1.18 s) and par-medium's fourth. Beyond
 * it the whole round again: the generated loads' second and third rounds
 * reach 5-12%, where the whole round is worth it (social-r390: 3.5% of the
 * instances wrong with the share at 10%, 3.2% at 5%, 3.0% with every round
 * whole; docs/performance.md, "Rounds near the changes"). */
#define NEST_NEAR_MAX 0.05

/* A node makes parallel calls when at least NEST_PAR_SHARE of the pairs of
 * sure children of its calls, and NEST_PAR_MIN pairs, overlapped in time. */
#define NEST_PAR_MIN 10
#define NEST_PAR_SHARE 0.1

/* ---- the run ----------------------------------------------------------------- */

/* What the caller asked and what the run decided from the trace: read by
 * every step, set by nest_run.c (alias by the first pass). */
struct nest_cfg {
	struct bb_nest_params p;
	enum bb_nest_mode mode;
	struct nest_bins bins;
	int auto_rs, auto_g;      /* return_score, global were BB_NEST_AUTO */
	const char *auto_why;     /* what the automatic choice found, for the params */
	int alias;                /* the trace names services H:P (#naming): a call from H
	                             may nest under a call into any service on H */
};

/* Where the run is (nest_run.c drives it, nest_pairs.c steps through it). */
struct nest_phase {
	int pass;                 /* 1: scoreboard, 2: parents and paths */
	int rstage;               /* pass 2 replay that only builds the return-side
	                             histograms (--return-score) */
	int gstage;               /* pass 2 replay that only collects candidates (--global) */
	int cstage;               /* pass 2 replay that only learns what tokens are worth */
	int sstage;               /* pass 2 replay that learns the sequence gaps (nest_seq.c) */
	int recording;            /* pass 1 is recording */
	int replay;               /* pass 2 runs from the records */
	int64_t now;
	uint64_t seq;
	size_t heap_peak;         /* sampled heap in use (mallinfo2), bytes */
	bb_nest_progress_fn progress;
	void *progress_ctx;
};

/* The nodes (nest_pairs.c). */
struct nest_nodes {
	struct bb_intern *names;  /* node names */
	uint32_t *rmap;           /* reader node index -> names index */
	size_t nrmap;
	struct node_list *into;   /* per node: calls into it */
	size_t ninto;
};

/* FindCallPairs' state (nest_pairs.c): the open calls, the closed ones still
 * candidates, the pending roots, and each child's candidates. */
struct nest_calls {
	struct call **htab;
	size_t hcap, hcount;
	struct call *ghead, *gtail;   /* all open calls, in call order */
	struct call *chead, *ctail;   /* closed, still candidates (skew window) */
	struct call *rhead, *rtail;   /* pending roots (pass 2) */
	struct call *freelist;
	size_t live;
	/* calls pass 1 found unmatched: pass 2 ignores them (sorted line numbers) */
	uint64_t *skip;
	size_t nskip, capskip;
	/* candidates scratch */
	struct call **cand;
	size_t capcand;
	uint8_t *ccls;            /* per candidate: its content class (nest_content.c) */
	size_t capccls;
	double *cscore;           /* per candidate: its score before any move (choose) */
	size_t capcscore;
};

/* The messages pass 1 recorded for pass 2 (nest_pairs.c). */
struct nest_recs {
	struct mrec *rec;
	size_t nrec, caprec;
	size_t rec_max;           /* budget, in records */
	uint32_t *rpath;          /* oracle, --bound: per record, its path= value in paths, or
	                             BB_NONE */
	struct bb_intern *paths;
	uint32_t *rreq;           /* per CALL record, its req= label (up to a '?') in reqs,
	                             or BB_NONE; reqs lives as long as the run */
	struct bb_intern *reqs;
	int64_t *rret;            /* --return-score: per CALL record, its return time */
	int64_t tend;             /* pass 1: the time of the trace's last message */
	size_t nearly;            /* CALL records 0..nearly: calls in flight when the
	                             capture began, made from their returns
	                             (nest_recs_early) */
	struct uret {             /* pass 1: the returns no call matched */
		uint32_t ridx, from, to; /* its RET record; the call's caller, callee */
	} *uret;
	size_t nuret, capuret;
	size_t in_len;            /* the trace's length, when it is in memory (plan):
	                             pass 1 sizes the arrays from it (hint_records) */
};

/* Content evidence (nest_content.c). */
struct nest_content {
	uint32_t *rtok;           /* per record: its tokens in tpool, or BB_NONE */
	uint64_t *tpool;
	size_t ntpool, captpool;
	int full;                 /* the tokens outgrew the memory budget: not used */
	struct tokfreq {          /* calls per token, open addressing (count 0: empty) */
		uint64_t *tok;
		uint32_t *count;
		size_t n, cap;
		uint64_t calls;       /* calls with tokens */
	} tf;
};

/* The sequence gaps (nest_seq.c). */
struct nest_gaps {
	int ready;                /* the sequence histograms are learnt */
	uint32_t *spar;           /* sequence stage, --global: per CALL record, its parent's */
	int64_t *sret, *scall;    /* ... and its return and call times */
	int scall_recs;           /* scall is a copy of the records' call times
	                             (nest_seq_times), dropped while a solve runs */
	uint32_t *soff, *skid;    /* ... each parent record's children: skid[soff[p]..soff[p+1]) */
	int scall_rec;            /* no scall: the records' own call times (nest_scall) */
	double *qlog;             /* --global: per node, the queue offsets' log factors
	                             (nest_queue.c), or NULL */
};

/* The choices of all parents at once: --global (nest_global.c) and --bound
 * (nest_bound.c). */
struct nest_solve {
	struct nest_global glob;  /* the children and their candidates */
	uint32_t *gpar;           /* per CALL record, its parent's, or BB_NONE */
	uint32_t *gprev;          /* while a round's solve runs: the round before's, there
	                             of the context (soff, skid; nest_seq_ctx_hold) */
	uint8_t *gdirty;          /* --global, from the second round: per CALL record a
	                             bit, set when the round changed its children */
	uint8_t *ramb;            /* per CALL record, 1: its parent was ambiguous, 2: a
	                             likely parent of such a child */
	struct nest_bound *bnd;   /* --bound: what the truth taught */
	struct nest_post {        /* --global: the other parents each unsure child could
	                             have (nest_refine.c), for the count intervals
	                             (nest_interval.c) */
		uint32_t *child;  /* per unsure child: its CALL record */
		uint32_t *off;    /* its changes: [off[i], off[i + 1]) */
		uint32_t *apar;   /* per change: the new parent's CALL record */
		uint32_t *aswap;  /* ... the child it swaps with (its CALL record), or
		                     BB_NONE: a move alone */
		size_t n, nalt, capn, capalt;
		int done;         /* the refinement filled it (maybe with no child) */
	} post;
	struct nest_cyc {         /* --global: the groups of children the last round moved
	                             (nest_refine.c, "Two-round cycles") */
		uint32_t ridx;    /* a child's CALL record */
		uint32_t alt;     /* the parent (CALL record) it would go back to */
		uint32_t group;   /* its group: children moved together */
		uint32_t size;    /* the children of its group */
		float margin;     /* how much likelier its group's parents are than the
		                     alternatives (log), scored in the alternatives' context */
	} *cyc;
	size_t ncyc;
	int round;                /* --global: the round solving (0 the first) */
	int last_round;           /* --global: the last round, whose refinement fills post */
	int settled;              /* --global: this round moved or reshaped at most
	                             NEST_SETTLED of the parents; its refinement filled post */
	struct bb_nest_cap *acap; /* --global: the capacities assumed (nest_caps_note) */
	size_t nacap;
};

/* The scoreboard (nest_board.c, nest_score.c). */
struct nest_board {
	struct triple *tri;
	size_t ntri, captri;
	uint32_t *tidx;           /* open addressing: index+1, 0 empty */
	size_t tcap;
	double *binw;             /* per-bin score factor (density or 1) */
	struct rtab {             /* return-side histograms, keyed as the scoreboard */
		struct triple *t;
		size_t n, cap;
		uint32_t *idx;
		size_t icap;
	} rsb;
	struct pairc *pc;         /* call pairs per (from, to), open addressing */
	size_t npc, pccap;
	double pen[3][NEST_PEN_TAB]; /* penalty factors x, y, z for small counts */
};

/* The patterns found (nest_paths.c). */
struct nest_pats {
	struct bb_intern *keys;
	struct pattern *pat;
	size_t npat, cappat;
	char *kbuf;               /* the key being built */
	size_t klen, kcap;
};

/* The patterns as viz takes them (nest_paths.c, nest_run.c). */
struct nest_export {
	struct bb_vpatterns out;
	struct bb_vpattern *vpat;
	size_t *order;            /* ranked pattern indices, after pruning */
	size_t norder;
	void **allocs;            /* export allocations */
	size_t nallocs, capallocs;
	struct bb_vval *params, *stats;
};

struct bb_nest {
	struct nest_cfg cfg;
	struct nest_phase phase;
	struct nest_nodes nodes;
	struct nest_calls calls;
	struct nest_recs recs;
	struct nest_content content;
	struct nest_gaps gaps;
	struct nest_solve solve;
	struct nest_board board;
	struct nest_pats pats;
	struct nest_export ex;

	struct bb_nest_stats st;
	int bound_set;            /* bb_nest_set_bound was called: the stats carry it */
	uint64_t bound_fn, bound_true;
	struct nest_inst *inst;   /* instances wanted (nest_inst.c), or NULL */
};

/* nest_pairs.c */
int nest_pass(struct bb_nest *n, struct bb_reader *r, struct bb_err *err);
void nest_replay(struct bb_nest *n);
void nest_calls_free(struct nest_calls *cs);
void nest_nodes_init(struct nest_nodes *d);
void nest_nodes_free(struct nest_nodes *d);
void nest_recs_early(struct bb_nest *n);
void nest_durations(struct bb_nest *n);
void nest_recs_trim(struct bb_nest *n);
void nest_rret_drop(struct bb_nest *n);
void nest_rret_again(struct bb_nest *n);
void nest_recs_free(struct nest_recs *r, int keep_reqs);
uint32_t nest_node(struct bb_nest *n, const struct bb_reader *r, uint32_t ri);
void nest_alias_roots(struct bb_nest *n);

/* nest_heap.c */
void nest_heap_sample(struct bb_nest *n);

/* nest_board.c: the scoreboard's tables. Their lookups are inline, below (they
 * run for every candidate scored); a lookup that creates an absent key calls
 * the _add function. */
struct triple *nest_triple_add(struct bb_nest *n, uint32_t a, uint32_t b, uint32_t c);
struct triple *nest_rsb_add(struct bb_nest *n, uint32_t a, uint32_t b, uint32_t c);
double *nest_tri_at(const struct bb_nest *n, struct triple *t, uint32_t k);
void nest_tri_clear(const struct bb_nest *n, struct triple *t);
void nest_tri_drop(struct triple *t);
struct pairc *nest_pairc_add(struct bb_nest *n, uint32_t a, uint32_t b);
void nest_board_free(struct nest_board *b);

/* nest_score.c */
void nest_score_child(struct bb_nest *n, struct call *child, struct call **cand, size_t nc);
void nest_score_return(struct bb_nest *n, struct call *child, struct call **cand, size_t nc);
void nest_sure_child(struct bb_nest *n, struct call *c, struct call **cand, size_t nc);
void nest_triple_norms(struct bb_nest *n);
void nest_smooth(struct bb_nest *n);
/* The histograms nest_densities turns into nearest-neighbour densities. */
enum nest_dens { NEST_DENS_CALL, NEST_DENS_RETURN, NEST_DENS_SEQ };
void nest_densities(struct bb_nest *n, enum nest_dens which);
void nest_bin_weights(struct bb_nest *n);
void nest_penalty_tables(struct bb_nest *n);
/* What scoring a child reads of its edge alone, looked up once for all its
 * candidates: the per-edge histogram (pool; NULL without the per-edge
 * scoreboard), the return-side one (rpool, on first need: rlooked), and
 * whether the edge is scored from its anchors (seq: nest_seq_edge, once
 * the gaps are ready). */
struct nest_edge_look {
	struct triple *pool, *rpool;
	int rlooked, seq;
};
void nest_edge_look(struct bb_nest *n, const struct call *child, struct nest_edge_look *x);
double nest_base_score(struct bb_nest *n, struct call *par, const struct call *child,
                       struct nest_edge_look *x);
int nest_once(struct bb_nest *n, uint32_t b, uint32_t c);
/* nest_once, and nearly every call into b calls c (at least half as many
 * b->c calls as calls into b): --global holds it as a hard capacity, and the
 * refinement keeps to it too. */
int nest_once_hard(struct bb_nest *n, uint32_t b, uint32_t c);
/* Both of (b, c) as 0 (not once), 1 (once, soft) or 2 (once, hard),
 * remembered in m (zeroed by the caller): they read pass 1's counts alone,
 * and --global asks for every child of every round. */
#define NEST_ONCE_MEMO 1024 /* direct-mapped: 64 missed 28% on table1-par-medium */
struct nest_once_memo {
	uint32_t b[NEST_ONCE_MEMO], c[NEST_ONCE_MEMO];
	uint8_t v[NEST_ONCE_MEMO]; /* 0 empty, else the answer + 1 */
};
int nest_once_of(struct bb_nest *n, struct nest_once_memo *m, uint32_t b, uint32_t c);
void nest_parallel_nodes(struct bb_nest *n);
struct call *nest_choose_parent(struct bb_nest *n, struct call *child, struct call **cand,
                                size_t nc);

/* nest_seq.c: the callee bits of the sequence histograms' keys */
#define NEST_SEQ_FIRST (UINT32_C(1) << 30)
#define NEST_SEQ_NEXT (UINT32_C(1) << 31)
double nest_seq_score(struct bb_nest *n, const struct call *par, const struct call *child);
void nest_seq_learn(struct bb_nest *n, struct call *par, struct call *c);
void nest_seq_context(struct bb_nest *n, struct call *par, struct call *c);
void nest_seq_returned(struct bb_nest *n, const struct call *c);
void nest_seq_stage_begin(struct bb_nest *n);
void nest_seq_stage_end(struct bb_nest *n);
void nest_seq_free(struct bb_nest *n);
void nest_seq_times(struct bb_nest *n, int rec);
void nest_seq_times_drop(struct bb_nest *n);
void nest_seq_times_again(struct bb_nest *n);
int nest_seq_from_global(struct bb_nest *n);
uint32_t *nest_seq_ctx_hold(struct bb_nest *n);
void nest_seq_ctx_again(struct bb_nest *n, uint32_t *prev);
uint32_t *nest_seq_parents(const struct bb_nest *n);
int nest_seq_had_child(const struct bb_nest *n, uint32_t p, uint32_t c);
int nest_seq_from_assignment(struct bb_nest *n);
int nest_seq_edge(struct bb_nest *n, const struct call *child);
uint32_t nest_seq_overlaps(const struct bb_nest *n, const struct call *par,
                           const struct call *child);

/* The call time of CALL record i as the sequence stage notes it (BB_NO_TIME
 * for other records): scall's, or with scall_rec the record's own, which
 * holds it whenever no replay runs (the rounds score outside replays). */
static inline int64_t nest_scall(const struct bb_nest *n, uint32_t i)
{
	if (n->gaps.scall)
		return n->gaps.scall[i];
	const struct mrec *m = &n->recs.rec[i];
	return m->op_from >> 30 == REC_CALL ? m->u.ts : BB_NO_TIME;
}

/* Whether the call times of nest_scall are there. */
static inline int nest_has_scall(const struct bb_nest *n)
{
	return n->gaps.scall || n->gaps.scall_rec;
}

/* nest_content.c */
void nest_content_record(struct bb_nest *n, const struct bb_rec *rec, uint32_t ridx);
size_t nest_content_classes(struct bb_nest *n, struct call *c, struct call **cand, size_t nc);
void nest_content_learn(struct bb_nest *n, struct call *c, size_t nc);
void nest_content_closed(struct bb_nest *n, const struct call *c);
void nest_content_finish(struct bb_nest *n);
void nest_content_relearn(struct bb_nest *n);
double nest_content_factor(struct bb_nest *n, const struct call *c, size_t i);
void nest_content_free(struct bb_nest *n);
uint32_t nest_content_ids(const struct bb_nest *n, uint32_t ridx, uint32_t max_calls,
                          uint64_t *out, uint32_t max);

/* nest_global.c */
void nest_global_collect(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc);
/* The same, unscored (with keep, the return-side replay: nest_global_rescore
 * scores them once the return-side histograms are complete). */
void nest_global_append(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc);
/* Chooses the parents of the children in n->glob (each entry's w its log
 * score) that maximise the sum of the scores under the capacities (n->glob.cap,
 * or pass 1's counts); sets n->gpar and frees n->glob. Also --bound's solver. */
void nest_global_solve(struct bb_nest *n);
/* The children a call into node b makes, when pass 1's counts say every
 * call makes as many (0: no bound); *hard set when the average is exact or
 * enough calls were seen with all their children sure, else it is soft. */
uint32_t nest_total_cap(struct bb_nest *n, uint32_t b, int *hard);
/* Notes in n->solve.acap the nodes whose hard capacity came from an exact
 * average alone (bb_nest_assumed_caps). */
void nest_caps_note(struct bb_nest *n);
void nest_global_free(struct bb_nest *n);
/* The end of a round: frees what the round made, but with keep the children
 * and their candidates, which the next round scores again. */
void nest_global_round_end(struct bb_nest *n);
/* Scores the kept children's candidates again (a round after the first),
 * as the replay collecting them would. */
void nest_global_rescore(struct bb_nest *n);

/* nest_queue.c */
/* A queue offset (ek) that is none: the child is not a start call, or a
 * round did not score it again (nest_global_rescore) */
#define NEST_Q_NONE 0x7f
void nest_queue_ranks(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc,
                      uint8_t *out);
void nest_queue_weigh(struct bb_nest *n);
void nest_queue_starts(struct bb_nest *n);

/* nest_refine.c */
uint64_t nest_refine(struct bb_nest *n, uint32_t *asg);

/* nest_interval.c */
void nest_post_add(struct nest_post *q, uint32_t child);
void nest_post_alt(struct nest_post *q, uint32_t par, uint32_t swap);
void nest_post_free(struct nest_post *q);
void nest_intervals(struct bb_nest *n);

/* nest_bound.c */
void nest_bound_collect(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc);
void nest_bound_solve(struct bb_nest *n);
void nest_bound_free(struct bb_nest *n);
/* Path truth (--oracle, --bound): whether candidate a, of child c's path
 * instance (path=) as b is, is likelier c's true parent than b: the one whose
 * times nest c with less help from the skew window, then the later call
 * (the inner of nested calls into one node). The first candidate of the path
 * alone took a call that had returned before c began: a parent calling a
 * service twice in turn had both calls' children under the first. */
int nest_path_better(const struct call *c, const struct call *a, const struct call *b);
/* nest_inst.c */
struct nest_inst;
void nest_inst_free(struct nest_inst *s);
void nest_inst_restart(struct nest_inst *s);
void nest_inst_on_call(struct bb_nest *n, struct call *c, const struct bb_rec *rec);
void nest_inst_on_ret(struct bb_nest *n, struct call *c, const struct bb_rec *rec);
void nest_inst_shift(struct bb_nest *n, size_t k);
void nest_inst_on_replay(struct bb_nest *n, struct call *c);
int nest_parent_ambiguous(struct bb_nest *n, struct call *child, struct call **cand, size_t nc,
                          struct call *parent);
void nest_inst_emit(struct bb_nest *n, const struct call *root, uint32_t key);

/* nest_paths.c */
void nest_attach(struct call *parent, struct call *child);
uint32_t nest_add_instance(struct bb_nest *n, struct call *root);
void nest_pats_init(struct nest_pats *ps);
void nest_pats_free(struct nest_pats *ps);
char *nest_pattern_text(const struct bb_nest *n, const struct pattern *p);
void nest_export_free(struct nest_export *ex);
void nest_export(struct bb_nest *n);

/* a - b, saturated: a trace's timestamps may be up to 2^64 ns apart. */
static inline int64_t nest_sub(int64_t a, int64_t b)
{
	int64_t d;
	if (__builtin_sub_overflow(a, b, &d))
		d = a < b ? INT64_MIN : INT64_MAX;
	return d;
}

/* Whether CALL record ridx is a call in flight when the capture began, one
 * nest_recs_early made from its return (records 0..nearly). */
static inline int nest_rec_early(const struct bb_nest *n, uint32_t ridx)
{
	return ridx < n->recs.nearly;
}

/* The scoreboard bin of delay d. Scoreboard histograms have two halves: bins
 * 0..n-1 for delays >= 0 and n..2n-1 for negative ones (by magnitude), which
 * only a skew window lets in. Folding those into the "below min" bin would
 * pile every parent that seems to start after its child into one narrow bin
 * and make it win. */
static inline uint32_t nest_sb_bin(const struct bb_nest *n, int64_t d)
{
	return d >= 0 ? nest_bin(&n->cfg.bins, d) : n->cfg.bins.n + nest_bin(&n->cfg.bins, -d);
}

/* Histogram t's value in scoreboard bin k: 0 in a second half not made. */
static inline double nest_tri_get(const struct bb_nest *n, const struct triple *t, uint32_t k)
{
	return k < n->cfg.bins.n || t->neg ? t->h[k] : 0;
}

/* The halves histogram t holds (1, or 2 with negative delays). */
static inline uint32_t nest_tri_halves(const struct triple *t)
{
	return t->neg ? 2 : 1;
}

/* The tables' hash of a key (a pair takes c = 0). */
static inline uint64_t nest_triple_hash(uint32_t a, uint32_t b, uint32_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL;
	h ^= (b + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
	h ^= (c + 0x85ebca6b27d4eb4fULL) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* Triple (a, b, c) of a table of triples t under the open-addressing index idx
 * (cap slots: index + 1, 0 empty), or NULL. */
static inline struct triple *nest_tri_find(struct triple *t, const uint32_t *idx, size_t cap,
                                           uint32_t a, uint32_t b, uint32_t c)
{
	size_t mask = cap - 1;
	if (cap)
		for (size_t k = nest_triple_hash(a, b, c) & mask; idx[k]; k = (k + 1) & mask) {
			struct triple *x = &t[idx[k] - 1];
			if (x->a == a && x->b == b && x->c == c)
				return x;
		}
	return NULL;
}

/* The histogram of nestings of B->C calls in A->B calls, created if asked. */
static inline struct triple *nest_triple(struct bb_nest *n, uint32_t a, uint32_t b, uint32_t c,
                                         int create)
{
	struct nest_board *sb = &n->board;
	struct triple *x = nest_tri_find(sb->tri, sb->tidx, sb->tcap, a, b, c);
	return x || !create ? x : nest_triple_add(n, a, b, c);
}

/* The return-side histogram of (a, b, c), created if asked: the same keys as
 * the scoreboard (a = NEST_ANY with the per-edge one). */
static inline struct triple *nest_rsb(struct bb_nest *n, uint32_t a, uint32_t b, uint32_t c,
                                      int create)
{
	struct rtab *r = &n->board.rsb;
	struct triple *x = nest_tri_find(r->t, r->idx, r->icap, a, b, c);
	return x || !create ? x : nest_rsb_add(n, a, b, c);
}

/* The counts of edge a->b, created if asked (NULL when not and absent). */
static inline struct pairc *nest_pairc(struct bb_nest *n, uint32_t a, uint32_t b, int create)
{
	const struct nest_board *sb = &n->board;
	if (sb->pccap)
		for (size_t k = nest_triple_hash(a, b, 0) & (sb->pccap - 1);
		     sb->pc[k].a != UINT32_MAX; k = (k + 1) & (sb->pccap - 1))
			if (sb->pc[k].a == a && sb->pc[k].b == b)
				return &sb->pc[k];
	return create ? nest_pairc_add(n, a, b) : NULL;
}

/* Pass 1: one more A->B call pair. */
static inline void nest_pair_count(struct bb_nest *n, uint32_t a, uint32_t b)
{
	nest_pairc(n, a, b, 1)->n++;
}

#endif
