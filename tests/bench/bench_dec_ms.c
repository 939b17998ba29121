/* bench_dec_ms.c - decoding speed of the ldap, dcerpc and smb2 decoders alone */
/* SPDX-License-Identifier: MIT */
/*
 * bench_dec_ms [MESSAGES]
 *
 * For each decoder, builds in memory one TCP connection carrying MESSAGES
 * (default 200,000) requests and as many replies of typical sizes, then
 * decodes it as capture hands it over: both directions in turn, 4 KB at a
 * time on the longer one (the other in proportion), the unconsumed bytes
 * handed again with the next step. No capture, no trace
 * writing (the records are counted). Prints bytes, seconds (CPU), MB/s and
 * records/s (CALL + RET; LDAP's searchResEntry is decoded but makes none)
 * per decoder, with the decoder's counters.
 *   ldap:   searchRequest (69 bytes), 1 searchResEntry (91) + searchResDone (17)
 *   dcerpc: request with a 100-byte stub (124), response with 200 (224)
 *   smb2:   READ request (4 + 113), READ response with 4,096 bytes (4 + 4,176)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/decoders.h"

struct sbuf {
	uint8_t *b;
	size_t n, cap;
};

static void put(struct sbuf *s, const void *p, size_t n)
{
	if (s->n + n > s->cap) {
		s->cap = (s->n + n) * 2;
		s->b = realloc(s->b, s->cap);
		if (!s->b)
			abort();
	}
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put1(struct sbuf *s, unsigned v)
{
	uint8_t b = (uint8_t)v;
	put(s, &b, 1);
}

static void le16(struct sbuf *s, unsigned v)
{
	put1(s, v & 0xff);
	put1(s, (v >> 8) & 0xff);
}

static void le32(struct sbuf *s, uint32_t v)
{
	le16(s, v & 0xffff);
	le16(s, v >> 16);
}

static void zeros(struct sbuf *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put1(s, 0);
}

static void ldap_build(struct sbuf *c, struct sbuf *s, uint32_t i)
{
	/* 30 43 02 04 id 63 3b 04 11 "dc=example,dc=com" ... */
	static const char dn[] = "dc=example,dc=com";
	put1(c, 0x30);
	put1(c, 0x43);
	put1(c, 0x02);
	put1(c, 0x04);
	put1(c, (i >> 24) & 0x7f);
	put1(c, (i >> 16) & 0xff);
	put1(c, (i >> 8) & 0xff);
	put1(c, i & 0xff);
	put1(c, 0x63);
	put1(c, 0x3b);
	put1(c, 0x04);
	put1(c, 17);
	put(c, dn, 17);
	static const uint8_t rest[] = {0x0a, 0x01, 0x02, 0x0a, 0x01, 0x00, 0x02, 0x01, 0x00, 0x02,
	                               0x01, 0x00, 0x01, 0x01, 0x00, 0x87, 0x0b, 'o', 'b', 'j', 'e',
	                               'c', 't', 'c', 'l', 'a', 's', 's', 0x30, 0x0a, 0x04, 0x02,
	                               'c', 'n', 0x04, 0x04, 'm', 'a', 'i', 'l'};
	put(c, rest, sizeof rest);
	/* entry: 30 59 02 04 id 64 51 04 16 "cn=a,..." 30 37 ... */
	static const char en[] = "cn=alice,dc=example,dc=com";
	put1(s, 0x30);
	put1(s, 0x59);
	put1(s, 0x02);
	put1(s, 0x04);
	put1(s, (i >> 24) & 0x7f);
	put1(s, (i >> 16) & 0xff);
	put1(s, (i >> 8) & 0xff);
	put1(s, i & 0xff);
	put1(s, 0x64);
	put1(s, 0x51);
	put1(s, 0x04);
	put1(s, 26);
	put(s, en, 26);
	put1(s, 0x30);
	put1(s, 0x33);
	put1(s, 0x30);
	put1(s, 0x31);
	put1(s, 0x04);
	put1(s, 0x04);
	put(s, "mail", 4);
	put1(s, 0x31);
	put1(s, 0x29);
	put1(s, 0x04);
	put1(s, 0x27);
	put(s, "alice.of.the.example@mail.example.com...", 39);
	/* done: 30 0f 02 04 id 65 07 0a 01 00 04 00 04 00 */
	put1(s, 0x30);
	put1(s, 0x0f);
	put1(s, 0x02);
	put1(s, 0x04);
	put1(s, (i >> 24) & 0x7f);
	put1(s, (i >> 16) & 0xff);
	put1(s, (i >> 8) & 0xff);
	put1(s, i & 0xff);
	static const uint8_t done[] = {0x65, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00};
	put(s, done, sizeof done);
}

static void dce_pdu(struct sbuf *b, unsigned ptype, uint32_t call_id, size_t body, unsigned op)
{
	put1(b, 5);
	put1(b, 0);
	put1(b, ptype);
	put1(b, 3);
	put1(b, 0x10);
	zeros(b, 3);
	le16(b, (unsigned)(16 + 8 + body));
	le16(b, 0);
	le32(b, call_id);
	le32(b, (uint32_t)body);
	le16(b, 0);
	le16(b, op);
	zeros(b, body);
}

static void dce_build(struct sbuf *c, struct sbuf *s, uint32_t i)
{
	dce_pdu(c, 0, i, 100, 15);
	dce_pdu(s, 2, i, 200, 0);
}

static void smb_hdr(struct sbuf *b, unsigned cmd, uint32_t flags, uint64_t mid)
{
	static const uint8_t magic[4] = {0xfe, 'S', 'M', 'B'};
	put(b, magic, 4);
	le16(b, 64);
	le16(b, 1);
	le32(b, 0);
	le16(b, cmd);
	le16(b, 1);
	le32(b, flags);
	le32(b, 0);
	le32(b, (uint32_t)mid);
	le32(b, (uint32_t)(mid >> 32));
	zeros(b, 32);
}

static void nb(struct sbuf *b, size_t len)
{
	put1(b, 0);
	put1(b, (unsigned)(len >> 16) & 0xff);
	put1(b, (unsigned)(len >> 8) & 0xff);
	put1(b, (unsigned)len & 0xff);
}

static void smb_build(struct sbuf *c, struct sbuf *s, uint32_t i)
{
	nb(c, 64 + 49);
	smb_hdr(c, 8, 0, i);
	le16(c, 49);
	zeros(c, 47);
	nb(s, 64 + 16 + 4096);
	smb_hdr(s, 8, 1, i);
	le16(s, 17);
	zeros(s, 14 + 4096);
}

static uint64_t nrec;

static void count(void *arg, const struct bb_dec_msg *m)
{
	(void)arg;
	(void)m;
	nrec++;
}

static int64_t t_at(void *arg, int dir, uint64_t pos)
{
	(void)arg;
	(void)dir;
	return (int64_t)pos;
}

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void run(const char *name, void (*build)(struct sbuf *, struct sbuf *, uint32_t),
                uint32_t msgs)
{
	struct sbuf d[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
	for (uint32_t i = 1; i <= msgs; i++)
		build(&d[0], &d[1], i);
	const struct bb_decoder *dec = bb_dec_at((size_t)bb_dec_find(name));
	struct bb_dec_stats st;
	memset(&st, 0, sizeof st);
	struct bb_dec_ctx ctx = {1, "10.0.0.1:40000", "10.0.0.2:1", BB_TR_TCP, &st, t_at, count,
	                         NULL, NULL};
	void *state = calloc(1, dec->state_size);
	size_t done[2] = {0, 0}, upto[2] = {0, 0};
	/* 4 KB steps on the longer direction, the other in proportion: both
	 * progress together, as requests and replies do on the wire */
	const size_t step = 4096;
	size_t longest = d[0].n > d[1].n ? d[0].n : d[1].n;
	nrec = 0;
	double t0 = cpu_s();
	for (size_t at = step; upto[0] < d[0].n || upto[1] < d[1].n; at += step) {
		for (int k = 0; k < 2; k++) {
			if (upto[k] >= d[k].n)
				continue;
			/* the requests a little ahead of their replies */
			size_t a = k == 0 ? at + step / 2 : at;
			size_t u = (size_t)((double)d[k].n * ((double)a / (double)longest));
			upto[k] = u < d[k].n ? u : d[k].n;
			done[k] += dec->decode(state, &ctx, k, done[k], d[k].b + done[k],
			                       upto[k] - done[k]);
		}
	}
	double t = cpu_s() - t0;
	double bytes = (double)(d[0].n + d[1].n);
	printf("%-8s %12.0f %8.3f %10.1f %14.0f   calls %llu rets %llu unmatched %llu "
	       "evicted %llu malformed %llu\n",
	       name, bytes, t, bytes / t / 1e6, (double)nrec / t, (unsigned long long)st.calls,
	       (unsigned long long)st.rets, (unsigned long long)st.unmatched_ret,
	       (unsigned long long)st.evicted, (unsigned long long)st.malformed);
	free(state);
	free(d[0].b);
	free(d[1].b);
}

int main(int argc, char **argv)
{
	uint32_t msgs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 200000;
	if (msgs == 0 || msgs > 10000000) {
		fprintf(stderr, "usage: bench_dec_ms [MESSAGES (1..10000000)]\n");
		return 2;
	}
	printf("%-8s %12s %8s %10s %14s\n", "decoder", "bytes", "cpu_s", "MB/s", "records/s");
	run("ldap", ldap_build, msgs);
	run("dcerpc", dce_build, msgs);
	run("smb2", smb_build, msgs);
	return 0;
}
