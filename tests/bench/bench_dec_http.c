/* bench_dec_http.c - decoding speed of the HTTP/1.1 decoder alone */
/* SPDX-License-Identifier: MIT */
/*
 * The http decoder is fed a long synthetic keep-alive connection, exchange
 * by exchange (the client's bytes, then the server's: as capture hands them
 * over), in the shapes browsers and API clients produce: a GET with ten
 * header fields answered by a 1 KB Content-Length body, a POST with a JSON
 * body answered by 204, and a GET answered by a chunked body of three
 * chunks. The generic decoder on the same bytes is the floor. Prints MB/s
 * (both directions) and messages/s (CALL + RET) per decoder, per CPU second
 * of the decode loop.
 *
 *   bench_dec_http [EXCHANGES]   (default 210000 per decoder; a multiple of 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"
#include "tests/bench/bench_dec.h"
#include "tests/bench/bench_tok.h"

#define NT 6 /* three exchanges, two turns each */

struct conv {
	int n;
	int dir[NT];
	char *b[NT];
	size_t len[NT];
};

static void turn(struct conv *c, int dir, const char *head, size_t body)
{
	size_t hl = strlen(head);
	char *p = malloc(hl + body + 1);
	if (!p)
		abort();
	memcpy(p, head, hl);
	memset(p + hl, 'x', body);
	c->dir[c->n] = dir;
	c->b[c->n] = p;
	c->len[c->n] = hl + body;
	c->n++;
}

static void http_conv(struct conv *c)
{
	static const char fields[] =
	    "Host: shop.example.com\r\n"
	    "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\n"
	    "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
	    "Accept-Language: en-US,en;q=0.5\r\n"
	    "Accept-Encoding: gzip, deflate\r\n"
	    "Connection: keep-alive\r\n"
	    "Cookie: session=8f14e45fceea167a5a36dedd4bea2543; theme=dark\r\n"
	    "Cache-Control: no-cache\r\n"
	    "X-Request-ID: 5b0f1c2e-8a43-4f7e-9d2a-1c3b4d5e6f70\r\n"
	    "Referer: http://shop.example.com/cart\r\n";
	static char get[1024], post[1024], getc[1024];
	snprintf(get, sizeof get, "GET /product/12345?ref=home HTTP/1.1\r\n%s\r\n", fields);
	snprintf(post, sizeof post,
	         "POST /api/cart/items HTTP/1.1\r\n%sContent-Type: application/json\r\n"
	         "Content-Length: 200\r\n\r\n", fields);
	snprintf(getc, sizeof getc, "GET /api/orders/98765 HTTP/1.1\r\n%s\r\n", fields);
	turn(c, BB_DIR_C2S, get, 0);
	turn(c, BB_DIR_S2C,
	     "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Wed, 25 Nov 2026 12:00:00 GMT\r\n"
	     "Content-Type: text/html\r\nContent-Length: 1024\r\nConnection: keep-alive\r\n\r\n",
	     1024);
	turn(c, BB_DIR_C2S, post, 200);
	turn(c, BB_DIR_S2C,
	     "HTTP/1.1 204 No Content\r\nServer: nginx/1.22.1\r\n"
	     "Date: Wed, 25 Nov 2026 12:00:00 GMT\r\n\r\n", 0);
	turn(c, BB_DIR_C2S, getc, 0);
	/* chunks of 256 and 64 bytes, then the last chunk */
	static char chunked[1024];
	int n = snprintf(chunked, sizeof chunked,
	                 "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nContent-Type: application/json\r\n"
	                 "Transfer-Encoding: chunked\r\n\r\n100\r\n");
	memset(chunked + n, 'y', 256);
	n += 256;
	n += snprintf(chunked + n, sizeof chunked - (size_t)n, "\r\n40\r\n");
	memset(chunked + n, 'z', 64);
	n += 64;
	snprintf(chunked + n, sizeof chunked - (size_t)n, "\r\n0\r\n\r\n");
	turn(c, BB_DIR_S2C, chunked, 0);
}

/* ---- the run ----------------------------------------------------------------------- */

static void run(const char *name, const struct conv *c, long nx)
{
	struct bb_dec_stats st;
	memset(&st, 0, sizeof st);
	struct bb_dec_ctx ctx = {1, "10.0.0.1:40000", "10.0.0.2:80", BB_TR_TCP, &st, bench_at,
	                         bench_count, NULL, bench_tok_key()};
	struct bench_feed *f = bench_feed_new(name, &ctx);
	bench_nmsg = 0;
	double t0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < nx / 3; i++)
		for (int k = 0; k < c->n; k++)
			bench_feed(f, c->dir[k], (const uint8_t *)c->b[k], c->len[k]);
	double dt = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - t0;
	uint64_t bytes = f->bytes;
	bench_feed_free(f);
	printf("%-8s on http   %10.0f MB/s %12.0f messages/s  (%llu messages, %llu bytes, %.3f s CPU; "
	       "malformed %llu, unmatched %llu)\n",
	       name, (double)bytes / dt / 1e6, (double)bench_nmsg / dt,
	       (unsigned long long)bench_nmsg, (unsigned long long)bytes, dt,
	       (unsigned long long)st.malformed, (unsigned long long)st.unmatched_ret);
}

int main(int argc, char **argv)
{
	long nx = argc > 1 ? atol(argv[1]) : 210000;
	if (nx <= 0 || nx % 3) {
		fprintf(stderr, "usage: bench_dec_http [EXCHANGES]   (a multiple of 3)\n");
		return 2;
	}
	struct conv c = {0};
	http_conv(&c);
	run("http", &c, nx);
	run("generic", &c, nx);
	for (int k = 0; k < c.n; k++)
		free(c.b[k]);
	return 0;
}
