/* test_capture.c - capture on synthetic captures: link layers, IPv6, fragments, TCP repairs */
/* SPDX-License-Identifier: MIT */
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "unit.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

/* ---- building packets -------------------------------------------------------- */

struct pkt {
	uint8_t b[4096];
	size_t n;
	int64_t ts_ns;
};

struct cap_file {
	struct pkt p[256];
	int n;
	int dlt;
};

static void be16(uint8_t *b, unsigned v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void be32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static uint16_t csum(const uint8_t *h, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

struct ep {
	int v6;
	uint8_t a[16];
	uint16_t port;
};

static struct ep ep4(uint8_t d, uint16_t port)
{
	struct ep e;
	memset(&e, 0, sizeof e);
	e.a[0] = 10;
	e.a[3] = d;
	e.port = port;
	return e;
}

static struct ep ep6(uint8_t d, uint16_t port)
{
	struct ep e;
	memset(&e, 0, sizeof e);
	e.v6 = 1;
	e.a[0] = 0xfd;
	e.a[15] = d;
	e.port = port;
	return e;
}

/* The link header for dlt and ethertype; returns its length. */
static size_t link_hdr(int dlt, uint8_t *b, int v6)
{
	unsigned et = v6 ? 0x86dd : 0x0800;
	switch (dlt) {
	case DLT_EN10MB: /* with 802.1ad + 802.1Q tags */
		memset(b, 0x02, 12);
		be16(b + 12, 0x88a8);
		be16(b + 14, 100);
		be16(b + 16, 0x8100);
		be16(b + 18, 200);
		be16(b + 20, et);
		return 22;
	case DLT_LINUX_SLL:
		memset(b, 0, 16);
		be16(b + 14, et);
		return 16;
	case DLT_LINUX_SLL2:
		memset(b, 0, 20);
		be16(b, et);
		return 20;
	case DLT_NULL: {
		uint32_t fam = v6 ? 10 : 2;
		memcpy(b, &fam, 4);
		return 4;
	}
	default:
		return 0;
	}
}

/* Appends an IP packet (TCP when tcp, else UDP) to f. frag: 0 none, else the
 * IPv4 fragment offset in 8-byte units with more-fragments set for 1. */
static void add(struct cap_file *f, int64_t ts_ms, struct ep s, struct ep d, int tcp,
                uint32_t seq, uint32_t ack, uint8_t flags, const void *data, size_t len)
{
	struct pkt *p = &f->p[f->n++];
	uint8_t *b = p->b;
	size_t o = link_hdr(f->dlt, b, s.v6);
	size_t l4 = tcp ? 20 : 8;
	size_t iph;
	p->ts_ns = ts_ms * 1000000;
	if (s.v6) {
		/* with a hop-by-hop and a destination options header */
		memset(b + o, 0, 40);
		b[o] = 0x60;
		be16(b + o + 4, (unsigned)(16 + l4 + len));
		b[o + 6] = 0; /* hop-by-hop */
		b[o + 7] = 64;
		memcpy(b + o + 8, s.a, 16);
		memcpy(b + o + 24, d.a, 16);
		memset(b + o + 40, 0, 16);
		b[o + 40] = 60;      /* next: destination options */
		b[o + 41] = 0;       /* 8 bytes */
		b[o + 42] = 1;       /* PadN */
		b[o + 43] = 4;
		b[o + 48] = tcp ? 6 : 17;
		b[o + 49] = 0;
		b[o + 50] = 1;
		b[o + 51] = 4;
		iph = 56;
	} else {
		memset(b + o, 0, 20);
		b[o] = 0x45;
		be16(b + o + 2, (unsigned)(20 + l4 + len));
		b[o + 6] = 0x40;
		b[o + 8] = 64;
		b[o + 9] = tcp ? 6 : 17;
		memcpy(b + o + 12, s.a, 4);
		memcpy(b + o + 16, d.a, 4);
		be16(b + o + 10, csum(b + o, 20));
		iph = 20;
	}
	uint8_t *t = b + o + iph;
	memset(t, 0, l4);
	be16(t, s.port);
	be16(t + 2, d.port);
	if (tcp) {
		be32(t + 4, seq);
		be32(t + 8, ack);
		t[12] = 5 << 4;
		t[13] = flags;
		be16(t + 14, 65535);
	} else {
		be16(t + 4, (unsigned)(8 + len));
	}
	memcpy(t + l4, data, len);
	p->n = o + iph + l4 + len;
}

static void write_pcap(const struct cap_file *f, const char *path)
{
	pcap_t *d = pcap_open_dead_with_tstamp_precision(f->dlt, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *w = pcap_dump_open(d, path);
	for (int i = 0; i < f->n; i++) {
		struct pcap_pkthdr h;
		h.ts.tv_sec = (time_t)(f->p[i].ts_ns / 1000000000);
		h.ts.tv_usec = (suseconds_t)(f->p[i].ts_ns % 1000000000);
		h.caplen = h.len = (bpf_u_int32)f->p[i].n;
		pcap_dump((u_char *)w, &h, f->p[i].b);
	}
	pcap_dump_close(w);
	pcap_close(d);
}

/* ---- running a capture and reading the trace ------------------------------------ */

struct line {
	char ts[32], op[8], snd[80], rcv[80], id[100], rest[400];
};

struct result {
	struct line l[64];
	int n;
	struct bb_cap_stats st;
	char tmp[64];
};

/* The TCP reassembly engine every run uses (BB_CAP_RSM_OWN by default). */
static int engine = BB_CAP_RSM_OWN;

static void run(struct result *r, const char *const *files, int nfiles,
                const struct bb_cap_opts *opts_in)
{
	struct bb_err err;
	char out[80];
	struct bb_cap_opts oo;
	memset(&oo, 0, sizeof oo);
	if (opts_in)
		oo = *opts_in;
	oo.reassembly = engine;
	const struct bb_cap_opts *opts = &oo;
	memset(r, 0, sizeof *r);
	snprintf(out, sizeof out, "/tmp/bb_test_capture_%d.tr", (int)getpid());
	struct bb_writer *w = bb_writer_open(out, &err);
	CHECK(w != NULL);
	if (!w)
		return;
	struct bb_cap *c = bb_cap_new(opts, w, &err);
	CHECK(c != NULL);
	if (!c) {
		fprintf(stderr, "%s\n", err.msg);
		bb_writer_close(w, NULL);
		return;
	}
	for (int i = 0; i < nfiles; i++)
		CHECK_INT(bb_cap_add_file(c, files[i], &err), 0);
	CHECK_INT(bb_cap_run(c, NULL, NULL, &err), 0);
	CHECK_INT(bb_cap_finish(c, &err), 0);
	bb_cap_get_stats(c, &r->st);
	bb_cap_free(c);
	CHECK_INT(bb_writer_close(w, &err), 0);
	FILE *f = fopen(out, "r");
	char buf[1024];
	while (f && fgets(buf, sizeof buf, f)) {
		if (buf[0] == '#' || r->n >= 64)
			continue;
		struct line *l = &r->l[r->n++];
		l->rest[0] = '\0';
		sscanf(buf, "%31s %7s %79s %79s %99s %399[^\n]", l->ts, l->op, l->snd, l->rcv, l->id,
		       l->rest);
	}
	if (f)
		fclose(f);
	unlink(out);
}

static void run1(struct result *r, struct cap_file *f, const struct bb_cap_opts *opts)
{
	char path[80];
	snprintf(path, sizeof path, "/tmp/bb_test_capture_%d.pcap", (int)getpid());
	write_pcap(f, path);
	const char *files[1] = {path};
	run(r, files, 1, opts);
	unlink(path);
}

static int count(const struct result *r, const char *op)
{
	int k = 0;
	for (int i = 0; i < r->n; i++)
		k += strcmp(r->l[i].op, op) == 0;
	return k;
}

static const uint8_t dns_q[] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
	7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
static const uint8_t dns_r[] = {0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,
	7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1,
	0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 2, 3, 4};

/* ---- tests ------------------------------------------------------------------------- */

static void t_link_types(void)
{
	static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_NULL, DLT_RAW};
	for (size_t i = 0; i < sizeof dlts / sizeof dlts[0]; i++) {
		for (int v6 = 0; v6 < 2; v6++) {
			static struct cap_file f;
			struct result r;
			memset(&f, 0, sizeof f);
			f.dlt = dlts[i];
			struct ep c = v6 ? ep6(1, 33000) : ep4(1, 33000);
			struct ep s = v6 ? ep6(2, 53) : ep4(2, 53);
			add(&f, 1000, c, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
			add(&f, 1002, s, c, 0, 0, 0, 0, dns_r, sizeof dns_r);
			run1(&r, &f, NULL);
			CHECK_INT(r.n, 2);
			if (r.n != 2) {
				fprintf(stderr, "dlt %d v6 %d\n", dlts[i], v6);
				continue;
			}
			CHECK_STR(r.l[0].op, "CALL");
			CHECK_STR(r.l[0].ts, "1.000000000");
			CHECK_STR(r.l[1].op, "RET");
			CHECK_STR(r.l[0].snd, v6 ? "fd00::1" : "10.0.0.1");
			CHECK_STR(r.l[0].rcv, v6 ? "fd00::2" : "10.0.0.2");
			CHECK_STR(r.l[0].id, v6 ? "[fd00::1]:33000#4660" : "10.0.0.1:33000#4660");
			CHECK_STR(r.l[1].id, r.l[0].id);
			CHECK_HAS(r.l[0].rest, "req=example.com%20A");
		}
	}
}

static void t_ipv4_fragments(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_RAW;
	struct ep c = ep4(1, 33000), s = ep4(2, 53);
	add(&f, 1000, c, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
	/* The response as two fragments: UDP header + 16 bytes, then the rest. */
	add(&f, 1002, s, c, 0, 0, 0, 0, dns_r, sizeof dns_r);
	struct pkt whole = f.p[1];
	f.n = 1;
	struct pkt *a = &f.p[f.n++], *b = &f.p[f.n++];
	size_t first = 20 + 24, rest = whole.n - first;
	*a = whole;
	a->n = first;
	be16(a->b + 2, (unsigned)first);
	be16(a->b + 6, 0x2000); /* MF */
	a->b[10] = a->b[11] = 0;
	be16(a->b + 10, csum(a->b, 20));
	*b = whole;
	memcpy(b->b + 20, whole.b + first, rest);
	b->n = 20 + rest;
	be16(b->b + 2, (unsigned)(20 + rest));
	be16(b->b + 6, 3); /* offset 24 bytes */
	b->b[10] = b->b[11] = 0;
	be16(b->b + 10, csum(b->b, 20));
	run1(&r, &f, NULL);
	CHECK_INT(count(&r, "CALL"), 1);
	CHECK_INT(count(&r, "RET"), 1);
}

/* A TCP handshake from c to s at t0 ms (SYN, SYN-ACK, ACK, 1 ms apart), the
 * first data bytes at sequence numbers cs (c's) and ss (s's). */
static void handshake(struct cap_file *f, int64_t t0, struct ep c, struct ep s, uint32_t cs,
                      uint32_t ss)
{
	add(f, t0, c, s, 1, cs - 1, 0, 0x02, "", 0);
	add(f, t0 + 1, s, c, 1, ss - 1, cs, 0x12, "", 0);
	add(f, t0 + 2, c, s, 1, cs, ss, 0x10, "", 0);
}

/* An HTTP exchange on a connection; handshake when syn. Returns next seqs. */
static void http_conn(struct cap_file *f, struct ep c, struct ep s, int syn, int64_t t0)
{
	const char *req = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
	const char *rep = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	uint32_t cs = 1000, ss = 5000;
	if (syn)
		handshake(f, t0, c, s, cs, ss);
	add(f, t0 + 10, c, s, 1, cs, ss, 0x18, req, strlen(req));
	cs += (uint32_t)strlen(req);
	add(f, t0 + 20, s, c, 1, ss, cs, 0x18, rep, 20);
	add(f, t0 + 21, s, c, 1, ss + 20, cs, 0x18, rep + 20, strlen(rep) - 20);
	ss += (uint32_t)strlen(rep);
	add(f, t0 + 30, c, s, 1, cs, ss, 0x18, req, strlen(req));
	cs += (uint32_t)strlen(req);
	add(f, t0 + 40, s, c, 1, ss, cs, 0x18, rep, strlen(rep));
}

static void t_tcp_handshake_and_times(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_EN10MB;
	http_conn(&f, ep4(1, 40000), ep4(2, 80), 1, 2000);
	run1(&r, &f, NULL);
	CHECK_INT(r.n, 4);
	CHECK_INT(r.st.tcp_midstream, 0);
	CHECK_INT(r.st.tcp_streams, 1);
	if (r.n == 4) {
		CHECK_STR(r.l[0].ts, "2.010000000");
		CHECK_STR(r.l[1].op, "RET");
		CHECK_STR(r.l[1].ts, "2.020000000");
		CHECK_HAS(r.l[1].rest, "end=2.021000000");
		CHECK_STR(r.l[1].id, "c1.1");
		CHECK_STR(r.l[3].id, "c1.2");
	}
}

static void t_tcp_midstream_ipv6_sll2(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_LINUX_SLL2;
	http_conn(&f, ep6(1, 40000), ep6(2, 80), 0, 2000);
	struct bb_cap_opts o;
	memset(&o, 0, sizeof o);
	o.server_ports = 1;
	run1(&r, &f, &o);
	CHECK_INT(r.n, 4);
	CHECK_INT(r.st.tcp_midstream, 1);
	if (r.n == 4) {
		CHECK_STR(r.l[0].snd, "fd00::1");
		CHECK_STR(r.l[0].rcv, "[fd00::2]:80");
		CHECK_STR(r.l[3].op, "RET");
	}
}

/* A response body with a hole the capture lost, then a second exchange. */
static void t_tcp_gap(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_EN10MB;
	struct ep c = ep4(1, 40000), s = ep4(2, 8080);
	const char *req = "GET /a HTTP/1.1\r\n\r\n";
	char body[3000];
	memset(body, 'x', sizeof body);
	int hl = snprintf(body, sizeof body, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", 3000);
	memset(body + hl, 'x', sizeof body - (size_t)hl);
	size_t total = (size_t)hl + 3000 - (size_t)hl; /* header + body = 3000 + hl - hl */
	(void)total;
	uint32_t cs = 1, ss = 1;
	handshake(&f, 1000, c, s, cs, ss);
	add(&f, 1010, c, s, 1, cs, ss, 0x18, req, strlen(req));
	cs += (uint32_t)strlen(req);
	/* The response is hl header bytes + 3000 body bytes, sent in 1000-byte
	 * pieces; the second piece is lost. */
	static char resp[4000];
	memcpy(resp, body, (size_t)hl);
	memset(resp + hl, 'x', 3000);
	size_t rl = (size_t)hl + 3000;
	for (size_t off = 0, i = 0; off < rl; off += 1000, i++) {
		size_t n = rl - off < 1000 ? rl - off : 1000;
		if (i != 1)
			add(&f, 1020 + (int64_t)i, s, c, 1, ss + (uint32_t)off, cs, 0x18, resp + off, n);
	}
	ss += (uint32_t)rl;
	/* well after the hole tolerance */
	add(&f, 2000, c, s, 1, cs, ss, 0x18, req, strlen(req));
	cs += (uint32_t)strlen(req);
	add(&f, 2010, s, c, 1, ss, cs, 0x18, "HTTP/1.1 204 No Content\r\n\r\n", 27);
	run1(&r, &f, NULL);
	CHECK_INT(r.st.tcp_gaps, 1);
	CHECK_INT(r.st.tcp_gap_bytes, 1000);
	CHECK_INT(count(&r, "CALL"), 2);
	CHECK_INT(count(&r, "RET"), 2);
	if (r.n == 4) {
		CHECK_STR(r.l[1].id, "c1.1");
		CHECK_STR(r.l[3].id, "c1.2");
	}
}

/* Two segments swapped by the network: no gap, same records. */
static void t_tcp_reorder(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_EN10MB;
	http_conn(&f, ep4(1, 40000), ep4(2, 80), 1, 2000);
	/* packets 4 and 5 are the two halves of the first response */
	struct pkt t = f.p[4];
	f.p[4] = f.p[5];
	f.p[5] = t;
	f.p[4].ts_ns = 2020 * 1000000;
	f.p[5].ts_ns = 2021 * 1000000;
	run1(&r, &f, NULL);
	CHECK_INT(r.st.tcp_gaps, 0);
	CHECK_INT(r.st.tcp_reordered, 1);
	CHECK_INT(r.n, 4);
	if (r.n == 4)
		CHECK_STR(r.l[1].op, "RET");
}

/* Two pipelined responses whose segments were captured swapped (a GSO
 * segment on a bridge timestamped after the small one that followed it):
 * the second response, held until the first came, takes the first's time,
 * not its own earlier one: a server writes its stream in order, and the
 * trace keeps its replies in the order of their calls (before: the second
 * at 2.020, before the first at 2.021). */
static void t_tcp_reorder_pipelined(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_EN10MB;
	struct ep c = ep4(1, 40000), s = ep4(2, 80);
	const char *req = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
	const char *rep = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	uint32_t cs = 1000, ss = 5000, nq = (uint32_t)strlen(req), np = (uint32_t)strlen(rep);
	handshake(&f, 2000, c, s, cs, ss);
	add(&f, 2010, c, s, 1, cs, ss, 0x18, req, nq);
	add(&f, 2011, c, s, 1, cs + nq, ss, 0x18, req, nq);
	add(&f, 2020, s, c, 1, ss + np, cs + 2 * nq, 0x18, rep, np); /* the second */
	add(&f, 2021, s, c, 1, ss, cs + 2 * nq, 0x18, rep, np);      /* the first */
	run1(&r, &f, NULL);
	CHECK_INT(r.st.tcp_gaps, 0);
	CHECK_INT(r.st.tcp_reordered, 1);
	CHECK_INT(r.n, 4);
	if (r.n == 4) {
		CHECK_STR(r.l[2].op, "RET");
		CHECK_STR(r.l[2].id, "c1.1");
		CHECK_STR(r.l[3].id, "c1.2");
		CHECK_STR(r.l[3].ts, "2.021000000");
	}
}

/* Two files merged in time order; names from a hosts file. */
static void t_merge_and_names(void)
{
	static struct cap_file a, b;
	struct result r;
	char pa[80], pb[80], pn[80];
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.dlt = DLT_EN10MB;
	b.dlt = DLT_RAW;
	struct ep c = ep4(1, 33000), s = ep4(2, 53), c2 = ep4(3, 33001);
	add(&a, 1000, c, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
	add(&a, 3000, s, c, 0, 0, 0, 0, dns_r, sizeof dns_r);
	add(&b, 2000, c2, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
	add(&b, 4000, s, c2, 0, 0, 0, 0, dns_r, sizeof dns_r);
	snprintf(pa, sizeof pa, "/tmp/bb_test_capture_a_%d.pcap", (int)getpid());
	snprintf(pb, sizeof pb, "/tmp/bb_test_capture_b_%d.pcap", (int)getpid());
	snprintf(pn, sizeof pn, "/tmp/bb_test_capture_n_%d.hosts", (int)getpid());
	write_pcap(&a, pa);
	write_pcap(&b, pb);
	FILE *h = fopen(pn, "w");
	fprintf(h, "# test\n10.0.0.2 resolver alias\n10.0.0.3\tclient3\n");
	fclose(h);
	struct bb_cap_opts o;
	memset(&o, 0, sizeof o);
	o.names_file = pn;
	const char *files[2] = {pa, pb};
	run(&r, files, 2, &o);
	CHECK_INT(r.n, 4);
	if (r.n == 4) {
		CHECK_STR(r.l[0].ts, "1.000000000");
		CHECK_STR(r.l[1].ts, "2.000000000");
		CHECK_STR(r.l[1].snd, "client3");
		CHECK_STR(r.l[1].rcv, "resolver");
		CHECK_STR(r.l[2].ts, "3.000000000");
		CHECK_STR(r.l[3].ts, "4.000000000");
	}
	unlink(pa);
	unlink(pb);
	unlink(pn);
}

static void t_decode_as(void)
{
	static struct cap_file f;
	struct result r;
	struct bb_err err;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_EN10MB;
	/* DNS on port 5000 with garbage: generic by default, dns with --decode-as */
	struct ep c = ep4(1, 33000), s = ep4(2, 5000);
	add(&f, 1000, c, s, 0, 0, 0, 0, dns_r, sizeof dns_r);
	add(&f, 1001, s, c, 0, 0, 0, 0, dns_r, sizeof dns_r);
	run1(&r, &f, NULL);
	CHECK_INT(r.n, 2);
	if (r.n == 2)
		CHECK_HAS(r.l[0].rest, "proto=generic");
	struct bb_cap_opts o;
	memset(&o, 0, sizeof o);
	CHECK_INT(bb_dec_sel_decode_as(&o.sel, "5000=dns", &err), 0);
	run1(&r, &f, &o);
	CHECK_INT(count(&r, "RET"), 2);
	memset(&o, 0, sizeof o);
	CHECK_INT(bb_dec_sel_disable(&o.sel, "generic", &err), 0);
	run1(&r, &f, &o);
	CHECK_INT(r.n, 0);
}

/* Tens of thousands of connections open at once: every one followed; with a
 * small table, the evictions are counted. */
static void many_conns(int nconn, unsigned max_streams, struct result *r)
{
	static struct cap_file f;
	char path[80];
	snprintf(path, sizeof path, "/tmp/bb_test_capture_many_%d.pcap", (int)getpid());
	pcap_t *d = pcap_open_dead_with_tstamp_precision(DLT_RAW, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *w = pcap_dump_open(d, path);
	const char *req = "GET / HTTP/1.1\r\n\r\n";
	const char *rep = "HTTP/1.1 204 No Content\r\n\r\n";
	/* phase 0: handshakes, 1: requests, 2: responses; all open together */
	for (int phase = 0; phase < 3; phase++) {
		for (int i = 0; i < nconn; i++) {
			struct ep c = ep4((uint8_t)(1 + i / 60000), (uint16_t)(1024 + i % 60000));
			struct ep s = ep4(250, 80);
			c.a[2] = (uint8_t)(i % 200);
			f.n = 0;
			f.dlt = DLT_RAW;
			int64_t t = 1000 + phase * 1000 + i / 100;
			if (phase == 0) {
				add(&f, t, c, s, 1, 99, 0, 0x02, "", 0);
				add(&f, t, s, c, 1, 499, 100, 0x12, "", 0);
				add(&f, t, c, s, 1, 100, 500, 0x10, "", 0);
			} else if (phase == 1) {
				add(&f, t, c, s, 1, 100, 500, 0x18, req, strlen(req));
			} else {
				add(&f, t, s, c, 1, 500, 100 + (uint32_t)strlen(req), 0x18, rep, strlen(rep));
			}
			for (int k = 0; k < f.n; k++) {
				struct pcap_pkthdr h;
				h.ts.tv_sec = (time_t)(f.p[k].ts_ns / 1000000000);
				h.ts.tv_usec = (suseconds_t)(f.p[k].ts_ns % 1000000000);
				h.caplen = h.len = (bpf_u_int32)f.p[k].n;
				pcap_dump((u_char *)w, &h, f.p[k].b);
			}
		}
	}
	pcap_dump_close(w);
	pcap_close(d);
	struct bb_cap_opts o;
	memset(&o, 0, sizeof o);
	o.max_streams = max_streams;
	const char *files[1] = {path};
	run(r, files, 1, &o);
	unlink(path);
}

static void t_many_connections(void)
{
	struct result r;
	many_conns(40000, 0, &r);
	CHECK_INT(r.st.tcp_streams, 40000);
	CHECK_INT(r.st.tcp_evicted, 0);
	CHECK_INT(r.st.tcp_midstream, 0);
	CHECK_INT(r.st.messages, 80000);
	/* 768 at once: the oldest are evicted (counted), and picked up again
	 * mid-stream when their request comes. */
	many_conns(3000, 1024, &r);
	CHECK(r.st.tcp_evicted >= 3000 - 768);
	CHECK(r.st.tcp_midstream > 0);
	CHECK_INT(r.st.messages, 6000);
}


/* ---- fragments -------------------------------------------------------------------- */

/* The DNS response as one UDP datagram (header + dns_r): 53 bytes. */
static size_t udp_dgram(uint8_t *b, struct ep s, struct ep d)
{
	be16(b, s.port);
	be16(b + 2, d.port);
	be16(b + 4, (unsigned)(8 + sizeof dns_r));
	be16(b + 6, 0);
	memcpy(b + 8, dns_r, sizeof dns_r);
	return 8 + sizeof dns_r;
}

/* Appends one IPv6 fragment of dgram: bytes [off, off+len) with more-fragments
 * flag more, identification id; atop a hop-by-hop header when hbh. */
static void frag6(struct cap_file *f, int64_t ts_ms, struct ep s, struct ep d, const uint8_t *dgram,
                  size_t off, size_t len, int more, uint32_t id, int hbh)
{
	struct pkt *p = &f->p[f->n++];
	uint8_t *b = p->b;
	size_t o = link_hdr(f->dlt, b, 1);
	size_t ext = hbh ? 8 : 0;
	p->ts_ns = ts_ms * 1000000;
	memset(b + o, 0, 40 + ext + 8);
	b[o] = 0x60;
	be16(b + o + 4, (unsigned)(ext + 8 + len));
	b[o + 6] = hbh ? 0 : 44;
	b[o + 7] = 64;
	memcpy(b + o + 8, s.a, 16);
	memcpy(b + o + 24, d.a, 16);
	uint8_t *fh = b + o + 40;
	if (hbh) {
		fh[0] = 44;
		fh[2] = 1; /* PadN */
		fh[3] = 4;
		fh += 8;
	}
	fh[0] = 17;
	be16(fh + 2, (unsigned)(off | (more ? 1 : 0)));
	be32(fh + 4, id);
	memcpy(fh + 8, dgram + off, len);
	p->n = o + 40 + ext + 8 + len;
}

/* A DNS query, then its 53-byte answer in the fragments given by order[]
 * (indices into three pieces: 0..16, 16..32, 32..53). */
static void dns6_frags(struct cap_file *f, const int *order, int n, uint32_t id, int64_t t0)
{
	struct ep c = ep6(1, 33000), s = ep6(2, 53);
	static const size_t offs[3] = {0, 16, 32}, lens[3] = {16, 16, 21};
	uint8_t dg[128];
	udp_dgram(dg, s, c);
	add(f, t0, c, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
	for (int i = 0; i < n; i++) {
		int k = order[i];
		frag6(f, t0 + 2 + i, s, c, dg, offs[k], lens[k], k != 2, id, i == 0);
	}
}

/* Every order of three fragments gives the answer, whole, once. */
static void t_ipv6_fragments_orders(void)
{
	static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
	                                {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
	static const int dlts[2] = {DLT_RAW, DLT_EN10MB};
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < 6; i++) {
			static struct cap_file f;
			struct result r;
			memset(&f, 0, sizeof f);
			f.dlt = dlts[d];
			dns6_frags(&f, perms[i], 3, 0x1000u + (uint32_t)i, 1000);
			run1(&r, &f, NULL);
			CHECK_INT(count(&r, "CALL"), 1);
			CHECK_INT(count(&r, "RET"), 1);
			CHECK_INT(r.st.frags, 3);
			CHECK_INT(r.st.frag_reassembled, 1);
			if (r.n == 2) {
				CHECK_STR(r.l[1].id, "[fd00::1]:33000#4660");
				CHECK_HAS(r.l[1].rest, "req=example.com%20A");
				CHECK_HAS(r.l[1].rest, "len=45");
				/* the time of the datagram is its last fragment's */
				CHECK_STR(r.l[1].ts, "1.004000000");
			}
		}
	}
}

/* An exact duplicate is dropped alone; the datagram completes. */
static void t_ipv6_fragments_duplicate(void)
{
	static const int order[4] = {0, 1, 1, 2};
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_RAW;
	dns6_frags(&f, order, 4, 7, 1000);
	run1(&r, &f, NULL);
	CHECK_INT(count(&r, "RET"), 1);
	CHECK_INT(r.st.frag_dup, 1);
	CHECK_INT(r.st.frag_reassembled, 1);
}

/* RFC 5722: an overlapping fragment discards the datagram, and its fragments
 * that come later; another datagram is not affected. */
static void t_ipv6_fragments_overlap(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_RAW;
	struct ep c = ep6(1, 33000), s = ep6(2, 53);
	uint8_t dg[128];
	udp_dgram(dg, s, c);
	add(&f, 1000, c, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
	frag6(&f, 1001, s, c, dg, 0, 16, 1, 9, 0);
	frag6(&f, 1002, s, c, dg, 8, 16, 1, 9, 0);  /* overlaps bytes 8..16 */
	frag6(&f, 1003, s, c, dg, 16, 16, 1, 9, 0); /* would complete it */
	frag6(&f, 1004, s, c, dg, 32, 21, 0, 9, 0);
	/* the same answer again under another id: reassembled */
	static const int order[3] = {2, 1, 0};
	dns6_frags(&f, order, 3, 10, 2000);
	run1(&r, &f, NULL);
	CHECK_INT(count(&r, "CALL"), 2);
	CHECK_INT(count(&r, "RET"), 1);
	CHECK_INT(r.st.frag_overlap, 1);
	CHECK_INT(r.st.frag_dropped, 3); /* the overlapping one and the two after */
	CHECK_INT(r.st.frag_reassembled, 1);
	if (r.n == 3)
		CHECK_STR(r.l[2].ts, "2.004000000");
}

/* Malformed: a middle fragment not a multiple of 8 bytes, a last fragment
 * that moves the end; an atomic fragment is a whole packet; an incomplete
 * datagram times out after 60 s. */
static void t_ipv6_fragments_bad_and_timeout(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_RAW;
	struct ep c = ep6(1, 33000), s = ep6(2, 53);
	uint8_t dg[128];
	size_t n = udp_dgram(dg, s, c);
	add(&f, 1000, c, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
	frag6(&f, 1001, s, c, dg, 0, 12, 1, 1, 0);  /* 12: not a multiple of 8 */
	frag6(&f, 1002, s, c, dg, 16, 37, 0, 1, 0);
	frag6(&f, 1003, s, c, dg, 0, 16, 1, 2, 0);
	frag6(&f, 1004, s, c, dg, 24, 8, 0, 2, 0);  /* end at 32 ... */
	frag6(&f, 1005, s, c, dg, 16, 37, 0, 2, 0); /* ... then at 53: dropped */
	frag6(&f, 1006, s, c, dg, 0, n, 0, 3, 0);   /* atomic: the answer */
	frag6(&f, 1007, s, c, dg, 0, 16, 1, 4, 0);  /* never completed ... */
	frag6(&f, 70000, s, c, dg, 16, 37, 0, 4, 0); /* ... in 60 s */
	run1(&r, &f, NULL);
	CHECK_INT(count(&r, "RET"), 1); /* id 3, whole */
	CHECK_INT(r.st.frag_reassembled, 0);
	CHECK_INT(r.st.frag_timeout, 1);   /* id 4 */
	CHECK_INT(r.st.frag_dropped, 3);   /* id 1 twice, id 2's second end */
	if (r.n == 2)
		CHECK_STR(r.l[1].ts, "1.006000000");
}

/* IPv4 fragments in reverse order, with both engines; an overlap drops the
 * datagram. */
static void t_ipv4_fragments_orders(void)
{
	for (int e = 0; e < 2; e++) {
		for (int overlap = 0; overlap < 2; overlap++) {
			static struct cap_file f;
			struct result r;
			memset(&f, 0, sizeof f);
			f.dlt = DLT_RAW;
			struct ep c = ep4(1, 33000), s = ep4(2, 53);
			add(&f, 1000, c, s, 0, 0, 0, 0, dns_q, sizeof dns_q);
			add(&f, 1002, s, c, 0, 0, 0, 0, dns_r, sizeof dns_r);
			struct pkt whole = f.p[1];
			f.n = 1;
			/* pieces of the UDP datagram: 0..16, 16..32, 32..53, last first */
			static const size_t offs[3] = {32, 16, 0}, lens[3] = {21, 16, 16};
			for (int i = 0; i < 3; i++) {
				struct pkt *p = &f.p[f.n++];
				size_t off = offs[i] - (overlap && i == 1 ? 8 : 0);
				*p = whole;
				memcpy(p->b + 20, whole.b + 20 + off, lens[i]);
				p->n = 20 + lens[i];
				p->ts_ns = (1002 + i) * INT64_C(1000000);
				be16(p->b + 2, (unsigned)p->n);
				be16(p->b + 6, (unsigned)(off / 8 | (i ? 0x2000 : 0)));
				p->b[10] = p->b[11] = 0;
				be16(p->b + 10, csum(p->b, 20));
			}
			engine = e ? BB_CAP_RSM_LIBNIDS : BB_CAP_RSM_OWN;
			run1(&r, &f, NULL);
			engine = BB_CAP_RSM_OWN;
			CHECK_INT(count(&r, "CALL"), 1);
			CHECK_INT(count(&r, "RET"), overlap ? 0 : 1);
			CHECK_INT(r.st.frag_reassembled, overlap ? 0 : 1);
			CHECK_INT(r.st.frag_overlap, overlap ? 1 : 0);
		}
	}
}

/* More datagrams pending than the table holds (1,024): the oldest are
 * dropped (counted); the newest still complete. */
static void t_fragments_table_full(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_RAW;
	struct ep c = ep6(1, 33000), s = ep6(2, 53);
	uint8_t dg[128];
	udp_dgram(dg, s, c);
	char path[80];
	snprintf(path, sizeof path, "/tmp/bb_test_capture_frag_%d.pcap", (int)getpid());
	pcap_t *d = pcap_open_dead_with_tstamp_precision(DLT_RAW, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *w = pcap_dump_open(d, path);
	/* 1,100 first fragments, then the rest of the last 50 */
	for (int phase = 0; phase < 2; phase++) {
		for (uint32_t id = phase ? 1050 : 0; id < 1100; id++) {
			f.n = 0;
			if (phase == 0)
				frag6(&f, 1000 + id, s, c, dg, 0, 16, 1, id, 0);
			else
				frag6(&f, 3000 + id, s, c, dg, 16, 37, 0, id, 0);
			struct pcap_pkthdr h;
			h.ts.tv_sec = (time_t)(f.p[0].ts_ns / 1000000000);
			h.ts.tv_usec = (suseconds_t)(f.p[0].ts_ns % 1000000000);
			h.caplen = h.len = (bpf_u_int32)f.p[0].n;
			pcap_dump((u_char *)w, &h, f.p[0].b);
		}
	}
	pcap_dump_close(w);
	pcap_close(d);
	const char *files[1] = {path};
	run(&r, files, 1, NULL);
	unlink(path);
	CHECK_INT(r.st.frags, 1150);
	CHECK_INT(r.st.frag_reassembled, 50);
	CHECK_INT(r.st.frag_dropped, 76);
	CHECK_INT(r.st.frag_timeout, 0);
}

/* ---- TCP, own reassembly ----------------------------------------------------------- */

/* Retransmissions that overlap what was delivered are trimmed: the messages
 * have their own lengths, not the retransmitted bytes. */
static void t_tcp_overlap(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_EN10MB;
	struct ep c = ep4(1, 40000), s = ep4(2, 80);
	const char *req = "GET /abc HTTP/1.1\r\nHost: x\r\n\r\n";
	const char *rep = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	uint32_t cs = 100, ss = 900, rl = (uint32_t)strlen(req), pl = (uint32_t)strlen(rep);
	handshake(&f, 1000, c, s, cs, ss);
	add(&f, 1010, c, s, 1, cs, ss, 0x18, req, 10);
	add(&f, 1011, c, s, 1, cs, ss, 0x18, req, 6);           /* old bytes only */
	add(&f, 1012, c, s, 1, cs + 4, ss, 0x18, req + 4, rl - 4); /* overlaps 6 */
	add(&f, 1020, s, c, 1, ss, cs + rl, 0x18, rep, 20);
	add(&f, 1021, s, c, 1, ss, cs + rl, 0x18, rep, pl);      /* all again */
	add(&f, 1030, c, s, 1, cs + rl, ss + pl, 0x18, req, rl);
	add(&f, 1031, c, s, 1, cs + rl, ss + pl, 0x18, req, rl); /* duplicate */
	add(&f, 1040, s, c, 1, ss + pl, cs + 2 * rl, 0x18, rep, pl);
	for (int e = 0; e < 2; e++) {
		engine = e ? BB_CAP_RSM_LIBNIDS : BB_CAP_RSM_OWN;
		run1(&r, &f, NULL);
		engine = BB_CAP_RSM_OWN;
		CHECK_INT(r.n, 4);
		CHECK_INT(r.st.tcp_gaps, 0);
		if (r.n == 4) {
			char want[32];
			snprintf(want, sizeof want, "len=%u", rl);
			CHECK_HAS(r.l[0].rest, want);
			CHECK_HAS(r.l[0].rest, "end=1.012000000");
			snprintf(want, sizeof want, "len=%u", pl);
			CHECK_HAS(r.l[1].rest, want);
			CHECK_STR(r.l[3].id, "c1.2");
		}
	}
}

/* FIN in both directions ends a connection; the same 4-tuple then carries a
 * new one (new SYN), and an RST ends that one. */
static void t_tcp_fin_reuse_rst(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_RAW;
	struct ep c = ep4(1, 40000), s = ep4(2, 80);
	const char *req = "GET / HTTP/1.1\r\n\r\n";
	const char *rep = "HTTP/1.1 204 No Content\r\n\r\n";
	uint32_t rl = (uint32_t)strlen(req), pl = (uint32_t)strlen(rep);
	for (int conn = 0; conn < 2; conn++) {
		uint32_t cs = 1000 + 77777u * (uint32_t)conn, ss = 5000 + 99999u * (uint32_t)conn;
		int64_t t = 1000 + conn * 1000;
		handshake(&f, t, c, s, cs, ss);
		add(&f, t + 10, c, s, 1, cs, ss, 0x18, req, rl);
		add(&f, t + 20, s, c, 1, ss, cs + rl, 0x18, rep, pl);
		if (conn == 0) {
			add(&f, t + 30, c, s, 1, cs + rl, ss + pl, 0x11, "", 0);
			add(&f, t + 31, s, c, 1, ss + pl, cs + rl + 1, 0x11, "", 0);
			add(&f, t + 32, c, s, 1, cs + rl + 1, ss + pl + 1, 0x10, "", 0);
		} else {
			add(&f, t + 30, c, s, 1, cs + rl, ss + pl, 0x14, "", 0);
			/* after the RST: data of an unknown connection, picked up */
			add(&f, t + 40, c, s, 1, cs + rl, ss + pl, 0x18, req, rl);
		}
	}
	run1(&r, &f, NULL);
	CHECK_INT(r.st.tcp_streams, 3);
	CHECK_INT(r.st.tcp_midstream, 1);
	CHECK_INT(count(&r, "CALL"), 3);
	CHECK_INT(count(&r, "RET"), 2);
	if (r.n == 5) {
		CHECK_STR(r.l[1].id, "c1.1");
		CHECK_STR(r.l[3].id, "c2.1");
		CHECK_STR(r.l[4].id, "c3.1");
	}
}

/* A stream silent for an hour is evicted (counted); what it held beyond a
 * hole is delivered first, after the gap. */
static void t_tcp_idle_eviction(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_RAW;
	struct ep c = ep4(1, 40000), s = ep4(2, 80);
	const char *req = "GET / HTTP/1.1\r\n\r\n";
	const char *rep = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
	uint32_t cs = 100, ss = 900, rl = (uint32_t)strlen(req), pl = (uint32_t)strlen(rep);
	handshake(&f, 1000, c, s, cs, ss);
	add(&f, 1010, c, s, 1, cs, ss, 0x18, req, rl);
	add(&f, 1020, s, c, 1, ss, cs + rl, 0x18, rep, 40); /* the head, 2 body bytes */
	/* body bytes 40..44 lost; the rest held */
	add(&f, 1021, s, c, 1, ss + 44, cs + rl, 0x18, rep + 44, pl - 44);
	/* two hours later, another flow */
	add(&f, 7201000, ep4(3, 33000), ep4(4, 53), 0, 0, 0, 0, dns_q, sizeof dns_q);
	run1(&r, &f, NULL);
	CHECK_INT(r.st.tcp_evicted, 1);
	CHECK_INT(r.st.tcp_gaps, 1);
	CHECK_INT(r.st.tcp_gap_bytes, 4);
	CHECK_INT(count(&r, "CALL"), 2);
	CHECK_INT(count(&r, "RET"), 1);
	if (r.n == 3) {
		CHECK_STR(r.l[1].op, "RET");
		CHECK_HAS(r.l[1].rest, "end=1.021000000");
	}
}

/* The own engine keys flows by 16-byte addresses: IPv6 ones as they are,
 * IPv4 ones mapped into IPv6. An IPv4 address in 240/4, where the libnids
 * adapter maps IPv6 addresses (and where they were mapped for both engines
 * before), stays itself: 240.0.0.1 is neither fd00::1 nor its flow. */
static void t_ipv6_own_addresses(void)
{
	static struct cap_file f;
	struct result r;
	memset(&f, 0, sizeof f);
	f.dlt = DLT_EN10MB;
	struct ep c6 = ep6(1, 33000), s6 = ep6(2, 53), c4 = ep4(1, 33000), s4 = ep4(2, 53);
	c4.a[0] = s4.a[0] = 240;
	add(&f, 1000, c6, s6, 0, 0, 0, 0, dns_q, sizeof dns_q);
	add(&f, 1001, c4, s4, 0, 0, 0, 0, dns_q, sizeof dns_q);
	add(&f, 1002, s6, c6, 0, 0, 0, 0, dns_r, sizeof dns_r);
	add(&f, 1003, s4, c4, 0, 0, 0, 0, dns_r, sizeof dns_r);
	http_conn(&f, ep6(1, 40000), ep6(2, 80), 1, 2000);
	c4.port = 40000;
	s4.port = 80;
	http_conn(&f, c4, s4, 1, 3000);
	struct bb_cap_opts o;
	memset(&o, 0, sizeof o);
	o.server_ports = BB_CAP_PORTS_ALWAYS;
	run1(&r, &f, &o);
	CHECK_INT(r.n, 12);
	CHECK_INT(r.st.udp_flows, 2);
	CHECK_INT(r.st.tcp_streams, 2);
	CHECK_INT(count(&r, "CALL"), 6);
	CHECK_INT(count(&r, "RET"), 6);
	if (r.n != 12)
		return;
	CHECK_STR(r.l[0].snd, "fd00::1");
	CHECK_STR(r.l[0].rcv, "[fd00::2]:53");
	CHECK_STR(r.l[0].id, "[fd00::1]:33000#4660");
	CHECK_STR(r.l[1].snd, "240.0.0.1");
	CHECK_STR(r.l[1].rcv, "240.0.0.2:53");
	CHECK_STR(r.l[1].id, "240.0.0.1:33000#4660");
	CHECK_STR(r.l[2].id, r.l[0].id);
	CHECK_STR(r.l[3].id, r.l[1].id);
	CHECK_STR(r.l[4].rcv, "[fd00::2]:80");
	CHECK_STR(r.l[8].snd, "240.0.0.1");
	CHECK_STR(r.l[8].rcv, "240.0.0.2:80");
	CHECK_STR(r.l[11].op, "RET");
	CHECK_STR(r.l[11].snd, "240.0.0.2:80");
}

/* The TCP tests again with --reassembly=libnids. */
static void t_tcp_libnids(void)
{
	engine = BB_CAP_RSM_LIBNIDS;
	t_tcp_handshake_and_times();
	t_tcp_midstream_ipv6_sll2();
	t_tcp_gap();
	t_tcp_reorder();
	t_tcp_reorder_pipelined();
	engine = BB_CAP_RSM_OWN;
}

static const struct unit_test tests[] = {
	{"link_types", t_link_types},
	{"ipv4_fragments", t_ipv4_fragments},
	{"tcp_handshake_and_times", t_tcp_handshake_and_times},
	{"tcp_midstream_ipv6_sll2", t_tcp_midstream_ipv6_sll2},
	{"tcp_gap", t_tcp_gap},
	{"tcp_reorder", t_tcp_reorder},
	{"tcp_reorder_pipelined", t_tcp_reorder_pipelined},
	{"merge_and_names", t_merge_and_names},
	{"decode_as", t_decode_as},
	{"many_connections", t_many_connections},
	{"ipv6_fragments_orders", t_ipv6_fragments_orders},
	{"ipv6_fragments_duplicate", t_ipv6_fragments_duplicate},
	{"ipv6_fragments_overlap", t_ipv6_fragments_overlap},
	{"ipv6_fragments_bad_and_timeout", t_ipv6_fragments_bad_and_timeout},
	{"ipv4_fragments_orders", t_ipv4_fragments_orders},
	{"fragments_table_full", t_fragments_table_full},
	{"tcp_overlap", t_tcp_overlap},
	{"tcp_fin_reuse_rst", t_tcp_fin_reuse_rst},
	{"tcp_idle_eviction", t_tcp_idle_eviction},
	{"ipv6_own_addresses", t_ipv6_own_addresses},
	{"tcp_libnids", t_tcp_libnids},
};

UNIT_MAIN(tests)
