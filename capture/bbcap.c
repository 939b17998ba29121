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
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "capture/capture.h"
#include "traceio/traceio.h"

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
	        "  -D, --list-interfaces    list the interfaces -i can capture on, and exit\n"
	        "  -w, --write FILE         trace output (default \"-\", standard output)\n"
	        "  -B, --buffer-size MB     kernel buffer for -i (default 32)\n"
	        "  -s, --snaplen BYTES      bytes kept per packet for -i (default 262144)\n"
	        "  -c, --count N            stop after N packets\n"
	        "      --duration DUR       stop after DUR (\"30s\", \"5m\")\n"
	        "  -Z, --user USER          drop root privileges to USER after opening -i\n"
	        "      --server-ports       name every server \"ip:port\" (clients stay \"ip\");\n"
	        "                           default: \"ip:port\" on the loopback and when a\n"
	        "                           host calls its own address, else \"ip\"\n"
	        "      --by-host            name every server \"ip\" (the naming before bb 0.2)\n"
	        "  -n, --no-resolve         no name resolution (what bbcap always does; for\n"
	        "                           tcpdump's users)\n"
	        "      --names FILE         address-to-name map in hosts-file format\n"
	        "      --decode-as PORT=NAME  decode traffic on PORT with decoder NAME\n"
	        "      --no-decoder NAME    disable a decoder (\"generic\" included)\n"
	        "      --list-decoders      list the decoders and exit\n"
	        "      --reorder-window DUR longest a record waits for slower messages (2s)\n"
	        "      --fixed-hold         every record waits the whole window (for comparisons)\n"
	        "      --max-streams N      concurrent TCP streams (default 65536)\n"
	        "      --reassembly ENGINE  TCP reassembly: bbcap (default) or libnids\n"
	        "      --token-salt STRING  key of the tok= and ctx= hashes (default: random\n"
	        "                           per run); the same salt links several traces\n"
	        "      --no-tokens          write no tok= (content tokens) nor ctx= (context)\n"
	        "  -q, --quiet              no summary on standard error\n"
	        "  -v, --verbose            more detail in the summary; one line per malformed\n"
	        "                           message\n"
	        "  -h, --help               this help\n"
	        "  -V, --version            versions of bbcap, libpcap, libnids, zlib and zstd\n"
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
		/* as in the #capture line: calls no return answered */
		uint64_t answered = d->rets > d->unmatched_ret ? d->rets - d->unmatched_ret : 0;
		fprintf(stderr,
		        "  %-8s %llu flows, %llu calls, %llu returns, %llu unanswered calls, "
		        "%llu unmatched returns, %llu malformed",
		        bb_dec_at(i)->name, (unsigned long long)d->flows,
		        (unsigned long long)d->calls, (unsigned long long)d->rets,
		        (unsigned long long)(d->calls > answered ? d->calls - answered : 0),
		        (unsigned long long)d->unmatched_ret, (unsigned long long)d->malformed);
		if (verbose)
			fprintf(stderr, ", %llu evicted, %llu duplicate calls, %llu resyncs",
			        (unsigned long long)d->evicted, (unsigned long long)d->dup_call,
			        (unsigned long long)d->resync);
		if (d->opaque)
			fprintf(stderr, ", %llu opaque (encrypted)", (unsigned long long)d->opaque);
		if (d->queue_full)
			fprintf(stderr, ", %llu calls unpaired (reply queue full)",
			        (unsigned long long)d->queue_full);
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

/* The output file: written under a temporary name in the same directory and
 * renamed over the -w name at the end, so that an existing trace is never
 * emptied by a run that fails, and a crash leaves the records so far in the
 * temporary file. Standard output and what is not a regular file (a FIFO,
 * /dev/null) are written directly, and so is the -w file of a capture that
 * drops root (-Z). */
struct output {
	const char *path;       /* the -w name */
	char *tmp;              /* the temporary name, or NULL when written directly */
};

static int output_done(struct output *o, int keep, struct bb_err *err);

static struct bb_writer *output_open(struct output *o, const char *path, int in_place,
                                     struct bb_err *err)
{
	struct stat sb;
	o->path = path;
	o->tmp = NULL;
	int exists = stat(path, &sb) == 0;
	if (strcmp(path, "-") == 0 || (exists && !S_ISREG(sb.st_mode)) || in_place)
		return bb_tio_writer_open(path, err);
	size_t n = strlen(path);
	o->tmp = malloc(n + 16);
	if (!o->tmp)
		abort();
	memcpy(o->tmp, path, n);
	memcpy(o->tmp + n, ".partial.XXXXXX", 16);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		/* No file can be made next to it (a directory that is not ours,
		 * a file that is): write it in place, now that the run can start. */
		free(o->tmp);
		o->tmp = NULL;
		return bb_tio_writer_open(path, err);
	}
	/* The mode a new file would get (mkstemp makes it 0600), or the old one's. */
	mode_t um = umask(0);
	umask(um);
	if (fchmod(fd, exists ? sb.st_mode & 07777 : 0666 & ~um) < 0) {
		/* not fatal: the trace is still written */
	}
	/* Messages name the -w file: the temporary one is an implementation
	 * detail. A ".gz" or ".zst" name gets a compressed trace. */
	enum bb_fmt f = bb_fmt_of_name(path);
	if (f == BB_FMT_TEXT)
		return bb_writer_fdopen(fd, path, err);
	FILE *fp = bb_tio_fdopen_write(fd, f, path, err);
	if (fp)
		return bb_writer_fopen_own(fp, path, err);
	output_done(o, 0, NULL);
	return NULL;
}

/* Renames the temporary file over the -w name (keep 1), or removes it
 * (keep 0: nothing was captured because the run could not start). */
static int output_done(struct output *o, int keep, struct bb_err *err)
{
	int rc = 0;
	if (!o->tmp)
		return 0;
	if (!keep)
		unlink(o->tmp);
	else if (rename(o->tmp, o->path) < 0) {
		bb_err_set(err, "%s: cannot rename the trace into place: %s; it is in %s", o->path,
		           strerror(errno), o->tmp);
		rc = -1;
	}
	free(o->tmp);
	o->tmp = NULL;
	return rc;
}

/* -D: the interfaces libpcap can open, numbered, as tcpdump -D lists them. */
static int list_interfaces(void)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_if_t *all = NULL;
	eb[0] = '\0';
	if (pcap_findalldevs(&all, eb) < 0) {
		fprintf(stderr, "bbcap: error: cannot list interfaces: %s\n", eb);
		return 1;
	}
	int i = 1;
	for (pcap_if_t *d = all; d; d = d->next, i++) {
		printf("%d.%s", i, d->name);
		if (d->description)
			printf(" (%s)", d->description);
		printf(" [%s%s%s]\n", (d->flags & PCAP_IF_UP) ? "Up" : "Down",
		       (d->flags & PCAP_IF_RUNNING) ? ", Running" : "",
		       (d->flags & PCAP_IF_LOOPBACK) ? ", Loopback" : "");
	}
	pcap_freealldevs(all);
	return 0;
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
	OPT_LIST, OPT_VERSION, OPT_BY_HOST, OPT_REORDER, OPT_FIXED_HOLD, OPT_MAX_STREAMS,
	OPT_REASSEMBLY, OPT_TOKEN_SALT, OPT_NO_TOKENS
};

/* The tok=/ctx= key from --token-salt, or from 16 random bytes; "#tokens"
 * says which (never the salt). Returns 0, or -1 when no randomness. */
/* The default salt of a capture read from files: the first 64 KiB of the
 * first file, so that the same capture gives the same trace (as tcpdump -r
 * does) while whoever holds only the trace cannot rebuild the key to test
 * guesses of the hashed values. Returns 0 when the file cannot be read (the
 * key is then random; reading the file fails later with its own message). */
static int salt_from_file(struct bb_cap_opts *o, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? NULL : fopen(path, "rb");
	if (!f)
		return 0;
	static uint8_t buf[65536];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if (n == 0)
		return 0;
	bb_tok_key_derive(&o->tok_key, buf, n);
	return 1;
}

static int token_key(struct bb_cap_opts *o, const char *salt, int off, const char *file,
                     char *meta, size_t cap)
{
	if (off) {
		snprintf(meta, cap, "tokens off");
		return 0;
	}
	o->tokens = 1;
	if (salt) {
		bb_tok_key_derive(&o->tok_key, salt, strlen(salt));
		snprintf(meta, cap, "tokens salt=given");
		return 0;
	}
	if (file && salt_from_file(o, file)) {
		snprintf(meta, cap, "tokens salt=input");
		return 0;
	}
	uint8_t rnd[16];
	size_t got = 0;
	while (got < sizeof rnd) {
		ssize_t k = getrandom(rnd + got, sizeof rnd - got, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fprintf(stderr, "bbcap: error: getrandom: %s\n", strerror(errno));
			return -1;
		}
		got += (size_t)k;
	}
	bb_tok_key_derive(&o->tok_key, rnd, sizeof rnd);
	memset(rnd, 0, sizeof rnd);
	snprintf(meta, cap, "tokens salt=random");
	return 0;
}

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
		{"by-host", no_argument, NULL, OPT_BY_HOST},
		{"names", required_argument, NULL, OPT_NAMES},
		{"decode-as", required_argument, NULL, OPT_DECODE_AS},
		{"no-decoder", required_argument, NULL, OPT_NO_DECODER},
		{"list-decoders", no_argument, NULL, OPT_LIST},
		{"reorder-window", required_argument, NULL, OPT_REORDER},
		{"fixed-hold", no_argument, NULL, OPT_FIXED_HOLD},
		{"max-streams", required_argument, NULL, OPT_MAX_STREAMS},
		{"reassembly", required_argument, NULL, OPT_REASSEMBLY},
		{"token-salt", required_argument, NULL, OPT_TOKEN_SALT},
		{"no-tokens", no_argument, NULL, OPT_NO_TOKENS},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{"list-interfaces", no_argument, NULL, 'D'},
		{"no-resolve", no_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	struct bb_cap_opts o;
	struct bb_err err;
	const char **files = NULL;
	size_t nfiles = 0;
	const char *iface = NULL, *out = "-", *user = NULL, *salt = NULL;
	int quiet = 0, verbose = 0, no_tokens = 0, opt;
	char *end;

	memset(&o, 0, sizeof o);
	err.msg[0] = '\0';
	while ((opt = getopt_long(argc, argv, "+r:i:w:B:s:c:Z:DnqvhV", longopts, NULL)) != -1) {
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
			o.server_ports = BB_CAP_PORTS_ALWAYS;
			break;
		case OPT_BY_HOST:
			o.server_ports = BB_CAP_PORTS_NEVER;
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
			return bb_dec_list(stdout) < 0 ? 1 : 0;
		case OPT_FIXED_HOLD:
			o.fixed_hold = 1;
			break;
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
		case OPT_TOKEN_SALT:
			if (!*optarg)
				return bad_usage("--token-salt: %sempty salt", "");
			salt = optarg;
			break;
		case OPT_NO_TOKENS:
			no_tokens = 1;
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
		case 'V': {
			char v[256], z[128];
			bb_cap_lib_versions(v, sizeof v);
			bb_tio_lib_versions(z, sizeof z);
			printf("bbcap %s (%s, %s)\n", BB_VERSION, v, z);
			return 0;
		}
		case 'D':
			return list_interfaces();
		case 'n':
			break; /* bbcap never resolves names: node names are addresses */
		default:
			fprintf(stderr, "Try 'bbcap --help' for more information.\n");
			return 2;
		}
	}
	if (salt && no_tokens) {
		free(files);
		return bad_usage("%s", "--token-salt and --no-tokens cannot be used together");
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
	char tokline[64];
	if (token_key(&o, salt, no_tokens, iface || !nfiles ? NULL : files[0], tokline,
	              sizeof tokline) < 0) {
		free(filter);
		free(files);
		return 1;
	}
	struct bb_writer *w = NULL;
	struct output outf = {out, NULL};
	/* The sources and the filter first: a typo in either leaves -w alone. */
	struct bb_cap *c = bb_cap_new(&o, NULL, &err);
	if (!c) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		goto done;
	}
	if (iface) {
		int orc = bb_cap_open_live(c, iface, filter, &err);
		if (orc < 0) {
			fprintf(stderr, "bbcap: error: %s\n", err.msg);
			rc = orc == BB_ERR_ARG ? 2 : 1;
			goto done;
		}
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
	/* With -Z the file is written in place, opened as root, as tcpdump does:
	 * USER may not be allowed to rename in its directory. */
	w = output_open(&outf, out, iface && user, &err);
	if (!w) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		goto done;
	}
	bb_cap_set_writer(c, w);
	if (iface && user && drop_root(user) < 0) {
		bb_writer_close(w, NULL);
		w = NULL;
		output_done(&outf, 0, NULL);
		goto done;
	}

	char src[1024], v[256];
	int sn = snprintf(src, sizeof src, "source bbcap");
	if (iface)
		sn += snprintf(src + sn, sizeof src - (size_t)sn, " -i %s", iface);
	for (size_t i = 0; i < nfiles && sn < (int)sizeof src - 64; i++)
		sn += snprintf(src + sn, sizeof src - (size_t)sn, " -r %s", files[i]);
	bb_cap_lib_versions(v, sizeof v);
	snprintf(src + sn, sizeof src - (size_t)sn, " (%s)", v);
	bb_writer_meta(w, src, NULL);
	bb_writer_meta(w, bb_cap_naming(o.server_ports), NULL);
	bb_writer_meta(w, tokline, NULL);
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
	/* The counts go last, when they are known (the trace is written as it
	 * goes, so nothing before it is rewritten). */
	char capline[4096];
	bb_cap_summary(c, capline, sizeof capline);
	bb_writer_meta(w, capline, NULL);
	/* Close even when finishing failed, so the writer is freed; the first
	 * error is the one reported. */
	int close_rc = bb_writer_close(w, fin_rc < 0 ? NULL : &err);
	w = NULL;
	/* Renamed into place even after a write error: what was written (whole
	 * lines, the disk being full) is the capture, and is said to be cut. */
	struct bb_err rerr;
	int ren_rc = output_done(&outf, 1, &rerr);
	if (fin_rc < 0 || close_rc < 0) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		if (ren_rc < 0)
			fprintf(stderr, "bbcap: error: %s\n", rerr.msg);
		goto done;
	}
	if (ren_rc < 0) {
		fprintf(stderr, "bbcap: error: %s\n", rerr.msg);
		goto done;
	}
	if (!quiet)
		print_summary(c, verbose);
	/* A damaged file's end is a warning; a failing interface is an error. */
	rc = run_rc < 0 && (iface || run_rc != BB_ERR_IO) ? 1 : 0;
done:
	g_cap = NULL;
	bb_cap_free(c);
	if (w) {
		bb_writer_close(w, NULL);
		output_done(&outf, 0, NULL);
	}
	free(outf.tmp);
	free(filter);
	free(files);
	return rc;
}
