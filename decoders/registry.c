/* registry.c - the table of decoders: port dispatch, probes, --decode-as, --list-decoders */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"

/* Adding a protocol: one file, one line here, one CMake line, its tests.
 * Order matters for probes: the first decoder whose probe matches wins;
 * generic stays last (it claims what nothing else does). */
static const struct bb_decoder *const table[] = {
	&bb_dec_dns,
	&bb_dec_sunrpc,
	&bb_dec_http,
	&bb_dec_ldap,
	&bb_dec_dcerpc,
	&bb_dec_smb2,
	&bb_dec_http2,
	&bb_dec_redis,
	&bb_dec_memcache,
	&bb_dec_thrift,
	&bb_dec_pgsql,
	&bb_dec_mysql,
	&bb_dec_kafka,
	&bb_dec_generic,
};

#define NDEC (sizeof(table) / sizeof(table[0]))

/* struct bb_dec_sel keeps one bit per decoder in a 32-bit mask. */
_Static_assert(NDEC <= BB_DEC_MAX, "more decoders than bits in bb_dec_sel.disabled");

size_t bb_dec_count(void)
{
	return NDEC;
}

const struct bb_decoder *bb_dec_at(size_t i)
{
	return i < NDEC ? table[i] : NULL;
}

int bb_dec_find(const char *name)
{
	for (size_t i = 0; i < NDEC; i++)
		if (strcmp(table[i]->name, name) == 0)
			return (int)i;
	return -1;
}

/* One line of --list-decoders: name, transports, default ports, summary. */
static void list_one(FILE *out, const struct bb_decoder *d)
{
	int both = d->transports == (BB_TR_TCP | BB_TR_UDP);
	fprintf(out, "%-8s %s%s%s", d->name, (d->transports & BB_TR_TCP) ? "tcp" : "",
	        both ? "," : "", (d->transports & BB_TR_UDP) ? "udp" : "");
	fprintf(out, "%*s", both ? 1 : 5, "");
	if (!d->ports[0]) {
		fprintf(out, "%-22s", "(any)");
	} else {
		char ports[64];
		int n = 0;
		for (int k = 0; k < 8 && d->ports[k]; k++)
			n += snprintf(ports + n, sizeof ports - (size_t)n, "%s%u", k ? "," : "",
			              d->ports[k]);
		fprintf(out, "%-22s", ports);
	}
	fprintf(out, " %s\n", d->summary);
}

int bb_dec_list(FILE *out)
{
	for (size_t i = 0; i < NDEC; i++)
		list_one(out, table[i]);
	return ferror(out) ? BB_ERR_IO : 0;
}

int bb_dec_sel_decode_as(struct bb_dec_sel *sel, const char *spec, struct bb_err *err)
{
	const char *eq = strchr(spec, '=');
	char *endp;
	if (!eq || eq == spec) {
		bb_err_set(err, "--decode-as: expected PORT=NAME, got \"%s\"", spec);
		return BB_ERR_ARG;
	}
	unsigned long port = strtoul(spec, &endp, 10);
	if (endp != eq || port == 0 || port > 65535) {
		bb_err_set(err, "--decode-as: bad port in \"%s\"", spec);
		return BB_ERR_ARG;
	}
	int d = bb_dec_find(eq + 1);
	if (d < 0) {
		bb_err_set(err, "--decode-as: no decoder named \"%s\" (see --list-decoders)", eq + 1);
		return BB_ERR_ARG;
	}
	if (sel->nmap >= BB_DEC_MAX_MAP) {
		bb_err_set(err, "--decode-as: more than %d mappings", BB_DEC_MAX_MAP);
		return BB_ERR_LIMIT;
	}
	sel->map[sel->nmap].port = (uint16_t)port;
	sel->map[sel->nmap].dec = (unsigned char)d;
	sel->nmap++;
	return 0;
}

int bb_dec_sel_disable(struct bb_dec_sel *sel, const char *name, struct bb_err *err)
{
	int d = bb_dec_find(name);
	if (d < 0) {
		bb_err_set(err, "--no-decoder: no decoder named \"%s\" (see --list-decoders)", name);
		return BB_ERR_ARG;
	}
	sel->disabled |= UINT32_C(1) << d;
	return 0;
}

static int usable(const struct bb_dec_sel *sel, size_t i, unsigned transport)
{
	return !(sel && (sel->disabled >> i & 1u)) && (table[i]->transports & transport);
}

static int mapped(const struct bb_dec_sel *sel, unsigned transport, uint16_t port)
{
	if (!sel)
		return -1;
	for (size_t i = 0; i < sel->nmap; i++)
		if (sel->map[i].port == port && usable(sel, sel->map[i].dec, transport))
			return sel->map[i].dec;
	return -1;
}

static int by_default_port(const struct bb_dec_sel *sel, unsigned transport, uint16_t port)
{
	for (size_t i = 0; i < NDEC; i++) {
		if (!usable(sel, i, transport))
			continue;
		for (size_t k = 0; k < 8 && table[i]->ports[k]; k++)
			if (table[i]->ports[k] == port)
				return (int)i;
	}
	return -1;
}

int bb_dec_by_port(const struct bb_dec_sel *sel, unsigned transport, uint16_t sport,
                   uint16_t dport)
{
	int d = mapped(sel, transport, dport);
	if (d < 0)
		d = mapped(sel, transport, sport);
	if (d < 0)
		d = by_default_port(sel, transport, dport);
	if (d < 0)
		d = by_default_port(sel, transport, sport);
	return d;
}

int bb_dec_forced(const struct bb_dec_sel *sel, unsigned transport, uint16_t sport,
                  uint16_t dport)
{
	int d = mapped(sel, transport, dport);
	return d >= 0 ? d : mapped(sel, transport, sport);
}

int bb_dec_is_server_port(const struct bb_dec_sel *sel, unsigned transport, uint16_t port)
{
	return mapped(sel, transport, port) >= 0 || by_default_port(sel, transport, port) >= 0;
}

int bb_dec_by_probe(const struct bb_dec_sel *sel, unsigned transport, const uint8_t *p,
                    size_t n, int dir)
{
	int generic = -1;
	for (size_t i = 0; i < NDEC; i++) {
		if (!usable(sel, i, transport))
			continue;
		if (table[i] == &bb_dec_generic)
			generic = (int)i;
		else if (table[i]->probe && table[i]->probe(p, n, transport, dir))
			return (int)i;
	}
	return generic;
}
