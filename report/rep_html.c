/* rep_html.c - bbreport's page: one self-contained HTML file with SVG graphs, sortable tables, charts */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/rep_int.h"

/* ---- requests over time (from the instances as they complete) ------------------- */

/* Per second of the trace: instances started, their latency sum and max. */
struct bb_rep_series {
	int64_t t0_s;             /* the first bucket's second */
	size_t n, cap;
	uint64_t *count;
	double *sum;
	int64_t *max;
	uint64_t instances;
};

struct bb_rep_series *bb_rep_series_new(void)
{
	return bb_xcalloc(1, sizeof(struct bb_rep_series));
}

void bb_rep_series_free(struct bb_rep_series *s)
{
	if (!s)
		return;
	free(s->count);
	free(s->sum);
	free(s->max);
	free(s);
}

static void series_grow(struct bb_rep_series *s, size_t cap, size_t shift)
{
	uint64_t *c = bb_xcalloc(cap, sizeof(*c));
	double *u = bb_xcalloc(cap, sizeof(*u));
	int64_t *m = bb_xcalloc(cap, sizeof(*m));
	if (s->n) {
		memcpy(c + shift, s->count, s->n * sizeof(*c));
		memcpy(u + shift, s->sum, s->n * sizeof(*u));
		memcpy(m + shift, s->max, s->n * sizeof(*m));
	}
	free(s->count);
	free(s->sum);
	free(s->max);
	s->count = c;
	s->sum = u;
	s->max = m;
	s->cap = cap;
}

/* Traces span seconds to days: at most this many seconds are kept (10 days);
 * instances beyond are counted, not charted. */
#define SERIES_MAX ((size_t)864000)

int bb_rep_series_add(void *ctx, const struct bb_vinstance *in)
{
	struct bb_rep_series *s = ctx;
	int64_t t = in->start_ns / BB_NS_PER_S;
	s->instances++;
	if (!s->n) {
		s->t0_s = t;
		series_grow(s, 64, 0);
		s->n = 1;
	}
	if (t < s->t0_s) {
		size_t shift = (size_t)(s->t0_s - t);
		if (s->n + shift > SERIES_MAX)
			return 0;
		size_t cap = s->cap;
		while (cap < s->n + shift)
			cap *= 2;
		series_grow(s, cap, shift);
		s->n += shift;
		s->t0_s = t;
	}
	size_t k = (size_t)(t - s->t0_s);
	if (k >= SERIES_MAX)
		return 0;
	if (k >= s->cap) {
		size_t cap = s->cap;
		while (cap <= k)
			cap *= 2;
		series_grow(s, cap, 0);
	}
	if (k >= s->n)
		s->n = k + 1;
	s->count[k]++;
	s->sum[k] += (double)in->latency_ns;
	if (in->latency_ns > s->max[k])
		s->max[k] = in->latency_ns;
	return 0;
}

/* ---- HTML pieces ----------------------------------------------------------------- */

static void esc(FILE *o, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", o);
			break;
		case '>':
			fputs("&gt;", o);
			break;
		case '&':
			fputs("&amp;", o);
			break;
		case '"':
			fputs("&quot;", o);
			break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fprintf(o, "\\x%02x", (unsigned char)*s);
			else
				fputc(*s, o);
		}
	}
}

static void dur(FILE *o, int64_t ns)
{
	char b[BB_DUR_BUFSZ];
	bb_viz_fmt_ns(ns, b);
	fputs(b, o);
}

/* A numeric cell that sorts by its value. */
static void td_ns(FILE *o, int64_t ns)
{
	fprintf(o, "<td data-v=\"%lld\">", (long long)ns);
	dur(o, ns);
	fputs("</td>", o);
}

static void td_u(FILE *o, uint64_t v)
{
	fprintf(o, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)v, (unsigned long long)v);
}

/* Graphviz's SVG without its XML prologue, inline. */
static void svg_inline(FILE *o, const char *svg)
{
	const char *p = strstr(svg, "<svg");
	fputs(p ? p : svg, o);
}

static const char *const STYLE =
	"body{font-family:Helvetica,Arial,sans-serif;margin:1.5em;color:#222;max-width:1200px}"
	"h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse;margin:.5em 0}th,td{padding:.2em .6em;text-align:right;"
	"border-bottom:1px solid #eee;font-size:.9em}th{cursor:pointer;background:#f4f4f4}"
	"td.l,th.l{text-align:left}.verdict{font-size:1.2em;font-weight:bold;padding:.5em;"
	"background:#fff4e0;border-left:4px solid #e80}.ok{color:#080}.bad{color:#c00}"
	".graph{display:inline-block;vertical-align:top;margin:.5em;border:1px solid #ddd;"
	"padding:.3em}.graph svg{max-width:560px;height:auto}.chart{margin:.5em 0}"
	"code{background:#f4f4f4;padding:0 .2em}";

/* Sorts a table.sortable by the clicked column: numbers by data-v, text otherwise. */
static const char *const SCRIPT =
	"(function(){function key(r,i){var c=r.cells[i];if(!c)return '';"
	"var v=c.getAttribute('data-v');return v!==null?parseFloat(v):c.textContent;}"
	"function sort(t,i,th){var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);"
	"var asc=th.getAttribute('data-dir')!=='asc';rows.sort(function(x,y){var a=key(x,i),"
	"c=key(y,i),d=(typeof a==='number'&&typeof c==='number')?a-c:String(a).localeCompare("
	"String(c));return asc?d:-d;});rows.forEach(function(r){b.appendChild(r);});"
	"var hs=t.tHead.rows[0].cells;for(var k=0;k<hs.length;k++)hs[k].removeAttribute("
	"'data-dir');th.setAttribute('data-dir',asc?'asc':'desc');}"
	"var ts=document.querySelectorAll('table.sortable');for(var j=0;j<ts.length;j++){"
	"(function(t){var hs=t.tHead.rows[0].cells;for(var i=0;i<hs.length;i++){"
	"(function(i){hs[i].addEventListener('click',function(){sort(t,i,hs[i]);});})(i);}"
	"})(ts[j]);}})();";

/* A line chart of n values (NaN: no point), w x h pixels, with its maximum
 * labelled by fmt. */
static void chart(FILE *o, const char *title, const double *v, size_t n, double x0_s,
                  double step_s, int is_ns, const char *color)
{
	const int w = 900, h = 160, left = 70, bottom = 20;
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] == v[i] && v[i] > mx)
			mx = v[i];
	fprintf(o, "<div class=\"chart\"><div>%s</div><svg xmlns=\"http://www.w3.org/2000/svg\" "
	           "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">", title, w, h, w, h);
	fprintf(o, "<rect x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
	           "stroke=\"#ccc\"/>", left, w - left, h - bottom);
	char lab[64];
	if (is_ns)
		bb_viz_fmt_ns(llround(mx), lab);
	else
		snprintf(lab, sizeof(lab), "%.3g", mx);
	fprintf(o, "<text x=\"%d\" y=\"12\" font-size=\"11\" text-anchor=\"end\">%s</text>",
	        left - 4, lab);
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0</text>", left - 4,
	        h - bottom);
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%.0f s</text>", left, h - 4, 0.0);
	fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.0f s</text>", w,
	        h - 4, step_s * (double)n);
	(void)x0_s;
	fprintf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
	for (size_t i = 0; i < n; i++) {
		if (v[i] != v[i])
			continue;
		double x = left + (n > 1 ? (double)i / (double)(n - 1) : 0.5) * (w - left);
		double y = (h - bottom) - (mx > 0 ? v[i] / mx : 0) * (h - bottom - 4);
		fprintf(o, "%.1f,%.1f ", x, y);
	}
	fputs("\"/></svg></div>\n", o);
}

/* At most MAXPTS points: consecutive seconds merged. */
#define MAXPTS 300

static void time_charts(FILE *o, const struct bb_rep_series *s)
{
	if (!s || !s->n) {
		fputs("<p>No instances.</p>\n", o);
		return;
	}
	size_t per = (s->n + MAXPTS - 1) / MAXPTS, np = (s->n + per - 1) / per;
	double *rps = bb_xcalloc(np, sizeof(*rps)), *mean = bb_xcalloc(np, sizeof(*mean)),
	       *mx = bb_xcalloc(np, sizeof(*mx));
	for (size_t k = 0; k < np; k++) {
		uint64_t c = 0;
		double sum = 0;
		int64_t m = 0;
		for (size_t i = k * per; i < s->n && i < (k + 1) * per; i++) {
			c += s->count[i];
			sum += s->sum[i];
			if (s->max[i] > m)
				m = s->max[i];
		}
		rps[k] = (double)c / (double)per;
		mean[k] = c ? sum / (double)c : NAN;
		mx[k] = c ? (double)m : NAN;
	}
	fprintf(o, "<p>%llu requests (path instances) over %zu s, by start time; each point %zu s."
	           "</p>\n", (unsigned long long)s->instances, s->n, per);
	chart(o, "requests per second", rps, np, 0, (double)per, 0, "#1f77b4");
	chart(o, "mean latency", mean, np, 0, (double)per, 1, "#2ca02c");
	chart(o, "max latency", mx, np, 0, (double)per, 1, "#d62728");
	free(rps);
	free(mean);
	free(mx);
}

/* ---- nodes ----------------------------------------------------------------------- */

struct node_agg {
	const char *name;
	struct rep_pool lat;
	uint64_t patterns;
};

static void nodes_walk(struct node_agg **v, size_t *n, size_t *cap, const struct bb_vnode *x,
                       int depth)
{
	if (depth > 0) {
		size_t i = 0;
		while (i < *n && strcmp((*v)[i].name, x->name) != 0)
			i++;
		if (i == *n) {
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 32;
				*v = bb_xrealloc(*v, *cap * sizeof(**v));
			}
			memset(&(*v)[i], 0, sizeof(**v));
			(*v)[i].name = x->name;
			(*n)++;
		}
		rep_pool_add(&(*v)[i].lat, &x->latency);
		(*v)[i].patterns++;
	}
	for (size_t i = 0; i < x->nchildren; i++)
		nodes_walk(v, n, cap, &x->children[i], depth + 1);
}

/* A histogram of the pooled bins as bars (log-spaced bins: a log axis). */
static void hist_svg(FILE *o, const struct rep_pool *p)
{
	const int w = 300, h = 60;
	uint64_t mx = 0;
	for (size_t i = 0; i < p->nb; i++)
		if (p->b[i].count > mx)
			mx = p->b[i].count;
	if (!p->nb || !mx) {
		fputs("-", o);
		return;
	}
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">", w,
	        h + 12);
	int64_t lo = p->b[0].lo_ns, hi = p->b[p->nb - 1].hi_ns;
	if (hi == INT64_MAX)
		hi = p->b[p->nb - 1].lo_ns * 2;
	double l0 = log((double)(lo > 0 ? lo : 1)), l1 = log((double)(hi > lo ? hi : lo + 1));
	if (!(l1 > l0))
		l1 = l0 + 1;
	for (size_t i = 0; i < p->nb; i++) {
		double a = log((double)(p->b[i].lo_ns > 0 ? p->b[i].lo_ns : 1));
		double b = p->b[i].hi_ns == INT64_MAX ? l1 : log((double)p->b[i].hi_ns);
		double x = (a - l0) / (l1 - l0) * w, bw = (b - a) / (l1 - l0) * w;
		double bh = (double)p->b[i].count / (double)mx * h;
		fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		           "fill=\"#4a7ab5\"/>", x, h - bh, bw > 1 ? bw : 1, bh);
	}
	char a[BB_DUR_BUFSZ], b[BB_DUR_BUFSZ];
	bb_viz_fmt_ns(lo, a);
	bb_viz_fmt_ns(hi, b);
	fprintf(o, "<text x=\"0\" y=\"%d\" font-size=\"10\">%s</text><text x=\"%d\" y=\"%d\" "
	           "font-size=\"10\" text-anchor=\"end\">%s</text></svg>", h + 11, a, w, h + 11, b);
}

static void nodes_table(FILE *o, const struct bb_vpatterns *p)
{
	struct node_agg *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < p->n; i++)
		nodes_walk(&v, &n, &cap, &p->v[i].root, 0);
	fputs("<table class=\"sortable\" id=\"nodes\"><thead><tr><th class=\"l\">node</th>"
	      "<th>calls</th><th>patterns</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th>"
	      "<th class=\"l\">latency histogram (log scale)</th></tr></thead><tbody>\n", o);
	for (size_t i = 0; i < n; i++) {
		struct bb_rep_dist d;
		rep_pool_dist(&v[i].lat, &d);
		fputs("<tr><td class=\"l\">", o);
		esc(o, v[i].name);
		fputs("</td>", o);
		td_u(o, d.n);
		td_u(o, v[i].patterns);
		td_ns(o, llround(d.mean_ns));
		td_ns(o, d.p50);
		td_ns(o, d.p90);
		td_ns(o, d.p99);
		fputs("<td class=\"l\">", o);
		hist_svg(o, &v[i].lat);
		fputs("</td></tr>\n", o);
		free(v[i].lat.b);
	}
	fputs("</tbody></table>\n", o);
	free(v);
}

/* ---- patterns -------------------------------------------------------------------- */

static int patterns_section(FILE *o, struct bb_vsvg *r, const struct bb_vpatterns *p, size_t top,
                            struct bb_err *err)
{
	size_t n = top && p->n > top ? top : p->n;
	fputs("<table class=\"sortable\" id=\"patterns\"><thead><tr><th>rank</th><th>count</th>"
	      "<th>total latency</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th>"
	      "<th>max</th><th class=\"l\">id</th><th class=\"l\">path</th></tr></thead><tbody>\n",
	      o);
	for (size_t i = 0; i < n; i++) {
		const struct bb_vpattern *pt = &p->v[i];
		const struct bb_vstat *l = &pt->root.latency;
		char *shape = bb_viz_pattern_shape(pt);
		char id[BB_PATTERN_ID_BUFSZ];
		bb_viz_shape_id(shape, id);
		fputs("<tr>", o);
		td_u(o, pt->rank);
		td_u(o, pt->count);
		td_ns(o, pt->total_latency_ns);
		td_ns(o, llround(l->mean));
		td_ns(o, l->p50);
		td_ns(o, l->p90);
		td_ns(o, l->p99);
		td_ns(o, l->max);
		fprintf(o, "<td class=\"l\"><a href=\"#g%s\"><code>%s</code></a></td><td class=\"l\">",
		        id, id);
		esc(o, shape);
		fputs("</td></tr>\n", o);
		free(shape);
	}
	fputs("</tbody></table>\n", o);
	if (n < p->n)
		fprintf(o, "<p>%zu more patterns not shown (bbreport --top).</p>\n", p->n - n);
	fputs("<h2>Pattern graphs</h2>\n<p>Node: mean latency; edge: mean call delay "
	      "(rendered by Graphviz in bbreport).</p>\n", o);
	for (size_t i = 0; i < n; i++) {
		const struct bb_vpattern *pt = &p->v[i];
		char *shape = bb_viz_pattern_shape(pt);
		char id[BB_PATTERN_ID_BUFSZ];
		bb_viz_shape_id(shape, id);
		free(shape);
		size_t len;
		char *svg = bb_viz_pattern_svg(r, pt, &len, err);
		if (!svg)
			return BB_ERR_IO;
		char total[BB_DUR_BUFSZ];
		bb_viz_fmt_ns(pt->total_latency_ns, total);
		fprintf(o, "<div class=\"graph\" id=\"g%s\"><div>#%u: %llu paths, %s total</div>", id,
		        pt->rank, (unsigned long long)pt->count, total);
		svg_inline(o, svg);
		fputs("</div>\n", o);
		free(svg);
	}
	return 0;
}

/* ---- capture health ---------------------------------------------------------- */

/* The capacities the nesting assumed (docs/nesting.md, "Capacities"). */
static void assumed(FILE *o, const struct bb_rep_run *run)
{
	const struct bb_nest_cap *c;
	size_t n = bb_rep_assumed_caps(run, &c);
	if (!n)
		return;
	fputs("<p id=\"assumed\">Assumed (the counts fit it, too few calls showed it; a "
	      "node whose requests vary is bound wrongly):", o);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? "; every call into <code>" : " every call into <code>", o);
		esc(o, c[i].node);
		fprintf(o, "</code> makes %u call%s (%llu calls, %llu seen with all their calls "
		           "sure)",
		        c[i].children, c[i].children == 1 ? "" : "s", (unsigned long long)c[i].calls,
		        (unsigned long long)c[i].calls_sure);
	}
	fputs(".</p>\n", o);
}

/* A #capture line's "key=value" fields, with drops and losses marked. */
static void health(FILE *o, const char *trace, const struct bb_vpatterns *p,
                   struct bb_err *err)
{
	struct bb_err e2 = {{0}};
	FILE *f = fopen(trace, "rb");
	struct bb_reader *r = f ? bb_reader_fopen(f, trace, NULL, &e2) : NULL;
	const char *cap = NULL;
	/* bbcap writes #capture last, once the counts are known: the metadata
	 * is complete at the end of the trace */
	struct bb_rec rec;
	while (r && bb_reader_next(r, &rec, &e2) > 0)
		;
	for (size_t i = 0; r && i < bb_reader_nmeta(r); i++)
		if (strncmp(bb_reader_meta(r, i), "capture ", 8) == 0)
			cap = bb_reader_meta(r, i) + 8;
	(void)err;
	const char *bad_keys[] = {"dropped_kernel", "dropped_iface", "tcp_gaps", "tcp_gap_bytes",
	                          "tcp_evicted", "udp_evicted", "late"};
	int trouble = 0;
	if (cap) {
		fputs("<table id=\"capture\"><thead><tr><th class=\"l\">capture</th><th class=\"l\">"
		      "value</th></tr></thead><tbody>\n", o);
		char *copy = bb_xstrndup(cap, strlen(cap)), *save = NULL;
		for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
			char *eq = strchr(t, '=');
			if (!eq)
				continue;
			*eq = '\0';
			const char *val = eq + 1;
			int bad = 0;
			for (size_t k = 0; k < sizeof(bad_keys) / sizeof(*bad_keys); k++)
				bad |= strcmp(t, bad_keys[k]) == 0 && strcmp(val, "0") != 0;
			/* decoders: calls:N,rets:N,unanswered:N,unmatched_ret:N,malformed:N */
			bad |= (strstr(val, "unanswered:") && !strstr(val, "unanswered:0,")) ||
			       (strstr(val, "unmatched_ret:") && !strstr(val, "unmatched_ret:0,")) ||
			       (strstr(val, "malformed:") && !strstr(val, "malformed:0") );
			trouble |= bad;
			fprintf(o, "<tr><td class=\"l\">");
			esc(o, t);
			fprintf(o, "</td><td class=\"l%s\">", bad ? " bad" : "");
			esc(o, val);
			fputs("</td></tr>\n", o);
		}
		free(copy);
		fputs("</tbody></table>\n", o);
	} else {
		fputs("<p>The trace has no <code>#capture</code> line (not made by bbcap, or "
		      "read from JSON): drops and gaps are unknown.</p>\n", o);
	}
	if (r)
		bb_reader_free(r);
	if (f)
		fclose(f);
	const struct bb_vval *st = p->stats;
	int64_t uc = bb_vval_get_int(st, "unmatched_calls"), ur = bb_vval_get_int(st, "unmatched_returns"),
	        orph = bb_vval_get_int(st, "orphaned_calls"), ev = bb_vval_get_int(st, "evicted_calls");
	fprintf(o, "<p class=\"%s\">Nesting: %lld calls never answered, %lld returns without "
	           "a call, %lld calls evicted, %lld calls lost under a parent that never "
	           "returned.%s</p>\n",
	        uc || ur || orph || trouble ? "bad" : "ok", (long long)uc, (long long)ur,
	        (long long)ev, (long long)orph,
	        trouble ? " The capture lost data (red): paths through the lost messages are "
	                  "missing or wrong."
	                : "");
}

/* ---- the page ------------------------------------------------------------------ */

static void diff_section(FILE *o, struct bb_vsvg *r, const struct bb_rep_diff *d,
                         const char *baseline, struct bb_err *err)
{
	char *v = bb_rep_diff_verdict(d);
	fputs("<h2>Against the baseline</h2>\n<p>Baseline: <code>", o);
	esc(o, baseline);
	fputs("</code> (bbdiff).</p>\n<div class=\"verdict\" id=\"verdict\">", o);
	esc(o, v);
	fputs("</div>\n", o);
	free(v);
	const struct bb_rep_change *c;
	size_t n = bb_rep_diff_changes(d, &c);
	if (n) {
		fputs("<table class=\"sortable\" id=\"changes\"><thead><tr><th>rank</th>"
		      "<th class=\"l\">what</th><th>change</th><th>p</th><th>mean before</th>"
		      "<th>mean after</th><th>p90 before</th><th>p90 after</th></tr></thead><tbody>\n",
		      o);
		for (size_t i = 0; i < n; i++) {
			fputs("<tr>", o);
			td_u(o, i + 1);
			fputs("<td class=\"l\">", o);
			if (c[i].kind == BB_REP_EDGE) {
				esc(o, c[i].from);
				fputs(" &rarr; ", o);
				esc(o, c[i].to);
			} else if (c[i].kind == BB_REP_NODE) {
				esc(o, c[i].from);
				fputs(" (own time)", o);
			} else {
				fputs("pattern ", o);
				esc(o, c[i].shapes[0]);
			}
			fputs("</td>", o);
			if (c[i].kind == BB_REP_PATTERN) {
				fprintf(o, "<td data-v=\"%g\">%.0f%% &rarr; %.0f%%</td>",
				        c[i].share_slow - c[i].share_base, 100 * c[i].share_base,
				        100 * c[i].share_slow);
				fprintf(o, "<td data-v=\"%g\">%.2g</td><td></td><td></td><td></td><td></td>",
				        c[i].p, c[i].p);
			} else {
				td_ns(o, llround(c[i].delta_ns));
				fprintf(o, "<td data-v=\"%g\">%.2g</td>", c[i].p, c[i].p);
				td_ns(o, llround(c[i].base.mean_ns));
				td_ns(o, llround(c[i].slow.mean_ns));
				td_ns(o, c[i].base.p90);
				td_ns(o, c[i].slow.p90);
			}
			fputs("</tr>\n", o);
		}
		fputs("</tbody></table>\n", o);
	}
	size_t len;
	char *svg = bb_rep_diff_svg(r, d, &len, err);
	if (svg) {
		fputs("<div class=\"graph\" id=\"diffgraph\">", o);
		svg_inline(o, svg);
		fputs("</div>\n", o);
		free(svg);
	}
}

int bb_rep_html(FILE *o, const char *trace, const struct bb_rep_run *run,
                const struct bb_rep_series *ts, const struct bb_rep_diff *diff,
                const char *baseline, size_t top, struct bb_err *err)
{
	const struct bb_vpatterns *p = bb_rep_patterns(run);
	const struct bb_vval *st = p->stats;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width\"><title>bb report: ", o);
	esc(o, trace);
	fprintf(o, "</title><style>%s</style></head><body>\n<h1>bb report: <code>", STYLE);
	esc(o, trace);
	fputs("</code></h1>\n", o);
	int64_t dns = bb_vval_get_int(st, "duration_ns");
	fprintf(o, "<p>%lld messages over ", (long long)bb_vval_get_int(st, "messages"));
	dur(o, dns);
	fprintf(o, "; %lld calls; %lld path instances in %lld patterns (nesting algorithm).</p>\n",
	        (long long)bb_vval_get_int(st, "calls"), (long long)bb_vval_get_int(st, "instances"),
	        (long long)bb_vval_get_int(st, "patterns"));
	struct bb_vsvg *r = bb_viz_svg_new();
	if (diff)
		diff_section(o, r, diff, baseline, err);
	fputs("<h2>Capture health</h2>\n", o);
	health(o, trace, p, err);
	assumed(o, run);
	fputs("<h2>Path patterns</h2>\n<p>Click a column to sort. Latencies are of the whole "
	      "path (its first call).</p>\n", o);
	int rc = patterns_section(o, r, p, top, err);
	bb_viz_svg_free(r);
	if (rc < 0)
		return rc;
	fputs("<h2>Nodes</h2>\n<p>Each node's latency (time inside it and its callees), pooled "
	      "over the patterns.</p>\n", o);
	nodes_table(o, p);
	fputs("<h2>Over time</h2>\n", o);
	time_charts(o, ts);
	fprintf(o, "<p style=\"color:#888\">bb %s</p>\n<script>%s</script>\n</body></html>\n",
	        BB_VERSION, SCRIPT);
	if (fflush(o) != 0 || ferror(o)) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		return BB_ERR_IO;
	}
	return 0;
}
