/* capture.h - packet capture into a trace: pcap sources, link layers, IP, flows, TCP */
/* SPDX-License-Identifier: MIT */
#ifndef BB_CAPTURE_H
#define BB_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/decoders.h"
#include "trace/trace.h"

/* Options of one capture run. Zero is a sensible default for every field. */
struct bb_cap_opts {
	struct bb_dec_sel sel;      /* --decode-as, --no-decoder */
	int server_ports;           /* how servers are named: BB_CAP_PORTS_AUTO (0,
	                               "ip:port" on the loopback and when called
	                               from their own address, else "ip"),
	                               BB_CAP_PORTS_ALWAYS, BB_CAP_PORTS_NEVER */
	const char *names_file;     /* hosts-format address -> name map, or NULL */
	int64_t reorder_ns;         /* the longest a record waits for messages still
	                               open (then it is written, and a message older
	                               than it is late); 0 means BB_CAP_REORDER_NS */
	int fixed_hold;             /* hold every record reorder_ns (no watermark) */
	int64_t hole_ns;            /* TCP reordering tolerated before a hole is a
	                               gap; 0 means BB_CAP_HOLE_NS */
	unsigned max_streams;       /* concurrent TCP streams; 0 means BB_CAP_STREAMS */
	int reassembly;             /* TCP reassembly: BB_CAP_RSM_OWN (0) or BB_CAP_RSM_LIBNIDS */
	int verbose;                /* log single malformed packets (to the log callback) */
	int tokens;                 /* 1: decoders write tok= and ctx= hashed with tok_key */
	struct bb_tok_key tok_key;  /* bb_tok_key_derive of the salt (--token-salt) */
	/* Live capture only. */
	int snaplen;                /* 0: 262144 */
	int buffer_mb;              /* kernel buffer; 0: 32 */
	int timeout_ms;             /* packet-block flush timeout; 0: 100 */
	uint64_t count;             /* stop after this many packets; 0: no limit */
	int64_t duration_ns;        /* stop after this long; 0: no limit */
	/* Called with one-line log messages (-v); may be NULL. */
	void (*log)(void *arg, const char *msg);
	void *log_arg;
};
#define BB_CAP_REORDER_NS (2 * BB_NS_PER_S)
#define BB_CAP_HOLE_NS (200 * INT64_C(1000000))
#define BB_CAP_STREAMS 65536u
#define BB_CAP_PORTS_AUTO 0
#define BB_CAP_PORTS_ALWAYS 1
#define BB_CAP_PORTS_NEVER 2
/* The "#naming" metadata text (without '#') for a server naming mode:
 * "naming servers=auto", "naming servers=ports" or "naming servers=hosts". */
const char *bb_cap_naming(int server_ports);
#define BB_CAP_RSM_OWN 0
#define BB_CAP_RSM_LIBNIDS 1

/* Counters of a run (everything bbcap reports at exit). */
struct bb_cap_stats {
	uint64_t packets;           /* packets read */
	uint64_t bytes;             /* bytes on the wire (original lengths) */
	uint64_t truncated;         /* packets cut by the snap length */
	uint64_t link_other;        /* link layer or ethertype not IP (ARP, LLDP ...) */
	uint64_t link_unsupported;  /* link types bbcap does not parse */
	uint64_t ip_bad;            /* malformed IPv4/IPv6 headers */
	uint64_t ip_tso;            /* IPv4 super-frames with total length 0 (TSO) */
	uint64_t frags;             /* IPv4 and IPv6 fragments seen */
	uint64_t frag_reassembled;  /* datagrams rebuilt from them */
	uint64_t frag_dup;          /* exact duplicate fragments dropped */
	uint64_t frag_overlap;      /* overlapping fragments (RFC 5722: datagram dropped) */
	uint64_t frag_dropped;      /* fragments dropped: overlap, malformed, table full */
	uint64_t frag_timeout;      /* datagrams never completed in time */
	uint64_t ip_other;          /* IP protocols other than TCP and UDP */
	uint64_t tcp_streams;       /* TCP connections followed */
	uint64_t tcp_midstream;     /* of them, picked up without their handshake */
	uint64_t tcp_gaps;          /* holes skipped in TCP streams */
	uint64_t tcp_gap_bytes;     /* bytes in those holes */
	uint64_t tcp_reordered;     /* segments held and put back in order */
	uint64_t tcp_evicted;       /* streams pushed out of a full table or timed out */
	uint64_t tcp_overflow;      /* stream buffers that hit the memory bound */
	uint64_t udp_flows;
	uint64_t udp_evicted;       /* UDP flows ended early: the table was full */
	uint64_t messages;          /* trace records written */
	uint64_t late;              /* records written out of time order */
	uint64_t nids_warnings;     /* libnids complaints (bad headers, overlaps ...) */
	uint64_t dropped_kernel;    /* pcap_stats ps_drop (live) */
	uint64_t dropped_iface;     /* pcap_stats ps_ifdrop (live) */
	uint64_t received_kernel;   /* pcap_stats ps_recv (live) */
};

struct bb_cap;

/* Returns new (free with bb_cap_free) writing records to w (borrowed; may be
 * NULL until bb_cap_set_writer), or NULL with err set. Only one capture with
 * reassembly BB_CAP_RSM_LIBNIDS may exist at a time (libnids is global). */
struct bb_cap *bb_cap_new(const struct bb_cap_opts *opts, struct bb_writer *w,
                          struct bb_err *err);
void bb_cap_free(struct bb_cap *c);
/* Sets the writer records go to (borrowed), for a capture made with w NULL:
 * bbcap opens its output only once the sources and the filter are good.
 * Call before bb_cap_run. */
void bb_cap_set_writer(struct bb_cap *c, struct bb_writer *w);

/* Adds an offline source (pcap or pcapng; "-" is standard input). Several
 * sources are merged in time order. */
int bb_cap_add_file(struct bb_cap *c, const char *path, struct bb_err *err);
/* Opens a live interface (promiscuous, large buffer, no immediate mode) with
 * an optional BPF filter expression. */
int bb_cap_open_live(struct bb_cap *c, const char *iface, const char *filter,
                     struct bb_err *err);
/* Sets a BPF filter on every offline source added so far. */
int bb_cap_set_filter(struct bb_cap *c, const char *filter, struct bb_err *err);

/* Reads every source to its end (or until bb_cap_stop, -c or --duration),
 * decodes and writes. Returns 0 or a negative bb_status with err set.
 * tick (may be NULL) is called about once a second of wall time. */
int bb_cap_run(struct bb_cap *c, void (*tick)(void *arg), void *tick_arg, struct bb_err *err);
/* Asks a running capture to stop; async-signal-safe. */
void bb_cap_stop(struct bb_cap *c);
/* Ends every flow, writes what is pending and flushes. Call once after run. */
int bb_cap_finish(struct bb_cap *c, struct bb_err *err);

void bb_cap_get_stats(struct bb_cap *c, struct bb_cap_stats *st);
/* Per-decoder counters, indexed like the registry; borrowed. */
const struct bb_dec_stats *bb_cap_dec_stats(const struct bb_cap *c);
/* The "#capture ..." metadata text (without '#') for the current counters. */
size_t bb_cap_summary(struct bb_cap *c, char *buf, size_t cap);
/* Writes "libpcap version X, libnids 1.26" into buf; returns its length. */
size_t bb_cap_lib_versions(char *buf, size_t cap);

#endif
