/* cap_pcap.c - pcap sources (files merged in time order, live interfaces) and the run loop */
/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/cap_int.h"
#include "traceio/traceio.h"

struct bb_cap *bb_cap_new(const struct bb_cap_opts *opts, struct bb_writer *w,
                          struct bb_err *err)
{
	struct bb_cap *c = bb_xcalloc(1, sizeof *c);
	if (opts)
		c->o = *opts;
	if (!c->o.reorder_ns)
		c->o.reorder_ns = BB_CAP_REORDER_NS;
	if (!c->o.hole_ns)
		c->o.hole_ns = BB_CAP_HOLE_NS;
	if (!c->o.snaplen)
		c->o.snaplen = 262144;
	if (!c->o.buffer_mb)
		c->o.buffer_mb = 32;
	if (!c->o.timeout_ms)
		c->o.timeout_ms = 100;
	c->w = w;
	c->ds = bb_xcalloc(bb_dec_count(), sizeof *c->ds);
	c->scratch = bb_xmalloc(4 * 65536);
	c->names = cap_names_new(c->o.names_file, err);
	if (!c->names) {
		bb_cap_free(c);
		return NULL;
	}
	c->flows = cap_flows_new();
	c->out = cap_out_new();
	c->frags = cap_frags_new();
	const struct cap_engine *e =
		c->o.reassembly == BB_CAP_RSM_LIBNIDS ? &cap_engine_nids : &cap_engine_own;
	if (e->new(c, err) < 0) {
		bb_cap_free(c);
		return NULL;
	}
	c->eng = e;
	return c;
}

void bb_cap_set_writer(struct bb_cap *c, struct bb_writer *w)
{
	c->w = w;
}

void bb_cap_free(struct bb_cap *c)
{
	if (!c)
		return;
	if (c->eng)
		c->eng->free(c);
	cap_flows_end(c);
	cap_flows_free(c->flows);
	cap_frags_free(c->frags);
	for (size_t i = 0; i < c->nsrc; i++) {
		if (c->src[i].p)
			pcap_close(c->src[i].p);
		if (c->src[i].map)
			munmap((void *)(uintptr_t)c->src[i].map, c->src[i].maplen);
		free(c->src[i].name);
	}
	free(c->src);
	cap_out_free(c->out);
	cap_names_free(c->names);
	free(c->ds);
	free(c->scratch);
	free(c);
}

static struct cap_src *add_src(struct bb_cap *c, pcap_t *p, const char *name, int live)
{
	c->src = bb_xrealloc(c->src, (c->nsrc + 1) * sizeof *c->src);
	struct cap_src *s = &c->src[c->nsrc++];
	memset(s, 0, sizeof *s);
	s->p = p;
	s->name = bb_xstrndup(name, strlen(name));
	s->dlt = pcap_datalink(p);
	s->live = live;
	return s;
}

static uint32_t get32(const uint8_t *b, int swapped)
{
	uint32_t v;
	memcpy(&v, b, 4);
	return swapped ? __builtin_bswap32(v) : v;
}

/* A classic pcap file (version 2.4, either byte order, micro- or
 * nanosecond times) is mapped and its records read in place: no copy per
 * packet (pcap_next_ex reads each one through stdio). Anything else, and
 * standard input, is left to libpcap. */
static void map_file(struct cap_src *s, const char *path)
{
	if (strcmp(path, "-") == 0)
		return;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	struct stat sb;
	void *m = MAP_FAILED;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= 24)
		/* Writable copy-on-write pages: libnids edits IP options in the
		 * packet it is given (ip_options_compile), never the file. */
		m = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	const uint8_t *b = m;
	uint32_t magic;
	memcpy(&magic, b, 4);
	int ok = 1;
	if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du)
		s->swapped = 0;
	else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u)
		s->swapped = 1;
	else
		ok = 0;
	s->nsec = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	uint16_t major, minor;
	if (s->swapped) {
		uint16_t mj, mn;
		memcpy(&mj, b + 4, 2);
		memcpy(&mn, b + 6, 2);
		major = __builtin_bswap16(mj);
		minor = __builtin_bswap16(mn);
	} else {
		memcpy(&major, b + 4, 2);
		memcpy(&minor, b + 6, 2);
	}
	if (!ok || major != 2 || minor != 4) {
		munmap(m, (size_t)sb.st_size);
		return;
	}
	madvise(m, (size_t)sb.st_size, MADV_SEQUENTIAL);
	s->map = b;
	s->maplen = (size_t)sb.st_size;
	s->off = 24;
	s->populated = 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#define CAP_MAP_WINDOW (16u << 20)

/* Maps the pages of the next window ahead of the reader in one call (a
 * page fault per 16 pages costs 7% of the run otherwise); harmless where the
 * kernel (before 5.14) does not know MADV_POPULATE_READ. */
static void populate(struct cap_src *s)
{
	size_t from = s->populated, len = CAP_MAP_WINDOW;
	if (from >= s->maplen)
		return;
	if (len > s->maplen - from)
		len = s->maplen - from;
	madvise((void *)(uintptr_t)(s->map + from), len, MADV_POPULATE_READ);
	s->populated = from + len;
}

/* Hands the rest of a mapped file to libpcap, from the current record on. */
static void unmap_src(struct cap_src *s)
{
	if (!s->map)
		return;
	FILE *f = pcap_file(s->p);
	if (f)
		fseeko(f, (off_t)s->off, SEEK_SET);
	munmap((void *)(uintptr_t)s->map, s->maplen);
	s->map = NULL;
}

/* The next record of a mapped file: 1 with s->h and s->data set, 0 at a
 * clean end of file, -1 when libpcap must judge this record. */
static int next_mapped(struct cap_src *s)
{
	size_t left = s->maplen - s->off;
	if (left == 0)
		return 0;
	if (s->off + CAP_MAP_WINDOW / 2 >= s->populated)
		populate(s);
	if (left < 16)
		return -1;
	const uint8_t *r = s->map + s->off;
	uint32_t caplen = get32(r + 8, s->swapped), len = get32(r + 12, s->swapped);
	int snap = pcap_snapshot(s->p);
	if (caplen > left - 16 || caplen > (uint32_t)(snap > 0 ? snap : 0) || caplen > 262144)
		return -1;
	uint32_t frac = get32(r + 4, s->swapped);
	if (!s->nsec) {
		if (frac >= 1000000u)
			return -1;
		frac *= 1000u;
	}
	s->hdr.ts.tv_sec = (time_t)get32(r, s->swapped);
	s->hdr.ts.tv_usec = (suseconds_t)frac;
	s->hdr.caplen = caplen;
	s->hdr.len = len;
	s->h = &s->hdr;
	s->data = r + 16;
	s->off += 16 + (size_t)caplen;
	return 1;
}

int bb_cap_add_file(struct bb_cap *c, const char *path, struct bb_err *err)
{
	char eb[PCAP_ERRBUF_SIZE];
	eb[0] = '\0';
	/* A gzip or zstd capture is decompressed as libpcap reads it. */
	enum bb_fmt f = BB_FMT_TEXT;
	FILE *z = NULL;
	if (strcmp(path, "-") != 0) {
		z = bb_tio_open_read(path, &f, NULL); /* on failure libpcap says why */
		if (z && f != BB_FMT_GZIP && f != BB_FMT_ZSTD) {
			fclose(z);
			z = NULL;
		}
	}
	pcap_t *p = z ? pcap_fopen_offline_with_tstamp_precision(z, PCAP_TSTAMP_PRECISION_NANO, eb)
	              : pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!p && z)
		fclose(z); /* libpcap closes it only once open */
	if (!p) {
		bb_err_set(err, "%s: cannot read capture: %s", path, eb);
		return BB_ERR_IO;
	}
	struct cap_src *s = add_src(c, p, path, 0);
	map_file(s, path);
	return 0;
}

int bb_cap_set_filter(struct bb_cap *c, const char *filter, struct bb_err *err)
{
	for (size_t i = 0; i < c->nsrc; i++) {
		unmap_src(&c->src[i]); /* libpcap applies the filter as it reads */
		struct bpf_program prog;
		if (pcap_compile(c->src[i].p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			bb_err_set(err, "%s: bad filter \"%s\": %s", c->src[i].name, filter,
			           pcap_geterr(c->src[i].p));
			return BB_ERR_ARG;
		}
		int rc = pcap_setfilter(c->src[i].p, &prog);
		pcap_freecode(&prog);
		if (rc < 0) {
			bb_err_set(err, "%s: cannot set filter: %s", c->src[i].name,
			           pcap_geterr(c->src[i].p));
			return BB_ERR_IO;
		}
	}
	return 0;
}

int bb_cap_open_live(struct bb_cap *c, const char *iface, const char *filter,
                     struct bb_err *err)
{
	char eb[PCAP_ERRBUF_SIZE];
	eb[0] = '\0';
	pcap_t *p = pcap_create(iface, eb);
	if (!p) {
		bb_err_set(err, "%s: %s", iface, eb);
		return BB_ERR_IO;
	}
	pcap_set_snaplen(p, c->o.snaplen);
	pcap_set_promisc(p, 1);
	pcap_set_timeout(p, c->o.timeout_ms);
	pcap_set_buffer_size(p, c->o.buffer_mb * 1024 * 1024);
	pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
	int rc = pcap_activate(p);
	if (rc < 0) {
		bb_err_set(err, "%s: cannot capture: %s", iface,
		           rc == PCAP_ERROR ? pcap_geterr(p) : pcap_statustostr(rc));
		pcap_close(p);
		return BB_ERR_IO;
	}
	add_src(c, p, iface, 1);
	c->live = 1;
	if (filter && *filter) {
		struct bpf_program prog;
		if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			bb_err_set(err, "%s: bad filter \"%s\": %s", iface, filter, pcap_geterr(p));
			return BB_ERR_ARG;
		}
		/* The compiled program is freed on every path (the kernel or
		 * libpcap keeps its own copy once set). */
		int set = pcap_setfilter(p, &prog);
		pcap_freecode(&prog);
		if (set < 0) {
			bb_err_set(err, "%s: bad filter \"%s\": %s", iface, filter, pcap_geterr(p));
			return BB_ERR_ARG;
		}
	}
	return 0;
}

void bb_cap_stop(struct bb_cap *c)
{
	c->stop = 1;
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->src[i].live && c->src[i].p)
			pcap_breakloop(c->src[i].p);
}

static int64_t wall_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * BB_NS_PER_S + t.tv_nsec;
}

static int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * BB_NS_PER_S + t.tv_nsec;
}

static void housekeeping(struct bb_cap *c)
{
	if (c->now_ns - c->last_sweep_ns >= 100 * INT64_C(1000000) || c->now_ns < c->last_sweep_ns) {
		int64_t prev = c->last_sweep_ns;
		c->last_sweep_ns = c->now_ns;
		c->eng->expire(c, 0);
		cap_frags_expire(c->frags, c->now_ns, &c->st);
		cap_tcp_idle(c, c->now_ns - c->o.reorder_ns / 2);
		if (c->now_ns / (10 * BB_NS_PER_S) != prev / (10 * BB_NS_PER_S))
			cap_udp_sweep(c, 0);
	}
	cap_out_release(c, 0);
}

/* A packet time in nanoseconds (the sources are opened with nanosecond
 * precision). pcapng carries 64-bit times: clamp to 0 .. 9e9 s, which leaves
 * room for the window arithmetic. */
static int64_t pkt_time(const struct pcap_pkthdr *h)
{
	int64_t sec = (int64_t)h->ts.tv_sec, frac = (int64_t)h->ts.tv_usec;
	if (sec < 0)
		sec = 0;
	if (sec > INT64_C(9000000000))
		sec = INT64_C(9000000000);
	if (frac < 0 || frac >= BB_NS_PER_S)
		frac = 0;
	return sec * BB_NS_PER_S + frac;
}

/* An IPv4 packet: fragments are reassembled here (for either engine), then
 * rebuilt with their first fragment's header. */
static void ip4(struct bb_cap *c, const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t vh = bb_rd_u8(&r);
	bb_rd_skip(&r, 1);
	uint16_t tot = bb_rd_be16(&r);
	uint16_t id = bb_rd_be16(&r);
	uint16_t frag = bb_rd_be16(&r);
	bb_rd_skip(&r, 1);
	uint8_t proto = bb_rd_u8(&r);
	bb_rd_skip(&r, 2);
	const uint8_t *sa = bb_rd_bytes(&r, 4), *da = bb_rd_bytes(&r, 4);
	size_t ihl = (size_t)(vh & 15) * 4;
	if (bb_rd_ok(&r) && tot == 0 && (vh >> 4) == 4 && ihl >= 20 && n > ihl && n <= 65535 &&
	    (frag & 0x3fff) == 0) {
		/* A TSO super-frame captured on the sending host, before the NIC
		 * cut it: the stack leaves the total length 0 (and the header
		 * checksum to the NIC). Its length is what was captured, as
		 * tshark assumes too; the copy gets a length and a checksum that
		 * libnids accepts. */
		uint8_t *h = c->scratch;
		memcpy(h, p, n);
		h[2] = (uint8_t)(n >> 8);
		h[3] = (uint8_t)n;
		h[10] = h[11] = 0;
		uint16_t cs = cap_ip_csum(h, ihl);
		h[10] = (uint8_t)(cs >> 8);
		h[11] = (uint8_t)cs;
		c->st.ip_tso++;
		c->eng->ip4(c, h, n);
		return;
	}
	if (!bb_rd_ok(&r) || (frag & 0x3fff) == 0 || (vh >> 4) != 4 || ihl < 20 || tot < ihl ||
	    tot > n || ihl > CAP_FRAG_HEADROOM) {
		c->eng->ip4(c, p, n); /* not a fragment, or the engine counts it bad */
		return;
	}
	struct cap_frag_key k;
	memset(&k, 0, sizeof k);
	k.fam = 4;
	k.proto = proto;
	k.id = id;
	memcpy(k.src, sa, 4);
	memcpy(k.dst, da, 4);
	uint8_t *whole, first;
	size_t len;
	if (!cap_frag_add(c->frags, &k, c->pkt_ns, (size_t)(frag & 0x1fff) * 8, (frag & 0x2000) != 0,
	                  proto, p + ihl, tot - ihl, &whole, &len, &first, &c->st))
		return;
	if (ihl + len > 65535) {
		c->st.ip_bad++;
		return;
	}
	uint8_t *h = whole + CAP_FRAG_HEADROOM - ihl;
	memcpy(h, p, ihl);
	h[2] = (uint8_t)((ihl + len) >> 8);
	h[3] = (uint8_t)(ihl + len);
	h[6] = h[7] = 0;
	h[10] = h[11] = 0;
	uint16_t cs = cap_ip_csum(h, ihl);
	h[10] = (uint8_t)(cs >> 8);
	h[11] = (uint8_t)cs;
	c->eng->ip4(c, h, ihl + len);
}

static void packet(struct bb_cap *c, int dlt, const struct pcap_pkthdr *h, const u_char *data)
{
	int64_t ts = pkt_time(h);
	c->st.packets++;
	c->st.bytes += h->len;
	if (h->caplen < h->len)
		c->st.truncated++;
	if (c->first_ns == 0)
		c->first_ns = ts;
	/* The packet clock never goes back (merged files, odd timestamps). */
	if (ts < c->now_ns && c->now_ns - ts > c->back_ns)
		c->back_ns = c->now_ns - ts; /* the watermark keeps that much behind */
	c->now_ns = ts > c->now_ns ? ts : c->now_ns;
	c->pkt_ns = ts;
	/* Timers first (held segments, silent flows, records to write), so that
	 * what they release is older than this packet. */
	housekeeping(c);
	const uint8_t *ip;
	size_t len;
	int v = cap_link(dlt, data, h->caplen, &ip, &len);
	if (v == 4) {
		ip4(c, ip, len);
	} else if (v == 6) {
		c->eng->ip6(c, ip, len);
	} else if (v == 0) {
		c->st.link_other++;
	} else if (v == -1) {
		c->st.ip_bad++;
	} else {
		c->st.link_unsupported++;
	}
}

static void live_cb(u_char *arg, const struct pcap_pkthdr *h, const u_char *data)
{
	struct bb_cap *c = (struct bb_cap *)arg;
	if (c->stop || (c->o.count && c->st.packets >= c->o.count))
		return;
	packet(c, c->src[0].dlt, h, data);
	if (c->o.count && c->st.packets >= c->o.count)
		bb_cap_stop(c);
}

static int next_of(struct cap_src *s, struct bb_err *err)
{
	if (s->map) {
		int m = next_mapped(s);
		if (m > 0) {
			s->nread++;
			return 0;
		}
		if (m == 0) {
			s->done = 1;
			return 0;
		}
		unmap_src(s);
	}
	int rc = pcap_next_ex(s->p, &s->h, &s->data);
	if (rc == 1) {
		s->nread++;
		return 0;
	}
	s->done = 1;
	if (rc == PCAP_ERROR) {
		/* A truncated last record is common in real captures: stop there,
		 * and say where, so the user knows what the trace covers. */
		bb_err_set(err, "%s: stopped after packet %llu: %s", s->name,
		           (unsigned long long)s->nread, pcap_geterr(s->p));
		return -1;
	}
	return 0;
}

static int64_t src_ts(const struct cap_src *s)
{
	return pkt_time(s->h);
}

/* A live interface until bb_cap_stop, -c or --duration. */
static int run_live(struct bb_cap *c, void (*tick)(void *arg), void *tick_arg,
                    struct bb_err *err)
{
	int64_t start = mono_ns();
	struct cap_src *s = &c->src[0];
	/* Wait in poll(2), not in libpcap: with TPACKET_V3 a blocking read
	 * returns only once a packet has come, so a quiet interface kept
	 * --duration from ending until the next packet (11 minutes once).
	 * The descriptor is readable when the kernel retires a block (at
	 * the timeout after its first packet, or when full). */
	char peb[PCAP_ERRBUF_SIZE];
	int pfd = pcap_get_selectable_fd(s->p);
	if (pfd >= 0 && pcap_setnonblock(s->p, 1, peb) < 0)
		pfd = -1;
	while (!c->stop) {
		if (pfd >= 0) {
			int wait_ms = c->o.timeout_ms;
			if (c->o.duration_ns) {
				int64_t left = c->o.duration_ns - (mono_ns() - start);
				if (left < (int64_t)wait_ms * 1000000)
					wait_ms = left > 0 ? (int)(left / 1000000) + 1 : 0;
			}
			struct pollfd pf = {pfd, POLLIN, 0};
			(void)poll(&pf, 1, wait_ms); /* EINTR: a signal; c->stop says */
		}
		int n = pcap_dispatch(s->p, -1, live_cb, (u_char *)c);
		if (n == PCAP_ERROR) {
			bb_err_set(err, "%s: %s", s->name, pcap_geterr(s->p));
			return BB_ERR_IO;
		}
		/* Blocks arrive late: advance the clock by the wall time too. */
		int64_t w = wall_ns();
		if (w - c->o.reorder_ns > c->now_ns && c->now_ns)
			c->now_ns = w - c->o.reorder_ns;
		housekeeping(c);
		if (c->o.duration_ns && mono_ns() - start >= c->o.duration_ns)
			c->stop = 1;
		if (tick)
			tick(tick_arg);
	}
	/* Without immediate mode the kernel hands packets over in blocks,
	 * retired at the timeout: wait for it once, then take what is left. */
	char eb[PCAP_ERRBUF_SIZE];
	if (pcap_setnonblock(s->p, 1, eb) == 0) {
		struct timespec ts = {0, ((long)c->o.timeout_ms + 50) * 1000000L};
		nanosleep(&ts, NULL);
		c->stop = 0;
		for (int i = 0; i < 64; i++)
			if (pcap_dispatch(s->p, -1, live_cb, (u_char *)c) <= 0)
				break;
		c->stop = 1;
	}
	return 0;
}

/* The files, merged in time order, to their ends (or -c, --duration). */
static int run_files(struct bb_cap *c, void (*tick)(void *arg), void *tick_arg,
                     struct bb_err *err)
{
	int64_t last_tick = mono_ns();
	int rc = 0;
	for (size_t i = 0; i < c->nsrc; i++)
		if (next_of(&c->src[i], err) < 0)
			rc = BB_ERR_IO;
	while (!c->stop) {
		struct cap_src *best = NULL;
		for (size_t i = 0; i < c->nsrc; i++)
			if (!c->src[i].done && (!best || src_ts(&c->src[i]) < src_ts(best)))
				best = &c->src[i];
		if (!best)
			break;
		if (c->o.duration_ns && c->st.packets && src_ts(best) - c->first_ns >= c->o.duration_ns)
			break;
		packet(c, best->dlt, best->h, best->data);
		if (next_of(best, err) < 0)
			rc = BB_ERR_IO;
		if (c->o.count && c->st.packets >= c->o.count)
			break;
		if ((c->st.packets & 1023) == 0 && tick) {
			int64_t m = mono_ns();
			if (m - last_tick >= BB_NS_PER_S) {
				last_tick = m;
				tick(tick_arg);
			}
		}
	}
	return rc;
}

int bb_cap_run(struct bb_cap *c, void (*tick)(void *arg), void *tick_arg, struct bb_err *err)
{
	return c->live ? run_live(c, tick, tick_arg, err) : run_files(c, tick, tick_arg, err);
}

int bb_cap_finish(struct bb_cap *c, struct bb_err *err)
{
	if (c->finished)
		return 0;
	c->finished = 1;
	c->eng->free(c);      /* ends every TCP stream */
	cap_flows_end(c);     /* ends UDP flows and what libnids did not know */
	cap_out_release(c, 1);
	return bb_writer_flush(c->w, err);
}

void bb_cap_get_stats(struct bb_cap *c, struct bb_cap_stats *st)
{
	for (size_t i = 0; i < c->nsrc; i++) {
		struct pcap_stat ps;
		if (c->src[i].live && pcap_stats(c->src[i].p, &ps) == 0) {
			c->st.received_kernel = ps.ps_recv;
			c->st.dropped_kernel = ps.ps_drop;
			c->st.dropped_iface = ps.ps_ifdrop;
		}
	}
	*st = c->st;
}

const struct bb_dec_stats *bb_cap_dec_stats(const struct bb_cap *c)
{
	return c->ds;
}

size_t bb_cap_summary(struct bb_cap *c, char *buf, size_t cap)
{
	struct bb_cap_stats s;
	bb_cap_get_stats(c, &s);
	size_t n = 0;
#define ADD(...)                                                                     \
	do {                                                                         \
		int k_ = snprintf(buf + n, cap > n ? cap - n : 0, __VA_ARGS__);      \
		if (k_ > 0)                                                          \
			n += (size_t)k_;                                             \
	} while (0)
	ADD("capture packets=%llu dropped_kernel=%llu dropped_iface=%llu tcp_streams=%llu "
	    "tcp_midstream=%llu tcp_gaps=%llu tcp_gap_bytes=%llu tcp_evicted=%llu udp_flows=%llu "
	    "udp_evicted=%llu messages=%llu late=%llu",
	    (unsigned long long)s.packets, (unsigned long long)s.dropped_kernel,
	    (unsigned long long)s.dropped_iface, (unsigned long long)s.tcp_streams,
	    (unsigned long long)s.tcp_midstream, (unsigned long long)s.tcp_gaps,
	    (unsigned long long)s.tcp_gap_bytes, (unsigned long long)s.tcp_evicted,
	    (unsigned long long)s.udp_flows, (unsigned long long)s.udp_evicted,
	    (unsigned long long)s.messages, (unsigned long long)s.late);
	for (size_t i = 0; i < bb_dec_count(); i++) {
		const struct bb_dec_stats *d = &c->ds[i];
		if (!d->flows)
			continue;
		uint64_t answered = d->rets > d->unmatched_ret ? d->rets - d->unmatched_ret : 0;
		ADD(" %s=calls:%llu,rets:%llu,unanswered:%llu,unmatched_ret:%llu,malformed:%llu",
		    bb_dec_at(i)->name, (unsigned long long)d->calls, (unsigned long long)d->rets,
		    (unsigned long long)(d->calls > answered ? d->calls - answered : 0),
		    (unsigned long long)d->unmatched_ret, (unsigned long long)d->malformed);
		if (d->queue_full)
			ADD(",queue_full:%llu", (unsigned long long)d->queue_full);
	}
#undef ADD
	if (cap > 0 && n >= cap)
		n = cap - 1;
	return n;
}

const char *bb_cap_naming(int server_ports)
{
	return server_ports == BB_CAP_PORTS_ALWAYS  ? "naming servers=ports"
	       : server_ports == BB_CAP_PORTS_NEVER ? "naming servers=hosts"
	                                            : "naming servers=auto";
}

size_t bb_cap_lib_versions(char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s, %s", pcap_lib_version(), cap_nids_version());
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}
