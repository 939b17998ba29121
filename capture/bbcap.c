/* bbcap.c - capture live or from pcap/pcapng files, decode RPCs, write a bb trace */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

#define CAPTURE_LINE_WIDTH 1400

static struct bb_cap *g_cap;
static volatile sig_atomic_t g_usr1;

static void on_stop(int sig)
{
	(void)sig;
	if (g_cap)
		bb_cap_stop(g_cap);
}

static void on_usr1(int sig)
{
	(void)sig;
	g_usr1 = 1;
}

static void log_line(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "bbcap: %s\n", msg);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bbcap [options] (-r FILE ... | -i IFACE) [-w FILE] [BPF filter ...]\n"
	        "Capture traffic live or read pcap/pcapng files, decode RPC calls and returns,\n"
	        "and write a bb trace (one CALL/RET line per message).\n"
	        "\n"
	        "  -r, --read FILE          read a capture (\"-\" is standard input); repeatable,\n"
	        "                           files are merged in time order\n"
	        "  -i, --interface IFACE    capture live (promiscuous)\n"
	        "  -w, --write FILE         trace output (default \"-\", standard output)\n"
	        "  -B, --buffer-size MB     kernel buffer for -i (default 32)\n"
	        "  -s, --snaplen BYTES      bytes kept per packet for -i (default 262144)\n"
	        "  -c, --count N            stop after N packets\n"
	        "      --duration DUR       stop after DUR (\"30s\", \"5m\")\n"
	        "  -Z, --user USER          drop root privileges to USER after opening -i\n"
	        "      --server-ports       name servers \"ip:port\" (clients stay \"ip\")\n"
	        "      --names FILE         address-to-name map in hosts-file format\n"
	        "      --decode-as PORT=NAME  decode traffic on PORT with decoder NAME\n"
	        "      --no-decoder NAME    disable a decoder (\"generic\" included)\n"
	        "      --list-decoders      list the decoders and exit\n"
	        "      --reorder-window DUR hold records DUR to write them in time order (2s)\n"
	        "      --max-streams N      concurrent TCP streams (default 65536)\n"
	        "      --reassembly ENGINE  TCP reassembly: bbcap (default) or libnids\n"
	        "  -q, --quiet              no summary on standard error\n"
	        "  -v, --verbose            more detail in the summary; one line per malformed\n"
	        "                           message\n"
	        "  -h, --help               this help\n"
	        "      --version            versions of bbcap, libpcap and libnids\n"
	        "\n"
	        "SIGINT/SIGTERM stop, flush and summarise; SIGUSR1 prints the counters.\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "bbcap: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'bbcap --help' for more information.\n");
	return 2;
}

static void print_summary(struct bb_cap *c, int verbose)
{
	struct bb_cap_stats s;
	bb_cap_get_stats(c, &s);
	fprintf(stderr, "%llu packets captured\n", (unsigned long long)s.packets);
	if (s.received_kernel || s.dropped_kernel || s.dropped_iface) {
		fprintf(stderr, "%llu packets received by filter\n",
		        (unsigned long long)s.received_kernel);
		fprintf(stderr, "%llu packets dropped by kernel\n",
		        (unsigned long long)s.dropped_kernel);
		fprintf(stderr, "%llu packets dropped by interface\n",
		        (unsigned long long)s.dropped_iface);
	}
	fprintf(stderr,
	        "%llu TCP streams (%llu picked up mid-stream, %llu evicted), %llu UDP flows",
	        (unsigned long long)s.tcp_streams, (unsigned long long)s.tcp_midstream,
	        (unsigned long long)s.tcp_evicted, (unsigned long long)s.udp_flows);
	if (s.udp_evicted)
		fprintf(stderr, " (%llu evicted)", (unsigned long long)s.udp_evicted);
	fputc('\n', stderr);
	fprintf(stderr, "%llu TCP gaps (%llu bytes lost), %llu segments reordered\n",
	        (unsigned long long)s.tcp_gaps, (unsigned long long)s.tcp_gap_bytes,
	        (unsigned long long)s.tcp_reordered);
	fprintf(stderr, "%llu messages written", (unsigned long long)s.messages);
	if (s.late)
		fprintf(stderr, " (%llu out of time order)", (unsigned long long)s.late);
	fputc('\n', stderr);
	const struct bb_dec_stats *ds = bb_cap_dec_stats(c);
	for (size_t i = 0; i < bb_dec_count(); i++) {
		const struct bb_dec_stats *d = &ds[i];
		if (!d->flows)
			continue;
		fprintf(stderr,
		        "  %-8s %llu flows, %llu calls, %llu returns, %llu unmatched returns, "
		        "%llu malformed",
		        bb_dec_at(i)->name, (unsigned long long)d->flows,
		        (unsigned long long)d->calls, (unsigned long long)d->rets,
		        (unsigned long long)d->unmatched_ret, (unsigned long long)d->malformed);
		if (verbose)
			fprintf(stderr, ", %llu evicted, %llu duplicate calls, %llu resyncs",
			        (unsigned long long)d->evicted, (unsigned long long)d->dup_call,
			        (unsigned long long)d->resync);
		if (d->opaque)
			fprintf(stderr, ", %llu opaque (encrypted)", (unsigned long long)d->opaque);
		fputc('\n', stderr);
	}
	if (verbose)
		fprintf(stderr,
		        "  link: %llu non-IP, %llu unsupported; IP: %llu bad, %llu TSO super-frames, "
		        "%llu fragments "
		        "(%llu datagrams rebuilt, %llu duplicates, %llu overlapping, %llu dropped, "
		        "%llu timed out), "
		        "%llu other protocols; %llu truncated; %llu libnids warnings\n",
		        (unsigned long long)s.link_other, (unsigned long long)s.link_unsupported,
		        (unsigned long long)s.ip_bad, (unsigned long long)s.ip_tso,
		        (unsigned long long)s.frags,
		        (unsigned long long)s.frag_reassembled, (unsigned long long)s.frag_dup,
		        (unsigned long long)s.frag_overlap, (unsigned long long)s.frag_dropped,
		        (unsigned long long)s.frag_timeout,
		        (unsigned long long)s.ip_other, (unsigned long long)s.truncated,
		        (unsigned long long)s.nids_warnings);
}

struct tick_ctx {
	struct bb_cap *c;
	struct bb_writer *w;
	int verbose;
	struct bb_progress *progress; /* stderr is a terminal and not -q, or NULL */
};

/* The one-line status: packets, calls, returns, drops, gaps (tcpdump's
 * --print counters). */
static void live_status(struct tick_ctx *t)
{
	struct bb_cap_stats s;
	bb_cap_get_stats(t->c, &s);
	unsigned long long calls = 0, rets = 0;
	const struct bb_dec_stats *ds = bb_cap_dec_stats(t->c);
	for (size_t i = 0; i < bb_dec_count(); i++) {
		calls += ds[i].calls;
		rets += ds[i].rets;
	}
	char line[256];
	snprintf(line, sizeof line,
	         "%llu packets, %llu calls, %llu returns, %llu dropped by kernel, "
	         "%llu by interface, %llu TCP gaps",
	         (unsigned long long)s.packets, calls, rets, (unsigned long long)s.dropped_kernel,
	         (unsigned long long)s.dropped_iface, (unsigned long long)s.tcp_gaps);
	bb_progress_text(t->progress, line);
}

static void tick(void *arg)
{
	struct tick_ctx *t = arg;
	static time_t last;
	if (g_usr1) {
		g_usr1 = 0;
		print_summary(t->c, t->verbose);
	}
	time_t now = time(NULL);
	if (now != last) {
		last = now;
		bb_writer_flush(t->w, NULL);
		if (t->progress)
			live_status(t);
	}
}

/* Rewrites the padded "#capture" line of a regular output file in place. */
static int rewrite_capture(const char *path, const char *text, struct bb_err *err)
{
	char head[8192];
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	ssize_t n = pread(fd, head, sizeof head - 1, 0);
	if (n <= 0) {
		close(fd);
		return 0;
	}
	head[n] = '\0';
	char *at = strstr(head, "\n#capture ");
	if (!at) {
		close(fd);
		return 0;
	}
	at++;
	char *nl = strchr(at, '\n');
	if (!nl) {
		close(fd);
		return 0;
	}
	size_t width = (size_t)(nl - at);
	char line[CAPTURE_LINE_WIDTH + 64];
	int k = snprintf(line, sizeof line, "#%s", text);
	if (k >= (int)sizeof line)
		k = (int)sizeof line - 1;
	if (k < 0 || (size_t)k > width) {
		/* Does not fit: append it at the end instead. */
		int rc = 0;
		if (lseek(fd, 0, SEEK_END) < 0 || write(fd, line, (size_t)k) != (ssize_t)k ||
		    write(fd, "\n", 1) != 1) {
			bb_err_set(err, "%s: %s", path, strerror(errno));
			rc = -1;
		}
		close(fd);
		return rc;
	}
	memset(line + k, ' ', width - (size_t)k);
	int rc = 0;
	if (pwrite(fd, line, width, at - head) != (ssize_t)width) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	close(fd);
	return rc;
}

static int drop_root(const char *user)
{
	struct passwd *pw = getpwnam(user);
	if (!pw) {
		fprintf(stderr, "bbcap: error: -Z %s: no such user\n", user);
		return -1;
	}
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
	    setuid(pw->pw_uid) < 0) {
		fprintf(stderr, "bbcap: error: -Z %s: %s\n", user, strerror(errno));
		return -1;
	}
	return 0;
}

enum {
	OPT_DURATION = 256, OPT_SERVER_PORTS, OPT_NAMES, OPT_DECODE_AS, OPT_NO_DECODER,
	OPT_LIST, OPT_VERSION, OPT_REORDER, OPT_MAX_STREAMS, OPT_REASSEMBLY
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"read", required_argument, NULL, 'r'},
		{"interface", required_argument, NULL, 'i'},
		{"write", required_argument, NULL, 'w'},
		{"buffer-size", required_argument, NULL, 'B'},
		{"snaplen", required_argument, NULL, 's'},
		{"count", required_argument, NULL, 'c'},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"user", required_argument, NULL, 'Z'},
		{"server-ports", no_argument, NULL, OPT_SERVER_PORTS},
		{"names", required_argument, NULL, OPT_NAMES},
		{"decode-as", required_argument, NULL, OPT_DECODE_AS},
		{"no-decoder", required_argument, NULL, OPT_NO_DECODER},
		{"list-decoders", no_argument, NULL, OPT_LIST},
		{"reorder-window", required_argument, NULL, OPT_REORDER},
		{"max-streams", required_argument, NULL, OPT_MAX_STREAMS},
		{"reassembly", required_argument, NULL, OPT_REASSEMBLY},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	struct bb_cap_opts o;
	struct bb_err err;
	const char **files = NULL;
	size_t nfiles = 0;
	const char *iface = NULL, *out = "-", *user = NULL;
	int quiet = 0, verbose = 0, opt;
	char *end;

	memset(&o, 0, sizeof o);
	err.msg[0] = '\0';
	while ((opt = getopt_long(argc, argv, "+r:i:w:B:s:c:Z:qvh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			files = realloc(files, (nfiles + 1) * sizeof *files);
			if (!files)
				abort();
			files[nfiles++] = optarg;
			break;
		case 'i':
			iface = optarg;
			break;
		case 'w':
			out = optarg;
			break;
		case 'B':
			o.buffer_mb = (int)strtol(optarg, &end, 10);
			if (*end || o.buffer_mb <= 0 || o.buffer_mb > 65536)
				return bad_usage("-B: bad buffer size \"%s\" (megabytes)", optarg);
			break;
		case 's':
			o.snaplen = (int)strtol(optarg, &end, 10);
			if (*end || o.snaplen < 0 || o.snaplen > 262144)
				return bad_usage("-s: bad snap length \"%s\"", optarg);
			if (o.snaplen == 0)
				o.snaplen = 262144;
			break;
		case 'c':
			o.count = strtoull(optarg, &end, 10);
			if (*end || !o.count)
				return bad_usage("-c: bad count \"%s\"", optarg);
			break;
		case OPT_DURATION:
			if (bb_duration_parse(optarg, &o.duration_ns) < 0 || o.duration_ns <= 0)
				return bad_usage("--duration: bad duration \"%s\"", optarg);
			break;
		case 'Z':
			user = optarg;
			break;
		case OPT_SERVER_PORTS:
			o.server_ports = 1;
			break;
		case OPT_NAMES:
			o.names_file = optarg;
			break;
		case OPT_DECODE_AS:
			if (bb_dec_sel_decode_as(&o.sel, optarg, &err) < 0)
				return bad_usage("%s", err.msg);
			break;
		case OPT_NO_DECODER:
			if (bb_dec_sel_disable(&o.sel, optarg, &err) < 0)
				return bad_usage("%s", err.msg);
			break;
		case OPT_LIST:
			for (size_t i = 0; i < bb_dec_count(); i++) {
				const struct bb_decoder *d = bb_dec_at(i);
				printf("%-8s %s%s%s", d->name,
				       (d->transports & BB_TR_TCP) ? "tcp" : "",
				       d->transports == (BB_TR_TCP | BB_TR_UDP) ? "," : "",
				       (d->transports & BB_TR_UDP) ? "udp" : "");
				printf("%*s", d->transports == (BB_TR_TCP | BB_TR_UDP) ? 1 : 5, "");
				if (!d->ports[0])
					printf("%-22s", "(any)");
				else {
					char ports[64];
					int n = 0;
					for (int k = 0; k < 8 && d->ports[k]; k++)
						n += snprintf(ports + n, sizeof ports - (size_t)n, "%s%u",
						              k ? "," : "", d->ports[k]);
					printf("%-22s", ports);
				}
				printf(" %s\n", d->summary);
			}
			return 0;
		case OPT_REORDER:
			if (bb_duration_parse(optarg, &o.reorder_ns) < 0 || o.reorder_ns <= 0)
				return bad_usage("--reorder-window: bad duration \"%s\"", optarg);
			break;
		case OPT_REASSEMBLY:
			if (strcmp(optarg, "bbcap") == 0)
				o.reassembly = BB_CAP_RSM_OWN;
			else if (strcmp(optarg, "libnids") == 0)
				o.reassembly = BB_CAP_RSM_LIBNIDS;
			else
				return bad_usage("--reassembly: \"%s\" is neither bbcap nor libnids",
				                 optarg);
			break;
		case OPT_MAX_STREAMS: {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || v < 16 || v > (1u << 22))
				return bad_usage("--max-streams: bad count \"%s\" (16 to 4194304)", optarg);
			o.max_streams = (unsigned)v;
			break;
		}
		case 'q':
			quiet = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION: {
			char v[256];
			bb_cap_lib_versions(v, sizeof v);
			printf("bbcap %s (%s)\n", BB_VERSION, v);
			return 0;
		}
		default:
			fprintf(stderr, "Try 'bbcap --help' for more information.\n");
			return 2;
		}
	}
	if (!nfiles == !iface) {
		free(files);
		return bad_usage("%s", nfiles ? "-r and -i cannot be used together"
		                              : "nothing to read: give -r FILE or -i IFACE");
	}
	/* The BPF filter is the rest of the command line, as with tcpdump. */
	char *filter = NULL;
	size_t flen = 0;
	for (int i = optind; i < argc; i++)
		flen += strlen(argv[i]) + 1;
	if (flen) {
		filter = calloc(1, flen);
		if (!filter)
			abort();
		for (int i = optind; i < argc; i++) {
			if (i > optind)
				strcat(filter, " ");
			strcat(filter, argv[i]);
		}
	}

	if (verbose)
		o.log = log_line;
	int rc = 1;
	struct bb_writer *w = bb_writer_open(out, &err);
	struct bb_cap *c = NULL;
	if (!w) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		goto done;
	}
	c = bb_cap_new(&o, w, &err);
	if (!c) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		goto done;
	}
	if (iface) {
		if (bb_cap_open_live(c, iface, filter, &err) < 0) {
			fprintf(stderr, "bbcap: error: %s\n", err.msg);
			goto done;
		}
		if (user && drop_root(user) < 0)
			goto done;
	} else {
		for (size_t i = 0; i < nfiles; i++) {
			if (bb_cap_add_file(c, files[i], &err) < 0) {
				fprintf(stderr, "bbcap: error: %s\n", err.msg);
				goto done;
			}
		}
		if (filter && bb_cap_set_filter(c, filter, &err) < 0) {
			fprintf(stderr, "bbcap: error: %s\n", err.msg);
			rc = 2;
			goto done;
		}
	}

	char src[1024], v[256];
	int sn = snprintf(src, sizeof src, "source bbcap");
	if (iface)
		sn += snprintf(src + sn, sizeof src - (size_t)sn, " -i %s", iface);
	for (size_t i = 0; i < nfiles && sn < (int)sizeof src - 64; i++)
		sn += snprintf(src + sn, sizeof src - (size_t)sn, " -r %s", files[i]);
	bb_cap_lib_versions(v, sizeof v);
	snprintf(src + sn, sizeof src - (size_t)sn, " (%s)", v);
	char capline[CAPTURE_LINE_WIDTH + 1];
	int regular = 0;
	struct stat sb;
	/* access(): after -Z the file, opened as root, may not be ours to reopen. */
	if (strcmp(out, "-") != 0 && stat(out, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(out, R_OK | W_OK) == 0)
		regular = 1;
	bb_writer_meta(w, src, NULL);
	if (regular) {
		/* Rewritten in place at the end with the final counts. */
		int k = snprintf(capline, sizeof capline, "capture pending");
		memset(capline + k, ' ', CAPTURE_LINE_WIDTH - (size_t)k - 1);
		capline[CAPTURE_LINE_WIDTH - 1] = '\0';
		bb_writer_meta(w, capline, NULL);
	}
	bb_writer_flush(w, NULL);

	g_cap = c;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	struct tick_ctx tc = {c, w, verbose,
	                      !quiet && isatty(2) ? bb_progress_new(stderr, "bbcap") : NULL};
	int run_rc = bb_cap_run(c, tick, &tc, &err);
	bb_progress_free(tc.progress);
	if (run_rc < 0) {
		/* A damaged file ends the read there; what came before stands. A
		 * failing interface is an error (exit 1), said as one. */
		fprintf(stderr, "bbcap: %s: %s\n", iface ? "error" : "warning", err.msg);
	}
	int fin_rc = bb_cap_finish(c, &err);
	bb_cap_summary(c, capline, sizeof capline);
	if (!regular)
		bb_writer_meta(w, capline, NULL); /* a pipe cannot be rewritten: at the end */
	/* Close even when finishing failed, so the writer is freed; the first
	 * error is the one reported. */
	int close_rc = bb_writer_close(w, fin_rc < 0 ? NULL : &err);
	w = NULL;
	if (fin_rc < 0 || close_rc < 0) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		goto done;
	}
	if (regular && rewrite_capture(out, capline, &err) < 0) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		goto done;
	}
	if (!quiet)
		print_summary(c, verbose);
	/* A damaged file's end is a warning; a failing interface is an error. */
	rc = run_rc < 0 && (iface || run_rc != BB_ERR_IO) ? 1 : 0;
done:
	g_cap = NULL;
	bb_cap_free(c);
	if (w)
		bb_writer_close(w, NULL);
	free(filter);
	free(files);
	return rc;
}
