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
	o->tmp = bb_xmalloc(n + 16);
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

/* The tok=/ctx= key from --token-salt, from the first input file, or from
 * 16 random bytes; meta gets the "#tokens" text that says which (never the
 * salt). Returns 0, or -1 when no randomness. */
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

static int print_version(void)
{
	char v[256], z[128];
	bb_cap_lib_versions(v, sizeof v);
	bb_tio_lib_versions(z, sizeof z);
	printf("bbcap %s (%s, %s)\n", BB_VERSION, v, z);
	return 0;
}

/* The command line, parsed. */
struct args {
	struct bb_cap_opts o;
	const char **files;         /* -r, in order (owned array, borrowed strings) */
	size_t nfiles;
	const char *iface, *out, *user, *salt;
	int quiet, verbose, no_tokens;
	char *filter;               /* the BPF expression (owned), or NULL */
};

/* The options that set a capture option (struct bb_cap_opts). Returns -1 to
 * go on, else the exit status. */
static int cap_option(struct bb_cap_opts *o, int opt, const char *arg)
{
	struct bb_err err;
	char *end;
	switch (opt) {
	case 'B':
		o->buffer_mb = (int)strtol(arg, &end, 10);
		if (*end || o->buffer_mb <= 0 || o->buffer_mb > 65536)
			return bb_usage_error("bbcap", "-B: bad buffer size \"%s\" (megabytes)", arg);
		return -1;
	case 's':
		o->snaplen = (int)strtol(arg, &end, 10);
		if (*end || o->snaplen < 0 || o->snaplen > 262144)
			return bb_usage_error("bbcap", "-s: bad snap length \"%s\"", arg);
		if (o->snaplen == 0)
			o->snaplen = 262144;
		return -1;
	case 'c':
		o->count = strtoull(arg, &end, 10);
		if (*end || !o->count)
			return bb_usage_error("bbcap", "-c: bad count \"%s\"", arg);
		return -1;
	case OPT_DURATION:
		if (bb_duration_parse(arg, &o->duration_ns) < 0 || o->duration_ns <= 0)
			return bb_usage_error("bbcap", "--duration: bad duration \"%s\"", arg);
		return -1;
	case OPT_REORDER:
		if (bb_duration_parse(arg, &o->reorder_ns) < 0 || o->reorder_ns <= 0)
			return bb_usage_error("bbcap", "--reorder-window: bad duration \"%s\"", arg);
		return -1;
	case OPT_DECODE_AS:
		if (bb_dec_sel_decode_as(&o->sel, arg, &err) < 0)
			return bb_usage_error("bbcap", "%s", err.msg);
		return -1;
	case OPT_NO_DECODER:
		if (bb_dec_sel_disable(&o->sel, arg, &err) < 0)
			return bb_usage_error("bbcap", "%s", err.msg);
		return -1;
	case OPT_REASSEMBLY:
		if (strcmp(arg, "bbcap") == 0)
			o->reassembly = BB_CAP_RSM_OWN;
		else if (strcmp(arg, "libnids") == 0)
			o->reassembly = BB_CAP_RSM_LIBNIDS;
		else
			return bb_usage_error("bbcap",
			                      "--reassembly: \"%s\" is neither bbcap nor libnids", arg);
		return -1;
	case OPT_MAX_STREAMS: {
		unsigned long v = strtoul(arg, &end, 10);
		if (*end || v < 16 || v > (1u << 22))
			return bb_usage_error("bbcap", "--max-streams: bad count \"%s\" (16 to 4194304)",
			                      arg);
		o->max_streams = (unsigned)v;
		return -1;
	}
	case OPT_SERVER_PORTS:
		o->server_ports = BB_CAP_PORTS_ALWAYS;
		return -1;
	case OPT_BY_HOST:
		o->server_ports = BB_CAP_PORTS_NEVER;
		return -1;
	case OPT_NAMES:
		o->names_file = arg;
		return -1;
	case OPT_FIXED_HOLD:
		o->fixed_hold = 1;
		return -1;
	default:
		fprintf(stderr, "Try 'bbcap --help' for more information.\n");
		return 2;
	}
}

/* One option of the command line. Returns -1 to go on, else the exit status. */
static int option(struct args *a, int opt, const char *arg)
{
	switch (opt) {
	case 'r':
		a->files = bb_xrealloc(a->files, (a->nfiles + 1) * sizeof *a->files);
		a->files[a->nfiles++] = arg;
		return -1;
	case 'i':
		a->iface = arg;
		return -1;
	case 'w':
		a->out = arg;
		return -1;
	case 'Z':
		a->user = arg;
		return -1;
	case OPT_TOKEN_SALT:
		if (!*arg)
			return bb_usage_error("bbcap", "--token-salt: empty salt");
		a->salt = arg;
		return -1;
	case OPT_NO_TOKENS:
		a->no_tokens = 1;
		return -1;
	case 'q':
		a->quiet = 1;
		return -1;
	case 'v':
		a->verbose = 1;
		return -1;
	case 'n':
		return -1; /* bbcap never resolves names: node names are addresses */
	case OPT_LIST:
		return bb_dec_list(stdout) < 0 ? 1 : 0;
	case 'h':
		usage(stdout);
		return 0;
	case 'V':
		return print_version();
	case 'D':
		return list_interfaces();
	default:
		return cap_option(&a->o, opt, arg);
	}
}

/* The BPF filter: the rest of the command line, as with tcpdump. Returns
 * new (caller frees), or NULL when there is none. */
static char *join_filter(int argc, char **argv, int first)
{
	size_t flen = 0;
	for (int i = first; i < argc; i++)
		flen += strlen(argv[i]) + 1;
	if (!flen)
		return NULL;
	char *filter = bb_xcalloc(1, flen);
	for (int i = first; i < argc; i++) {
		if (i > first)
			strcat(filter, " ");
		strcat(filter, argv[i]);
	}
	return filter;
}

/* Parses argv into a. Returns -1 to go on, else the exit status (a holds
 * what it must free either way). */
static int parse_args(int argc, char **argv, struct args *a)
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
	int opt, rc;
	opterr = 0; /* getopt's own complaints in the one usage-error format */
	while ((opt = getopt_long(argc, argv, "+:r:i:w:B:s:c:Z:DnqvhV", longopts, NULL)) != -1) {
		if (opt == '?' || opt == ':')
			return bb_usage_getopt("bbcap", opt, optopt, argv[optind - 1]);
		if ((rc = option(a, opt, optarg)) >= 0)
			return rc;
	}
	if (a->salt && a->no_tokens)
		return bb_usage_error("bbcap", "--token-salt and --no-tokens cannot be used together");
	if (!a->nfiles == !a->iface)
		return bb_usage_error("bbcap", "%s",
		                      a->nfiles ? "-r and -i cannot be used together"
		                                : "nothing to read: give -r FILE or -i IFACE");
	a->filter = join_filter(argc, argv, optind);
	if (a->verbose)
		a->o.log = log_line;
	return -1;
}

/* Opens the interface or the files, with the filter. Returns -1 to go on,
 * else the exit status (the message said). */
static int open_sources(struct bb_cap *c, const struct args *a)
{
	struct bb_err err;
	if (a->iface) {
		int orc = bb_cap_open_live(c, a->iface, a->filter, &err);
		if (orc < 0) {
			fprintf(stderr, "bbcap: error: %s\n", err.msg);
			return orc == BB_ERR_ARG ? 2 : 1;
		}
		return -1;
	}
	for (size_t i = 0; i < a->nfiles; i++) {
		if (bb_cap_add_file(c, a->files[i], &err) < 0) {
			fprintf(stderr, "bbcap: error: %s\n", err.msg);
			return 1;
		}
	}
	if (a->filter && bb_cap_set_filter(c, a->filter, &err) < 0) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		return 2;
	}
	return -1;
}

/* The metadata lines at the top of the trace: #source, #naming, #tokens. */
static void write_header(struct bb_writer *w, const struct args *a, const char *tokline)
{
	char src[1024], v[256];
	int sn = snprintf(src, sizeof src, "source bbcap");
	if (a->iface)
		sn += snprintf(src + sn, sizeof src - (size_t)sn, " -i %s", a->iface);
	for (size_t i = 0; i < a->nfiles && sn < (int)sizeof src - 64; i++)
		sn += snprintf(src + sn, sizeof src - (size_t)sn, " -r %s", a->files[i]);
	bb_cap_lib_versions(v, sizeof v);
	snprintf(src + sn, sizeof src - (size_t)sn, " (%s)", v);
	bb_writer_meta(w, src, NULL);
	bb_writer_meta(w, bb_cap_naming(a->o.server_ports), NULL);
	bb_writer_meta(w, tokline, NULL);
	bb_writer_flush(w, NULL);
}

static void install_signals(struct bb_cap *c)
{
	g_cap = c;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Runs the capture into w (taken: closed here) and renames the output into
 * place. Returns the exit status. */
static int capture(struct bb_cap *c, struct bb_writer *w, struct output *outf,
                   const struct args *a)
{
	struct bb_err err;
	install_signals(c);
	struct tick_ctx tc = {c, w, a->verbose,
	                      !a->quiet && isatty(2) ? bb_progress_new(stderr, "bbcap") : NULL};
	int run_rc = bb_cap_run(c, tick, &tc, &err);
	bb_progress_free(tc.progress);
	if (run_rc < 0) {
		/* A damaged file ends the read there; what came before stands. A
		 * failing interface is an error (exit 1), said as one. */
		fprintf(stderr, "bbcap: %s: %s\n", a->iface ? "error" : "warning", err.msg);
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
	/* Renamed into place even after a write error: what was written (whole
	 * lines, the disk being full) is the capture, and is said to be cut. */
	struct bb_err rerr;
	int ren_rc = output_done(outf, 1, &rerr);
	if (fin_rc < 0 || close_rc < 0)
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
	if (ren_rc < 0)
		fprintf(stderr, "bbcap: error: %s\n", rerr.msg);
	if (fin_rc < 0 || close_rc < 0 || ren_rc < 0)
		return 1;
	if (!a->quiet)
		print_summary(c, a->verbose);
	/* A damaged file's end is a warning; a failing interface is an error. */
	return run_rc < 0 && (a->iface || run_rc != BB_ERR_IO) ? 1 : 0;
}

/* Opens the sources, then the output (a typo in either leaves -w alone),
 * drops root, writes the header and runs. Returns the exit status. */
static int run(struct args *a)
{
	struct bb_err err;
	char tokline[64];
	const char *first = a->iface || !a->nfiles ? NULL : a->files[0];
	if (token_key(&a->o, a->salt, a->no_tokens, first, tokline, sizeof tokline) < 0)
		return 1;
	struct bb_cap *c = bb_cap_new(&a->o, NULL, &err);
	if (!c) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		return 1;
	}
	int rc = open_sources(c, a);
	if (rc >= 0) {
		bb_cap_free(c);
		return rc;
	}
	struct output outf = {a->out, NULL};
	/* With -Z the file is written in place, opened as root, as tcpdump does:
	 * USER may not be allowed to rename in its directory. */
	struct bb_writer *w = output_open(&outf, a->out, a->iface && a->user, &err);
	if (!w) {
		fprintf(stderr, "bbcap: error: %s\n", err.msg);
		free(outf.tmp);
		bb_cap_free(c);
		return 1;
	}
	bb_cap_set_writer(c, w);
	if (a->iface && a->user && drop_root(a->user) < 0) {
		bb_writer_close(w, NULL);
		output_done(&outf, 0, NULL);
		bb_cap_free(c);
		return 1;
	}
	write_header(w, a, tokline);
	rc = capture(c, w, &outf, a);
	g_cap = NULL;
	bb_cap_free(c);
	free(outf.tmp);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a;
	memset(&a, 0, sizeof a);
	a.out = "-";
	int rc = parse_args(argc, argv, &a);
	if (rc < 0)
		rc = run(&a);
	free(a.filter);
	free(a.files);
	return rc;
}
