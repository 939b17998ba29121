/* bbapp.c - the rig's test service and load client: HTTP/1.1 tiers with a configured call tree and a true-path log */
/* SPDX-License-Identifier: MIT */
/*
 * Like vPath's "vApp": a small service whose handling of each request type
 * follows a call tree read from a config file, and which writes, for every
 * request, the path it really took (its calls with their times) to a log
 * file that never crosses the network. The rig (tests/rig/rig.sh) builds
 * the ground truth from these logs and scores bbnest against it.
 *
 *   bbapp serve --name NAME --listen IP:PORT --config FILE --log FILE
 *               [--backend NAME=KIND@IP:PORT ...] [--pool N]
 *               [--delay TYPE:BACKEND:MS ...] [--render MIN_MS:MAX_MS]
 *               [--workers N] [--conn-log]
 *   bbapp load  --target IP:PORT --clients N --requests N --mix TYPE=W,...
 *               --log FILE [--seed S] [--id PREFIX] [--ramp MS] [--gap MS]
 *               [--rate PER_S [--burst MIN:MAX]] [--conn-log]
 *
 * Config: one line per request type, "TYPE GROUP ; GROUP ...", a GROUP being
 * BACKEND[,BACKEND...] called in parallel (all requests sent, then all
 * replies read); groups run in sequence; "-" means no calls; "*" as TYPE is
 * the default. --render makes each response wait a time drawn uniformly
 * between MIN and MAX ms after its calls (a page being rendered). Backend
 * kinds: http (GET /TYPE?id=ID to another bbapp over a
 * keep-alive connection), redis (INCR in RESP), memcached (text "get"), pg
 * (the PostgreSQL v3 wire protocol, simple query, trust authentication) and
 * dns (an A query over UDP). Each backend has a pool of connections opened
 * at start-up, before any capture, and none of them pipelines.
 *
 * A call may name what it asks for: BACKEND/KEY, KEY one of session, user,
 * recs (the request's uid), item (its iid), term, query (its q). Then an
 * http call asks GET /KEY?QUERY (the request's own query string, without
 * id=), redis INCR KEY:VALUE, memcached get KEY:VALUE, pg a SELECT with the
 * literal 'KEY:VALUE': the identifiers users' requests share across tiers,
 * never a request id.
 *
 * --workers N: a fixed pool of N worker threads serves the requests of all
 * connections (an epoll thread queues each connection with a request
 * waiting; a request waits in that queue for a free worker), instead of a
 * thread per connection.
 *
 * --conn-log (serve and load): requests carry no id at all (the load client
 * sends GET /TYPE?uid=U&iid=I&q=TERM, drawn from small sets so that they
 * repeat across requests) and the log identifies requests and calls by their
 * connection and their order on it instead of an id (tests/rig/score.py
 * joins them): NODE LOCAL PEER ORDER TYPE T0_NS T1_NS CALLS, LOCAL and PEER
 * the connection's IP:PORT ends as this node sees them, ORDER the request's
 * rank on that connection (1, 2, ... since it was opened), CALLS being
 * "BACKEND@LOCAL@REMOTE@ORDER@T0@T1" items in the order sent, or "-" or
 * "ERR". The load client writes NODE "client" and CALLS "-" (or "ERR").
 *
 * Log line (tab-separated): ID NODE TYPE T0_NS T1_NS CALLS, CALLS being
 * "BACKEND@T0@T1" items separated by spaces in the order the calls were
 * sent, or "-". Times are CLOCK_REALTIME nanoseconds, the clock bbcap uses.
 * The load client writes the same line with NODE "client" and CALLS "-"
 * (or "ERR" when the request failed).
 *
 * The load client runs N clients, each sending its next request when the
 * last one is answered (a closed loop). --gap MS makes any two requests of
 * all the clients begin at least MS apart: a client whose turn comes too
 * soon waits for its slot (the paced rig of docs/accuracy.md, "The real
 * multi-tier rig"; not what users' traffic does).
 *
 * --rate makes it an open loop, as users are: requests arrive at PER_S a
 * second on average, at exponentially distributed intervals (Poisson
 * arrivals), whatever the answers; with --burst MIN:MAX they arrive in page
 * views of MIN to MAX requests (uniform) fired at once, the page views being
 * Poisson arrivals at PER_S / mean size. The N clients are then a bounded
 * pool of keep-alive connections: an arrival waits in a FIFO queue until a
 * connection is free, so at most N requests are in flight. At the end one
 * line on standard output gives the rate reached, the mean and maximum
 * number of requests in flight (answered-or-not requests, time-averaged over
 * the run) and the time arrivals waited for a connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <math.h>

#define MAX_TYPES 16
#define MAX_GROUPS 8
#define MAX_PAR 4
#define MAX_BACKENDS 8
#define MAX_DELAYS 8
#define MAX_POOL 128
#define BUF_SIZE 16384

enum kind { K_HTTP, K_REDIS, K_MEMCACHED, K_PG, K_DNS };

struct conn {
	int fd;
	long order;           /* requests sent (client end) or read (server end) on it */
	char local[24], peer[24]; /* IP:PORT of the two ends, as this end sees them */
	size_t len;
	char buf[BUF_SIZE];
};

struct backend {
	char name[32];
	enum kind kind;
	struct sockaddr_in addr;
	struct conn *conns[MAX_POOL];
	int free_idx[MAX_POOL];
	int nfree;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

struct rtype {
	char name[32];
	int ngroups;
	int npar[MAX_GROUPS];
	int call[MAX_GROUPS][MAX_PAR]; /* backend index */
	char key[MAX_GROUPS][MAX_PAR][16]; /* BACKEND/KEY: what the call asks for, or "" */
};

struct delay {
	char type[32];
	int backend;
	int ms;
};

static const char *node_name = "app";
static struct rtype types[MAX_TYPES];
static int ntypes;
static struct backend backends[MAX_BACKENDS];
static int nbackends;
static struct delay delays[MAX_DELAYS];
static int ndelays;
static int pool_size = 8;
static int render_min_ms, render_max_ms;
static unsigned long render_seq;
static pthread_mutex_t render_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static uint16_t dns_id_seq;
static pthread_mutex_t dns_mu = PTHREAD_MUTEX_INITIALIZER;
static int conn_log;  /* --conn-log: no ids on the wire, connections in the log */
static int nworkers;  /* --workers: a fixed worker pool (0: a thread per connection) */

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "bbapp %s: error: ", node_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void parse_addr(const char *s, struct sockaddr_in *a)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof host)
		die("bad address \"%s\" (IP:PORT)", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	memset(a, 0, sizeof *a);
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
		die("bad IPv4 address \"%s\"", host);
}

static int find_backend(const char *name)
{
	for (int i = 0; i < nbackends; i++)
		if (strcmp(backends[i].name, name) == 0)
			return i;
	return -1;
}

/* ---- connections ---------------------------------------------------------- */

static void addr_text(const struct sockaddr_in *a, char *out, size_t cap)
{
	char ip[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
	snprintf(out, cap, "%s:%u", ip, ntohs(a->sin_port));
}

/* Fills c->local and c->peer from its socket. */
static void conn_ends(struct conn *c)
{
	struct sockaddr_in a;
	socklen_t n = sizeof a;
	memset(&a, 0, sizeof a);
	if (getsockname(c->fd, (struct sockaddr *)&a, &n) == 0)
		addr_text(&a, c->local, sizeof c->local);
	n = sizeof a;
	memset(&a, 0, sizeof a);
	if (getpeername(c->fd, (struct sockaddr *)&a, &n) == 0)
		addr_text(&a, c->peer, sizeof c->peer);
}

static int dial(const struct sockaddr_in *a, int type)
{
	for (int tries = 0; tries < 200; tries++) {
		int fd = socket(AF_INET, type, 0);
		if (fd < 0)
			die("socket: %s", strerror(errno));
		if (connect(fd, (const struct sockaddr *)a, sizeof *a) == 0) {
			int one = 1;
			if (type == SOCK_STREAM)
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			return fd;
		}
		close(fd);
		usleep(50000);
	}
	char ip[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
	die("connect %s:%u: %s", ip, ntohs(a->sin_port), strerror(errno));
	return -1;
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Reads more bytes into c; -1 at end of stream or error. */
static int fill(struct conn *c)
{
	if (c->len >= sizeof c->buf)
		return -1;
	for (;;) {
		ssize_t k = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c->len += (size_t)k;
		return 0;
	}
}

static void consume(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

static const char *find_mem(const struct conn *c, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= c->len; i++)
		if (memcmp(c->buf + i, needle, n) == 0)
			return c->buf + i;
	return NULL;
}

/* Reads an HTTP head into c: its length with the blank line, or 0 at the
 * end of the stream. */
static size_t read_head(struct conn *c)
{
	const char *end;
	while (!(end = find_mem(c, "\r\n\r\n")))
		if (fill(c) < 0)
			return 0;
	return (size_t)(end - c->buf) + 4;
}

/* One HTTP/1.1 response (headers and Content-Length body); 0 or -1. */
static int read_http_response(struct conn *c)
{
	size_t head = read_head(c);
	if (head == 0)
		return -1;
	size_t body = 0;
	for (size_t i = 0; i + 16 < head; i++)
		if (strncasecmp(c->buf + i, "\nContent-Length:", 16) == 0) {
			body = (size_t)strtoul(c->buf + i + 16, NULL, 10);
			break;
		}
	if (head + body > sizeof c->buf)
		return -1;
	while (c->len < head + body)
		if (fill(c) < 0)
			return -1;
	consume(c, head + body);
	return 0;
}

static uint32_t get_be32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static void put_be32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

/* PostgreSQL backend messages up to ReadyForQuery ('Z'); 0, or -1 on error
 * or an ErrorResponse. */
static int read_pg_until_ready(struct conn *c)
{
	int bad = 0;
	for (;;) {
		while (c->len < 5)
			if (fill(c) < 0)
				return -1;
		uint32_t n = get_be32(c->buf + 1);
		if (n < 4 || n + 1 > sizeof c->buf)
			return -1;
		while (c->len < n + 1)
			if (fill(c) < 0)
				return -1;
		char t = c->buf[0];
		if (t == 'E')
			bad = 1;
		if (t == 'R' && n >= 8 && get_be32(c->buf + 5) != 0)
			bad = 1; /* anything but AuthenticationOk: the rig uses trust */
		consume(c, n + 1);
		if (t == 'Z')
			return bad ? -1 : 0;
	}
}

static void pg_startup(struct conn *c)
{
	static const char params[] = "user\0postgres\0database\0postgres\0";
	char msg[64];
	uint32_t n = 8 + sizeof params; /* params, and its final NUL ends the list */
	put_be32(msg, n);
	put_be32(msg + 4, 196608); /* protocol 3.0 */
	memcpy(msg + 8, params, sizeof params);
	if (send_all(c->fd, msg, n) < 0 || read_pg_until_ready(c) < 0)
		die("%s: PostgreSQL start-up failed", "pg");
}

static struct conn *conn_open(const struct backend *b)
{
	struct conn *c = calloc(1, sizeof *c);
	if (!c)
		die("out of memory");
	c->fd = dial(&b->addr, b->kind == K_DNS ? SOCK_DGRAM : SOCK_STREAM);
	conn_ends(c);
	if (b->kind == K_PG)
		pg_startup(c);
	return c;
}

static struct conn *pool_get(struct backend *b, int *idx)
{
	pthread_mutex_lock(&b->mu);
	while (b->nfree == 0)
		pthread_cond_wait(&b->cv, &b->mu);
	*idx = b->free_idx[--b->nfree];
	pthread_mutex_unlock(&b->mu);
	return b->conns[*idx];
}

static void pool_put(struct backend *b, int idx)
{
	pthread_mutex_lock(&b->mu);
	b->free_idx[b->nfree++] = idx;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* ---- one call to a backend ------------------------------------------------- */

static size_t dns_query(char *q, size_t cap, uint16_t id, const char *type, const char *rid)
{
	char name[160];
	snprintf(name, sizeof name, "%s-%s.rig.test", type, rid);
	size_t n = 0;
	if (cap < 12 + strlen(name) + 6)
		return 0;
	q[n++] = (char)(id >> 8);
	q[n++] = (char)id;
	q[n++] = 1; /* RD */
	q[n++] = 0;
	q[n++] = 0;
	q[n++] = 1; /* one question */
	memset(q + n, 0, 6);
	n += 6;
	for (char *label = name; *label;) {
		char *dot = strchr(label, '.');
		size_t len = dot ? (size_t)(dot - label) : strlen(label);
		if (len == 0 || len > 63)
			return 0;
		q[n++] = (char)len;
		memcpy(q + n, label, len);
		n += len;
		label += len + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = 0;
	q[n++] = 1; /* A */
	q[n++] = 0;
	q[n++] = 1; /* IN */
	return n;
}

/* The value of NAME= in the query string q ("a=1&b=2"), or "0". */
static void query_value(const char *q, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);
	snprintf(out, cap, "0");
	for (const char *p = q; p && *p; p = strchr(p, '&'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, n) == 0 && p[n] == '=') {
			size_t k = strcspn(p + n + 1, "&");
			if (k >= cap)
				k = cap - 1;
			memcpy(out, p + n + 1, k);
			out[k] = '\0';
			return;
		}
}

/* What a call with KEY asks for: "KEY:VALUE", VALUE the request's parameter
 * for that KEY (docs at the top). */
static void key_text(const char *key, const char *query, char *out, size_t cap)
{
	static const char *const map[][2] = {{"session", "uid"}, {"user", "uid"}, {"recs", "uid"},
	                                     {"item", "iid"},    {"term", "q"},   {"query", "q"}};
	const char *param = "uid";
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(map[i][0], key) == 0)
			param = map[i][1];
	char v[64];
	query_value(query, param, v, sizeof v);
	snprintf(out, cap, "%s:%s", key, v);
}

static int call_send(struct backend *b, struct conn *c, const char *type, const char *rid,
                     const char *key, const char *query, uint16_t *dns_id)
{
	char msg[512], kv[96];
	int n = 0;
	if (key[0])
		key_text(key, query, kv, sizeof kv);
	else
		snprintf(kv, sizeof kv, "%s:%s", b->kind == K_REDIS ? "hits" : "item", type);
	c->order++;
	switch (b->kind) {
	case K_HTTP:
		if (conn_log)
			n = snprintf(msg, sizeof msg, "GET /%s?%s HTTP/1.1\r\nHost: %s\r\n\r\n",
			             key[0] ? key : type, query, b->name);
		else
			n = snprintf(msg, sizeof msg, "GET /%s?id=%s HTTP/1.1\r\nHost: %s\r\n\r\n", type,
			             rid, b->name);
		break;
	case K_REDIS:
		n = snprintf(msg, sizeof msg, "*2\r\n$4\r\nINCR\r\n$%zu\r\n%s\r\n", strlen(kv), kv);
		break;
	case K_MEMCACHED:
		n = snprintf(msg, sizeof msg, "get %s\r\n", kv);
		break;
	case K_PG: {
		char sql[200];
		int k = snprintf(sql, sizeof sql,
		                 "SELECT relname, relpages FROM pg_class WHERE relname <> '%s' "
		                 "ORDER BY relname LIMIT 5",
		                 key[0] ? kv : type);
		if (k < 0 || (size_t)k >= sizeof sql)
			return -1;
		msg[0] = 'Q';
		put_be32(msg + 1, (uint32_t)(4 + k + 1));
		memcpy(msg + 5, sql, (size_t)k + 1);
		n = 5 + k + 1;
		break;
	}
	case K_DNS:
		pthread_mutex_lock(&dns_mu);
		*dns_id = ++dns_id_seq;
		pthread_mutex_unlock(&dns_mu);
		n = (int)dns_query(msg, sizeof msg, *dns_id, type, rid);
		break;
	}
	if (n <= 0 || (size_t)n >= sizeof msg)
		return -1;
	return send_all(c->fd, msg, (size_t)n);
}

static int call_recv(struct backend *b, struct conn *c, uint16_t dns_id)
{
	const char *p;
	switch (b->kind) {
	case K_HTTP:
		return read_http_response(c);
	case K_REDIS:
		while (!(p = find_mem(c, "\r\n")))
			if (fill(c) < 0)
				return -1;
		consume(c, (size_t)(p - c->buf) + 2);
		return 0;
	case K_MEMCACHED:
		while (!(p = find_mem(c, "END\r\n")))
			if (fill(c) < 0)
				return -1;
		consume(c, (size_t)(p - c->buf) + 5);
		return 0;
	case K_PG:
		return read_pg_until_ready(c);
	case K_DNS:
		for (;;) {
			char r[1500];
			ssize_t k = recv(c->fd, r, sizeof r, 0);
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 12)
				return -1;
			if (((unsigned)(unsigned char)r[0] << 8 | (unsigned char)r[1]) == dns_id)
				return 0;
		}
	}
	return -1;
}

/* ---- the service ------------------------------------------------------------ */

static const struct rtype *find_type(const char *name)
{
	const struct rtype *dflt = NULL;
	for (int i = 0; i < ntypes; i++) {
		if (strcmp(types[i].name, name) == 0)
			return &types[i];
		if (strcmp(types[i].name, "*") == 0)
			dflt = &types[i];
	}
	return dflt;
}

static int delay_ms(const char *type, int backend)
{
	for (int i = 0; i < ndelays; i++)
		if (delays[i].backend == backend && strcmp(delays[i].type, type) == 0)
			return delays[i].ms;
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

/* The "rendering" time of a response, uniform in [render_min_ms,
 * render_max_ms] from a fixed sequence (Weyl sequence of the golden ratio). */
static int render_ms(void)
{
	pthread_mutex_lock(&render_mu);
	unsigned long k = ++render_seq;
	pthread_mutex_unlock(&render_mu);
	double u = (double)k * 0.6180339887498949;
	u -= (double)(unsigned long)u;
	return render_min_ms + (int)(u * (render_max_ms - render_min_ms + 1));
}

static void log_line(const char *line, size_t n)
{
	if (write(log_fd, line, n) != (ssize_t)n)
		die("log: %s", strerror(errno));
}

/* Runs the call tree of type for request rid; appends "B@t0@t1" items to
 * calls. Returns 0, or -1 when a backend failed. */
static int handle(const char *type, const char *rid, const char *query, char *calls, size_t cap)
{
	const struct rtype *t = find_type(type);
	size_t used = 0;
	int rc = 0;
	calls[0] = '\0';
	if (!t)
		return -1;
	for (int g = 0; g < t->ngroups; g++) {
		struct conn *c[MAX_PAR];
		int idx[MAX_PAR];
		uint16_t id[MAX_PAR] = {0};
		int64_t t0[MAX_PAR], t1[MAX_PAR];
		long order[MAX_PAR];
		for (int k = 0; k < t->npar[g]; k++) {
			struct backend *b = &backends[t->call[g][k]];
			int ms = delay_ms(type, t->call[g][k]);
			if (ms > 0)
				sleep_ms(ms);
			c[k] = pool_get(b, &idx[k]);
			t0[k] = now_ns();
			if (call_send(b, c[k], type, rid, t->key[g][k], query, &id[k]) < 0)
				rc = -1;
			order[k] = c[k]->order; /* c[k] goes back to the pool before the log */
		}
		for (int k = 0; k < t->npar[g]; k++) {
			struct backend *b = &backends[t->call[g][k]];
			if (rc == 0 && call_recv(b, c[k], id[k]) < 0)
				rc = -1;
			t1[k] = now_ns();
			pool_put(b, idx[k]);
		}
		for (int k = 0; k < t->npar[g] && used < cap; k++) {
			int w;
			if (conn_log)
				w = snprintf(calls + used, cap - used, "%s%s@%s@%s@%ld@%lld@%lld",
				             used ? " " : "", backends[t->call[g][k]].name, c[k]->local,
				             c[k]->peer, order[k], (long long)t0[k], (long long)t1[k]);
			else
				w = snprintf(calls + used, cap - used, "%s%s@%lld@%lld", used ? " " : "",
				             backends[t->call[g][k]].name, (long long)t0[k],
				             (long long)t1[k]);
			if (w < 0 || (size_t)w >= cap - used)
				return -1;
			used += (size_t)w;
		}
		if (rc < 0)
			return -1;
	}
	if (used == 0)
		snprintf(calls, cap, "-");
	return 0;
}

/* Reads and answers one request on c: 0, or -1 when the connection is
 * done (closed by the peer, or an error). */
static int serve_one(struct conn *c)
{
	size_t head = read_head(c);
	if (head == 0)
		return -1;
	char type[32] = "", rid[64] = "-", query[256] = "";
	/* "GET /TYPE?QUERY HTTP/1.1", the id in QUERY's id= (--conn-log: none) */
	if (c->len > 5 && memcmp(c->buf, "GET /", 5) == 0) {
		size_t i = 5, k = 0;
		while (i < head && c->buf[i] != '?' && c->buf[i] != ' ' && k + 1 < sizeof type)
			type[k++] = c->buf[i++];
		type[k] = '\0';
		if (i < head && c->buf[i] == '?') {
			i++;
			k = 0;
			while (i < head && c->buf[i] != ' ' && k + 1 < sizeof query)
				query[k++] = c->buf[i++];
			query[k] = '\0';
		}
		if (!conn_log && strncmp(query, "id=", 3) == 0)
			snprintf(rid, sizeof rid, "%.*s", (int)strcspn(query + 3, "&"), query + 3);
	}
	consume(c, head);
	c->order++;
	int64_t t0 = now_ns();
	char calls[2048];
	int rc = handle(type, rid, query, calls, sizeof calls);
	if (render_max_ms > 0)
		sleep_ms(render_ms());
	int64_t t1 = now_ns();
	char line[2400];
	int n;
	if (conn_log)
		n = snprintf(line, sizeof line, "%s\t%s\t%s\t%ld\t%s\t%lld\t%lld\t%s\n", node_name,
		             c->local, c->peer, c->order, type, (long long)t0, (long long)t1,
		             rc == 0 ? calls : "ERR");
	else
		n = snprintf(line, sizeof line, "%s\t%s\t%s\t%lld\t%lld\t%s\n", rid, node_name, type,
		             (long long)t0, (long long)t1, rc == 0 ? calls : "ERR");
	if (n > 0 && (size_t)n < sizeof line)
		log_line(line, (size_t)n);
	char body[128], resp[256];
	int bn = snprintf(body, sizeof body, "%s %s %s\n", rc == 0 ? "ok" : "error", node_name,
	                  type);
	int rn = snprintf(resp, sizeof resp,
	                  "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
	                  rc == 0 ? "200 OK" : "502 Bad Gateway", bn, body);
	return send_all(c->fd, resp, (size_t)rn);
}

static void *serve_conn(void *arg)
{
	struct conn *c = arg;
	while (serve_one(c) == 0) {
	}
	close(c->fd);
	free(c);
	return NULL;
}

/* ---- the worker pool (--workers) -------------------------------------------- */

static int ep_fd = -1;
static struct conn **ready_q; /* connections with a request waiting, FIFO */
static size_t ready_cap, ready_head, ready_len;
static pthread_mutex_t ready_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cv = PTHREAD_COND_INITIALIZER;

static void ready_push(struct conn *c)
{
	pthread_mutex_lock(&ready_mu);
	if (ready_len == ready_cap) {
		size_t cap = ready_cap ? 2 * ready_cap : 256;
		struct conn **q = calloc(cap, sizeof *q);
		if (!q)
			die("out of memory");
		for (size_t i = 0; i < ready_len; i++)
			q[i] = ready_q[(ready_head + i) % ready_cap];
		free(ready_q);
		ready_q = q;
		ready_cap = cap;
		ready_head = 0;
	}
	ready_q[(ready_head + ready_len++) % ready_cap] = c;
	pthread_cond_signal(&ready_cv);
	pthread_mutex_unlock(&ready_mu);
}

/* Arms c for its next request: the epoll thread queues it when one arrives. */
static void watch(struct conn *c, int op)
{
	struct epoll_event ev;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
	ev.data.ptr = c;
	if (epoll_ctl(ep_fd, op, c->fd, &ev) < 0)
		die("epoll_ctl: %s", strerror(errno));
}

static void *poll_run(void *arg)
{
	(void)arg;
	struct epoll_event evs[64];
	for (;;) {
		int n = epoll_wait(ep_fd, evs, 64, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++)
			ready_push(evs[i].data.ptr);
	}
	return NULL;
}

static void *worker_run(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&ready_mu);
		while (ready_len == 0)
			pthread_cond_wait(&ready_cv, &ready_mu);
		struct conn *c = ready_q[ready_head];
		ready_head = (ready_head + 1) % ready_cap;
		ready_len--;
		pthread_mutex_unlock(&ready_mu);
		if (serve_one(c) == 0)
			watch(c, EPOLL_CTL_MOD);
		else {
			close(c->fd); /* leaves the epoll set */
			free(c);
		}
	}
	return NULL;
}

static void start_thread(void *(*fn)(void *), void *arg)
{
	pthread_t th;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &at, fn, arg) != 0)
		die("pthread_create failed");
	pthread_attr_destroy(&at);
}

static void read_config(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die("%s: %s", path, strerror(errno));
	char line[512];
	int lineno = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '\n')
			continue;
		if (ntypes == MAX_TYPES)
			die("%s:%d: more than %d types", path, lineno, MAX_TYPES);
		struct rtype *t = &types[ntypes++];
		size_t k = 0;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n' && k + 1 < sizeof t->name)
			t->name[k++] = *s++;
		/* the rest without blanks: G;G;... with G = B,B,... */
		char rest[512];
		size_t r = 0;
		for (; *s; s++)
			if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
				rest[r++] = *s;
		rest[r] = '\0';
		if (strcmp(rest, "-") == 0 || r == 0)
			continue;
		char *save1 = NULL;
		for (char *g = strtok_r(rest, ";", &save1); g; g = strtok_r(NULL, ";", &save1)) {
			if (t->ngroups == MAX_GROUPS)
				die("%s:%d: more than %d groups", path, lineno, MAX_GROUPS);
			char *save2 = NULL;
			for (char *b = strtok_r(g, ",", &save2); b; b = strtok_r(NULL, ",", &save2)) {
				char *slash = strchr(b, '/');
				if (slash)
					*slash++ = '\0';
				int bi = find_backend(b);
				if (bi < 0)
					die("%s:%d: unknown backend \"%s\" (give it with --backend)", path,
					    lineno, b);
				if (t->npar[t->ngroups] == MAX_PAR)
					die("%s:%d: more than %d parallel calls", path, lineno, MAX_PAR);
				if (slash && strlen(slash) >= sizeof t->key[0][0])
					die("%s:%d: key \"%s\" too long", path, lineno, slash);
				snprintf(t->key[t->ngroups][t->npar[t->ngroups]],
				         sizeof t->key[0][0], "%s", slash ? slash : "");
				t->call[t->ngroups][t->npar[t->ngroups]++] = bi;
			}
			t->ngroups++;
		}
	}
	fclose(f);
}

static void add_backend(const char *spec)
{
	/* NAME=KIND@IP:PORT */
	static const char *const kinds[] = {"http", "redis", "memcached", "pg", "dns"};
	const char *eq = strchr(spec, '='), *at = strchr(spec, '@');
	if (!eq || !at || at < eq || nbackends == MAX_BACKENDS)
		die("bad --backend \"%s\" (NAME=KIND@IP:PORT)", spec);
	struct backend *b = &backends[nbackends];
	if ((size_t)(eq - spec) >= sizeof b->name)
		die("backend name too long: %s", spec);
	memcpy(b->name, spec, (size_t)(eq - spec));
	size_t kl = (size_t)(at - eq - 1);
	int kind = -1;
	for (int i = 0; i < 5; i++)
		if (strlen(kinds[i]) == kl && memcmp(kinds[i], eq + 1, kl) == 0)
			kind = i;
	if (kind < 0)
		die("bad backend kind in \"%s\" (http, redis, memcached, pg, dns)", spec);
	b->kind = (enum kind)kind;
	parse_addr(at + 1, &b->addr);
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	nbackends++;
}

static void open_pools(void)
{
	for (int i = 0; i < nbackends; i++) {
		struct backend *b = &backends[i];
		for (int k = 0; k < pool_size; k++) {
			b->conns[k] = conn_open(b);
			b->free_idx[b->nfree++] = k;
		}
		if (b->kind == K_MEMCACHED) /* the items the "get"s find */
			for (int t = 0; t < ntypes; t++) {
				char msg[200];
				int n = snprintf(msg, sizeof msg,
				                 "set item:%s 0 0 32\r\n%032d\r\n", types[t].name, t);
				struct conn *c = b->conns[0];
				const char *p;
				c->order++;
				if (send_all(c->fd, msg, (size_t)n) < 0)
					die("memcached set failed");
				while (!(p = find_mem(c, "\r\n")))
					if (fill(c) < 0)
						die("memcached set failed");
				consume(c, (size_t)(p - c->buf) + 2);
			}
	}
}

static int cmd_serve(int argc, char **argv)
{
	const char *listen_at = NULL, *config = NULL, *log = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--conn-log") == 0) {
			conn_log = 1;
			continue;
		}
		if (!v)
			die("%s needs a value", a);
		i++;
		if (strcmp(a, "--name") == 0)
			node_name = v;
		else if (strcmp(a, "--listen") == 0)
			listen_at = v;
		else if (strcmp(a, "--config") == 0)
			config = v;
		else if (strcmp(a, "--log") == 0)
			log = v;
		else if (strcmp(a, "--backend") == 0)
			add_backend(v);
		else if (strcmp(a, "--workers") == 0) {
			nworkers = atoi(v);
			if (nworkers < 1 || nworkers > 1024)
				die("--workers: 1 to 1024");
		}
		else if (strcmp(a, "--pool") == 0) {
			pool_size = atoi(v);
			if (pool_size < 1 || pool_size > MAX_POOL)
				die("--pool: 1 to %d", MAX_POOL);
		} else if (strcmp(a, "--render") == 0) {
			if (sscanf(v, "%d:%d", &render_min_ms, &render_max_ms) != 2 ||
			    render_min_ms < 0 || render_max_ms < render_min_ms)
				die("bad --render \"%s\" (MIN_MS:MAX_MS)", v);
		} else if (strcmp(a, "--delay") == 0) {
			/* TYPE:BACKEND:MS */
			char spec[96], *c1, *c2;
			snprintf(spec, sizeof spec, "%s", v);
			if (!(c1 = strchr(spec, ':')) || !(c2 = strchr(c1 + 1, ':')) ||
			    ndelays == MAX_DELAYS)
				die("bad --delay \"%s\" (TYPE:BACKEND:MS)", v);
			*c1 = *c2 = '\0';
			struct delay *d = &delays[ndelays++];
			if (strlen(spec) >= sizeof d->type)
				die("--delay: type name too long");
			memcpy(d->type, spec, strlen(spec) + 1);
			if ((d->backend = find_backend(c1 + 1)) < 0)
				die("--delay: unknown backend \"%s\" (give --backend first)", c1 + 1);
			d->ms = atoi(c2 + 1);
		} else
			die("unknown option %s", a);
	}
	if (!listen_at || !config || !log)
		die("serve needs --listen, --config and --log");
	read_config(config);
	log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (log_fd < 0)
		die("%s: %s", log, strerror(errno));
	open_pools();
	struct sockaddr_in a;
	parse_addr(listen_at, &a);
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 512) < 0)
		die("listen %s: %s", listen_at, strerror(errno));
	if (nworkers > 0) {
		ep_fd = epoll_create1(0);
		if (ep_fd < 0)
			die("epoll_create1: %s", strerror(errno));
		start_thread(poll_run, NULL);
		for (int i = 0; i < nworkers; i++)
			start_thread(worker_run, NULL);
	}
	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept: %s", strerror(errno));
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct conn *c = calloc(1, sizeof *c);
		if (!c)
			die("out of memory");
		c->fd = fd;
		conn_ends(c);
		if (nworkers > 0)
			watch(c, EPOLL_CTL_ADD);
		else
			start_thread(serve_conn, c);
	}
	return 0;
}

/* ---- the load client ------------------------------------------------------- */

struct mix {
	char type[32];
	unsigned weight;
};

static struct mix mixes[MAX_TYPES];
static int nmix;
static unsigned mix_total;
static struct sockaddr_in target;
static long total_requests;
static long next_request;
static long failures;
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long seed = 1;
static const char *id_prefix = "r";
static int ramp_ms, nclients = 1;
static int64_t gap_ns;        /* --gap: least time between two requests' starts */
static int64_t last_start_ns; /* CLOCK_MONOTONIC time of the last slot given out */
static double rate;           /* --rate: open loop, arrivals a second (0: closed loop) */
static int burst_min, burst_max; /* --burst: requests a page view (0: single requests) */
static int64_t *arrival_ns;   /* open loop: request i arrives at start + arrival_ns[i] */
static int64_t load_start_ns; /* CLOCK_MONOTONIC */
static int inflight, inflight_max;
static int64_t busy_ns;       /* sum over requests of their time in flight */
static int64_t wait_sum_ns, wait_max_ns; /* arrivals' wait for a free connection */
static int64_t first_send_ns, last_done_ns; /* CLOCK_MONOTONIC */

struct client {
	int no;
	uint64_t rng;
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
	}
}

/* A uniform double in (0, 1]. */
static double unit(uint64_t *s)
{
	return ((double)(xorshift(s) >> 11) + 1.0) / 9007199254740992.0;
}

/* The open loop's arrival times: exponential gaps at rate (requests) or at
 * rate / mean size (page views of burst_min..burst_max requests at once). */
static void plan_arrivals(long n)
{
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (seed + 1000003);
	double mean_size = burst_max > 0 ? (burst_min + burst_max) / 2.0 : 1.0;
	double t = 0;
	arrival_ns = calloc((size_t)n, sizeof *arrival_ns);
	if (!arrival_ns)
		die("out of memory");
	for (long i = 0; i < n;) {
		t += -log(unit(&rng)) * mean_size / rate;
		long k = 1;
		if (burst_max > 0)
			k = burst_min + (long)(xorshift(&rng) % (uint64_t)(burst_max - burst_min + 1));
		for (; k > 0 && i < n; k--)
			arrival_ns[i++] = (int64_t)(t * 1e9);
	}
}

/* Waits for the next start slot: at least gap_ns after the slot given out
 * before (any client's). Takes load_mu's place in the caller's critical
 * section: called with load_mu held, returns with it released. */
static void wait_slot(void)
{
	int64_t now = mono_ns(), slot = now;
	if (gap_ns > 0 && last_start_ns > 0 && last_start_ns + gap_ns > now)
		slot = last_start_ns + gap_ns;
	last_start_ns = slot;
	pthread_mutex_unlock(&load_mu);
	if (slot > now) {
		struct timespec ts = {(time_t)(slot / 1000000000), (long)(slot % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
		}
	}
}

static void *client_run(void *arg)
{
	struct client *cl = arg;
	struct conn *c = calloc(1, sizeof *c);
	if (!c)
		die("out of memory");
	c->fd = dial(&target, SOCK_STREAM);
	conn_ends(c);
	if (ramp_ms > 0) /* clients start spread over the ramp, not in one burst */
		sleep_ms((int)((long)ramp_ms * cl->no / nclients));
	for (;;) {
		pthread_mutex_lock(&load_mu);
		long i = next_request < total_requests ? next_request++ : -1;
		if (i < 0) {
			pthread_mutex_unlock(&load_mu);
			break;
		}
		int64_t due = 0;
		if (arrival_ns) { /* open loop: wait for the arrival, not for a slot */
			pthread_mutex_unlock(&load_mu);
			due = load_start_ns + arrival_ns[i];
			if (mono_ns() < due)
				sleep_until(due);
		} else
			wait_slot();
		unsigned r = (unsigned)(xorshift(&cl->rng) % mix_total);
		const char *type = mixes[0].type;
		for (int k = 0; k < nmix; k++) {
			if (r < mixes[k].weight) {
				type = mixes[k].type;
				break;
			}
			r -= mixes[k].weight;
		}
		char req[256], rid[48];
		snprintf(rid, sizeof rid, "%s-%ld", id_prefix, i);
		int n;
		if (conn_log) { /* what a user asks for, from small sets: no request id */
			static const char *const terms[] = {"lamp", "chair", "desk", "rug", "sofa",
			                                    "shelf", "bed", "mirror", "clock", "vase",
			                                    "bench", "stool"};
			unsigned uid = (unsigned)(xorshift(&cl->rng) % 40) + 1;
			unsigned iid = (unsigned)(xorshift(&cl->rng) % 60) + 100;
			const char *q = terms[xorshift(&cl->rng) % (sizeof terms / sizeof terms[0])];
			n = snprintf(req, sizeof req,
			             "GET /%s?uid=%u&iid=%u&q=%s HTTP/1.1\r\nHost: rig\r\n\r\n", type,
			             uid, iid, q);
		} else
			n = snprintf(req, sizeof req, "GET /%s?id=%s HTTP/1.1\r\nHost: rig\r\n\r\n",
			             type, rid);
		c->order++;
		int64_t m0 = mono_ns();
		pthread_mutex_lock(&load_mu);
		if (++inflight > inflight_max)
			inflight_max = inflight;
		if (first_send_ns == 0 || m0 < first_send_ns)
			first_send_ns = m0;
		if (due > 0) {
			wait_sum_ns += m0 - due;
			if (m0 - due > wait_max_ns)
				wait_max_ns = m0 - due;
		}
		pthread_mutex_unlock(&load_mu);
		int64_t t0 = now_ns();
		int ok = send_all(c->fd, req, (size_t)n) == 0 && read_http_response(c) == 0;
		int64_t t1 = now_ns();
		int64_t m1 = mono_ns();
		pthread_mutex_lock(&load_mu);
		inflight--;
		busy_ns += m1 - m0;
		if (m1 > last_done_ns)
			last_done_ns = m1;
		pthread_mutex_unlock(&load_mu);
		char line[256];
		if (conn_log)
			n = snprintf(line, sizeof line, "client\t%s\t%s\t%ld\t%s\t%lld\t%lld\t%s\n",
			             c->local, c->peer, c->order, type, (long long)t0, (long long)t1,
			             ok ? "-" : "ERR");
		else
			n = snprintf(line, sizeof line, "%s\tclient\t%s\t%lld\t%lld\t%s\n", rid, type,
			             (long long)t0, (long long)t1, ok ? "-" : "ERR");
		log_line(line, (size_t)n);
		if (!ok) {
			pthread_mutex_lock(&load_mu);
			failures++;
			pthread_mutex_unlock(&load_mu);
			close(c->fd);
			c->fd = dial(&target, SOCK_STREAM);
			c->len = 0;
			c->order = 0;
			conn_ends(c);
		}
	}
	close(c->fd);
	free(c);
	return NULL;
}

static int cmd_load(int argc, char **argv)
{
	int clients = 1;
	const char *log = NULL;
	node_name = "load";
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--conn-log") == 0) {
			conn_log = 1;
			continue;
		}
		if (!v)
			die("%s needs a value", a);
		i++;
		if (strcmp(a, "--target") == 0)
			parse_addr(v, &target);
		else if (strcmp(a, "--clients") == 0)
			clients = atoi(v);
		else if (strcmp(a, "--requests") == 0)
			total_requests = atol(v);
		else if (strcmp(a, "--log") == 0)
			log = v;
		else if (strcmp(a, "--ramp") == 0)
			ramp_ms = atoi(v);
		else if (strcmp(a, "--gap") == 0)
			gap_ns = (int64_t)atoi(v) * 1000000;
		else if (strcmp(a, "--id") == 0)
			id_prefix = v;
		else if (strcmp(a, "--rate") == 0) {
			rate = atof(v);
			if (!(rate > 0))
				die("--rate: a positive number of requests a second");
		} else if (strcmp(a, "--burst") == 0) {
			if (sscanf(v, "%d:%d", &burst_min, &burst_max) != 2 || burst_min < 1 ||
			    burst_max < burst_min || burst_max > 64)
				die("bad --burst \"%s\" (MIN:MAX requests, 1-64)", v);
		}
		else if (strcmp(a, "--seed") == 0)
			seed = strtoul(v, NULL, 10);
		else if (strcmp(a, "--mix") == 0) {
			char spec[256];
			snprintf(spec, sizeof spec, "%s", v);
			char *save = NULL;
			for (char *m = strtok_r(spec, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
				char *eq = strchr(m, '=');
				if (!eq || nmix == MAX_TYPES)
					die("bad --mix \"%s\" (TYPE=WEIGHT,...)", v);
				*eq = '\0';
				snprintf(mixes[nmix].type, sizeof mixes[nmix].type, "%s", m);
				mixes[nmix].weight = (unsigned)atoi(eq + 1);
				mix_total += mixes[nmix++].weight;
			}
		} else
			die("unknown option %s", a);
	}
	if (!log || nmix == 0 || mix_total == 0 || clients < 1 || clients > 1024 || gap_ns < 0 ||
	    total_requests < 1 || target.sin_family != AF_INET)
		die("load needs --target, --clients (1-1024), --requests, --mix and --log");
	if (burst_max > 0 && rate == 0)
		die("--burst needs --rate");
	nclients = clients;
	if (rate > 0) {
		plan_arrivals(total_requests);
		ramp_ms = 0; /* the arrivals are the ramp */
	}
	log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (log_fd < 0)
		die("%s: %s", log, strerror(errno));
	pthread_t *th = calloc((size_t)clients, sizeof *th);
	struct client *cl = calloc((size_t)clients, sizeof *cl);
	if (!th || !cl)
		die("out of memory");
	load_start_ns = mono_ns() + 200000000; /* every client connected by then */
	for (int i = 0; i < clients; i++) {
		cl[i].no = i;
		cl[i].rng = 0x9e3779b97f4a7c15ULL * (seed + (uint64_t)i + 1);
		if (pthread_create(&th[i], NULL, client_run, &cl[i]) != 0)
			die("pthread_create failed");
	}
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	free(th);
	free(cl);
	free(arrival_ns);
	close(log_fd);
	double span = (double)(last_done_ns - first_send_ns) / 1e9;
	printf("load: %ld requests in %.2f s (%.1f/s; %s), %d connections: in flight mean %.1f,"
	       " max %d; waited for a connection: mean %.2f ms, max %.1f ms\n",
	       total_requests, span, span > 0 ? (double)total_requests / span : 0.0,
	       rate == 0    ? "closed loop"
	       : burst_max ? "bursts"
	                   : "Poisson",
	       clients, span > 0 ? (double)busy_ns / 1e9 / span : 0.0, inflight_max,
	       (double)wait_sum_ns / 1e6 / (double)total_requests, (double)wait_max_ns / 1e6);
	if (failures > 0)
		fprintf(stderr, "bbapp load: %ld of %ld requests failed\n", failures, total_requests);
	return failures > 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "load") == 0)
		return cmd_load(argc - 2, argv + 2);
	fprintf(stderr, "usage: bbapp serve --name NAME --listen IP:PORT --config FILE --log FILE\n"
	                "                   [--backend NAME=KIND@IP:PORT ...] [--pool N]\n"
	                "                   [--delay TYPE:BACKEND:MS ...] [--render MIN_MS:MAX_MS]\n"
	                "                   [--workers N] [--conn-log]\n"
	                "       bbapp load --target IP:PORT --clients N --requests N\n"
	                "                  --mix TYPE=W,... --log FILE [--seed S] [--id PREFIX] [--ramp MS]\n"
	                "                  [--gap MS] [--rate PER_S [--burst MIN:MAX]] [--conn-log]\n");
	return 2;
}
