/* cap_names.c - node names: --names files, addresses as text, interned once */
/* SPDX-License-Identifier: MIT */
/*
 * A node name is a --names name (hosts-file format: "ADDRESS NAME", '#'
 * comments) or the address; a server may get ":port" (cap_flow.c says
 * when). Records outlive their flows, so every name is interned here once
 * and kept until the capture is freed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

struct cap_name {
	uint8_t fam;
	uint8_t addr[16];
	char *name;
};

struct cap_names {
	struct cap_name *map;       /* --names, in file order */
	size_t nmap;
	char **interned;            /* open addressing */
	size_t ninterned, size;
};

static int load(struct cap_names *n, const char *path, struct bb_err *err)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned ln = 0;
	if (!f) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		return BB_ERR_IO;
	}
	while (fgets(line, sizeof line, f)) {
		ln++;
		char *h = strchr(line, '#');
		if (h)
			*h = '\0';
		char *save = NULL;
		char *addr = strtok_r(line, " \t\r\n", &save);
		char *name = addr ? strtok_r(NULL, " \t\r\n", &save) : NULL;
		if (!addr)
			continue;
		struct cap_name nm;
		memset(&nm, 0, sizeof nm);
		if (inet_pton(AF_INET, addr, nm.addr) == 1)
			nm.fam = 4;
		else if (inet_pton(AF_INET6, addr, nm.addr) == 1)
			nm.fam = 6;
		if (!nm.fam || !name) {
			bb_err_set(err, "%s:%u: expected \"ADDRESS NAME\"", path, ln);
			fclose(f);
			return BB_ERR_PARSE;
		}
		nm.name = bb_xstrndup(name, strlen(name));
		n->map = bb_xrealloc(n->map, (n->nmap + 1) * sizeof *n->map);
		n->map[n->nmap++] = nm;
	}
	fclose(f);
	return 0;
}

struct cap_names *cap_names_new(const char *path, struct bb_err *err)
{
	struct cap_names *n = bb_xcalloc(1, sizeof *n);
	if (path && load(n, path, err) < 0) {
		cap_names_free(n);
		return NULL;
	}
	return n;
}

void cap_names_free(struct cap_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nmap; i++)
		free(n->map[i].name);
	free(n->map);
	for (size_t i = 0; i < n->size; i++)
		free(n->interned[i]);
	free(n->interned);
	free(n);
}

static const char *lookup_name(const struct cap_names *n, int fam, const uint8_t *addr)
{
	size_t len = fam == 4 ? 4 : 16;
	for (size_t i = 0; i < n->nmap; i++)
		if (n->map[i].fam == fam && memcmp(n->map[i].addr, addr, len) == 0)
			return n->map[i].name;
	return NULL;
}

void cap_addr_name(const struct cap_names *n, const struct cap_addr *a, uint16_t port,
                   int with_port, char *buf, size_t cap)
{
	char ip[INET6_ADDRSTRLEN + 2];
	int v4 = cap_addr_family(a) == 4;
	const char *nm = v4 ? lookup_name(n, 4, a->b + 12) : lookup_name(n, 6, a->b);
	if (nm) {
		snprintf(ip, sizeof ip, "%s", nm);
	} else if (!v4) {
		char t[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, a->b, t, sizeof t);
		/* "[addr]:port" keeps the port separable from the address. */
		snprintf(ip, sizeof ip, with_port ? "[%s]" : "%s", t);
	} else {
		inet_ntop(AF_INET, a->b + 12, ip, sizeof ip);
	}
	if (with_port)
		snprintf(buf, cap, "%s:%u", ip, port);
	else
		snprintf(buf, cap, "%s", ip);
}

static size_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return (size_t)h;
}

const char *cap_intern(struct cap_names *n, const char *s)
{
	if ((n->ninterned + 1) * 2 > n->size) {
		size_t ns = n->size ? n->size * 2 : 256;
		char **t = bb_xcalloc(ns, sizeof *t);
		for (size_t i = 0; i < n->size; i++) {
			if (!n->interned[i])
				continue;
			size_t j = str_hash(n->interned[i]) & (ns - 1);
			while (t[j])
				j = (j + 1) & (ns - 1);
			t[j] = n->interned[i];
		}
		free(n->interned);
		n->interned = t;
		n->size = ns;
	}
	size_t j = str_hash(s) & (n->size - 1);
	while (n->interned[j]) {
		if (strcmp(n->interned[j], s) == 0)
			return n->interned[j];
		j = (j + 1) & (n->size - 1);
	}
	n->interned[j] = bb_xstrndup(s, strlen(s));
	n->ninterned++;
	return n->interned[j];
}
