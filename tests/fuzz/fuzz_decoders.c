/* fuzz_decoders.c - libFuzzer target: every decoder on arbitrary bytes, split and gapped */
/* SPDX-License-Identifier: MIT */
/*
 * Built with -DBB_FUZZ_DECODER="NAME" it fuzzes that decoder alone (the
 * fuzz_dec_NAME targets of tests/fuzz/decoders.cmake) and byte 0 picks only
 * the transport (odd: UDP).
 *
 * Input: byte 0 picks the decoder and transport, byte 1 the split pattern; the
 * rest is the payload, fed as TCP (in both directions, in pieces, with a gap
 * in the middle) or as UDP datagrams. Without libFuzzer (BB_FUZZ off), main()
 * replays the files named on the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"

static int64_t t_at(void *arg, int dir, uint64_t pos)
{
	(void)arg;
	return (int64_t)pos * 2 + dir;
}

static void sink(void *arg, const struct bb_dec_msg *m)
{
	/* Touch everything a record carries. */
	size_t *sum = arg;
	for (size_t i = 0; i < m->id_len; i++)
		*sum += (unsigned char)m->id[i];
	for (size_t i = 0; m->req && i < m->req_len; i++)
		*sum += (unsigned char)m->req[i];
	if (m->toks) {
		char t[BB_TOK_MAX * 17], c[17];
		size_t tl = bb_tok_format(m->toks, t, sizeof t);
		if (tl && t[tl - 1] == ',')
			abort(); /* tok= is "h1,h2,..." */
		*sum += tl + bb_tok_format_ctx(m->toks, c, sizeof c);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
#ifdef BB_FUZZ_DECODER
	/* One decoder per target (fuzz_dec_NAME): byte 0 picks only the transport. */
	int di = bb_dec_find(BB_FUZZ_DECODER);
	if (di < 0)
		abort();
	const struct bb_decoder *dec = bb_dec_at((size_t)di);
	unsigned tr = data[0] & 1 ? BB_TR_UDP : BB_TR_TCP;
#else
	size_t ndec = bb_dec_count();
	const struct bb_decoder *dec = bb_dec_at(data[0] % ndec);
	unsigned tr = (data[0] / ndec) & 1 ? BB_TR_UDP : BB_TR_TCP;
#endif
	if (!(dec->transports & tr))
		tr = dec->transports & BB_TR_TCP ? BB_TR_TCP : BB_TR_UDP;
	unsigned split = data[1];
	data += 2;
	size -= 2;
	struct bb_dec_stats st;
	size_t sum = 0;
	memset(&st, 0, sizeof st);
	struct bb_dec_ctx ctx = {1, "10.0.0.1:1000", "10.0.0.2:53", tr, &st, t_at, sink, &sum, NULL};
	/* Content tokens (tok=, ctx=) on unless the split byte's top bit is set. */
	static const struct bb_tok_key key = {UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908)};
	ctx.tok_key = split & 0x80 ? NULL : &key;
	void *state = calloc(1, dec->state_size);
	if (tr == BB_TR_UDP) {
		size_t off = 0;
		int dir = 0;
		while (off < size) {
			size_t n = 1 + (split + off) % 97;
			if (n > size - off)
				n = size - off;
			dec->decode(state, &ctx, dir, 0, data + off, n);
			off += n;
			dir ^= 1;
		}
	} else {
		/* Both directions from the same bytes, each in pieces; a gap halfway. */
		for (int dir = 0; dir < 2; dir++) {
			uint8_t *buf = malloc(size + 1);
			size_t have = 0, off = 0;
			uint64_t pos = 0;
			while (off < size) {
				size_t n = 1 + (split * (off + 7)) % 61;
				if (n > size - off)
					n = size - off;
				memcpy(buf + have, data + off, n);
				have += n;
				off += n;
				size_t used = dec->decode(state, &ctx, dir, pos, buf, have);
				if (used > have)
					abort();
				memmove(buf, buf + used, have - used);
				have -= used;
				pos += used;
				if (off >= size / 2 && off - n < size / 2 && dec->gap) {
					dec->gap(state, &ctx, dir, have + 5);
					pos += have + 5;
					have = 0;
				}
			}
			free(buf);
		}
	}
	if (dec->end)
		dec->end(state, &ctx);
	if (dec->free)
		dec->free(state);
	free(state);
	return (int)(sum & 0);
}

#ifndef BB_LIBFUZZER
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			fprintf(stderr, "fuzz_decoders: error: %s: cannot open\n", argv[i]);
			return 1;
		}
		static uint8_t buf[1 << 20];
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
	}
	return 0;
}
#endif
