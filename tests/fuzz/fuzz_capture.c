/* fuzz_capture.c - libFuzzer target: the whole pipeline (pcap file in, trace out) */
/* SPDX-License-Identifier: MIT */
/*
 * The input is a pcap or pcapng file. It goes through bbcap's in-place pcap
 * reader (libpcap for pcapng and at doubtful records), the link layers, IP
 * and fragment reassembly, the own TCP reassembly (and libnids' too for inputs
 * of odd size), every decoder, and the trace to /dev/null. Seeds:
 * ../shared/corpus/protocols and robustness. Without libFuzzer, main() replays
 * the files named on the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "capture/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char input_path[4096];

static void remove_input(void)
{
	unlink(input_path);
}

/* One temporary file per process (mkstemp in $TMPDIR), rewritten for each
 * input: libpcap reads a capture by name. */
static const char *input_file(void)
{
	if (!input_path[0]) {
		const char *dir = getenv("TMPDIR");
		snprintf(input_path, sizeof input_path, "%s/fuzz_capture_XXXXXX",
		         dir && *dir ? dir : "/tmp");
		int fd = mkstemp(input_path);
		if (fd < 0)
			abort();
		close(fd);
		atexit(remove_input);
	}
	return input_path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = input_file();
	struct bb_err err;
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	for (int e = 0; e < 1 + (int)(size & 1); e++) {
		struct bb_cap_opts o = {0};
		o.reassembly = e ? BB_CAP_RSM_LIBNIDS : BB_CAP_RSM_OWN;
		/* tok= and ctx= as bbcap writes them by default, but for inputs
		 * with bit 1 of their length set (--no-tokens) */
		o.tokens = !(size & 2);
		if (o.tokens)
			bb_tok_key_derive(&o.tok_key, "fuzz", 4);
		struct bb_writer *w = bb_writer_open("/dev/null", &err);
		struct bb_cap *c = w ? bb_cap_new(&o, w, &err) : NULL;
		if (c && bb_cap_add_file(c, path, &err) == 0) {
			bb_cap_run(c, NULL, NULL, &err);
			bb_cap_finish(c, &err);
		}
		bb_cap_free(c);
		bb_writer_close(w, NULL);
	}
	unlink(path);
	return 0;
}

#ifndef BB_LIBFUZZER
int main(int argc, char **argv)
{
	static uint8_t buf[1 << 24];
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, "fuzz_capture: error: %s: cannot open\n", argv[i]);
			return 1;
		}
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
	}
	return 0;
}
#endif
