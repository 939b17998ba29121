/* fuzz_mtconfig.c - libFuzzer target: maketrace's config reader, then a short generation */
/* SPDX-License-Identifier: MIT */
/*
 * The input is a config file (JSON, docs/maketrace.md). When it parses, the
 * generator runs with tight overrides (at most 200 messages, 10 simulated
 * seconds, per-node statistics on) into memory, and the trace it wrote must
 * read back strictly with exactly the messages the summary says were written:
 * anything else is a bug in the generator or the writer, so abort().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maketrace/maketrace.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MESSAGES 200
#define FUZZ_DURATION_NS (10 * BB_NS_PER_S)

static void check_output(const char *buf, size_t len, const struct bb_mt_summary *s)
{
	struct bb_err err;
	struct bb_reader *r = bb_reader_mem(buf, len, "<maketrace>", NULL, &err);
	if (!r) {
		fprintf(stderr, "fuzz_mtconfig: error: generated trace does not open: %s\n",
		        err.msg);
		abort();
	}
	struct bb_rec rec;
	uint64_t n = 0;
	int rc;
	while ((rc = bb_reader_next(r, &rec, &err)) == 1)
		n++;
	bb_reader_free(r);
	if (rc != 0 || n != s->written) {
		fprintf(
		    stderr,
		    "fuzz_mtconfig: error: generated trace reads back %llu records, summary says "
		    "%llu (%d: %s)\n",
		    (unsigned long long)n, (unsigned long long)s->written, rc, rc ? err.msg : "");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bb_err err;
	struct bb_mt_config *cfg = NULL;
	if (bb_mt_config_parse((const char *)data, size, "<fuzz>", &cfg, &err) != 0)
		return 0;
	if (!cfg)
		abort();
	/* The accessors, as maketrace's --list and summary use them. */
	(void)bb_mt_config_seed(cfg);
	for (uint32_t i = 0; i < bb_mt_config_nnodes(cfg); i++)
		if (!bb_mt_config_node(cfg, i))
			abort();
	for (uint32_t i = 0; i < bb_mt_config_ntracelets(cfg); i++)
		if (!bb_mt_config_tracelet(cfg, i))
			abort();

	struct bb_mt_opts o;
	memset(&o, 0, sizeof o);
	o.set_messages = 1;
	o.messages = FUZZ_MESSAGES;
	o.set_duration = 1;
	o.duration_ns = FUZZ_DURATION_NS;
	o.stats = 1;
	struct bb_mt_gen *g = bb_mt_gen_new(cfg, &o, &err);
	if (g) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&buf, &len);
		if (!mf)
			abort();
		struct bb_writer *w = bb_writer_fopen(mf, "<mem>", &err);
		int rc = bb_mt_gen_run(g, w, &err);
		if (bb_writer_close(w, &err) != 0)
			abort();
		fclose(mf);
		struct bb_mt_summary s;
		bb_mt_gen_summary(g, &s);
		if (s.generated > FUZZ_MESSAGES || s.written > s.generated)
			abort();
		for (uint32_t i = 0; i < s.ntracelets; i++)
			(void)s.tracelet_names[i];
		if (rc == 0)
			check_output(buf, len, &s);
		free(buf);
		bb_mt_gen_free(g);
	}
	bb_mt_config_free(cfg);
	return 0;
}
