/* cap_link.c - link layers parsed by bbcap itself: Ethernet/VLAN, SLL, SLL2, NULL, raw */
/* SPDX-License-Identifier: MIT */
/*
 *   EN10MB:  dst:6 src:6 type:16, then 0x8100/0x88a8/0x9100 tags (tci:16 type:16)*
 *   SLL:     pkttype:16 hatype:16 halen:16 addr:8 protocol:16      (16 bytes)
 *   SLL2:    protocol:16 reserved:16 ifindex:32 hatype:16 pkttype:8
 *            halen:8 addr:8                                       (20 bytes)
 *   NULL:    family:32 in host byte order; LOOP: network order
 *   RAW, IPV4, IPV6: the IP header at once
 */
#include "capture/cap_int.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif

static int by_ethertype(uint16_t type, struct bb_rd *r, const uint8_t **ip, size_t *len)
{
	if (type != 0x0800 && type != 0x86dd)
		return 0;
	*ip = r->p;
	*len = bb_rd_left(r);
	return type == 0x0800 ? 4 : 6;
}

static int by_version(struct bb_rd *r, const uint8_t **ip, size_t *len)
{
	struct bb_rd peek = *r;
	uint8_t v = bb_rd_u8(&peek) >> 4;
	if (!bb_rd_ok(&peek))
		return -1;
	if (v != 4 && v != 6)
		return 0;
	*ip = r->p;
	*len = bb_rd_left(r);
	return v;
}

int cap_link(int dlt, const uint8_t *p, size_t n, const uint8_t **ip, size_t *len)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint16_t type;
	switch (dlt) {
	case DLT_EN10MB:
		bb_rd_skip(&r, 12);
		type = bb_rd_be16(&r);
		for (int tags = 0; (type == 0x8100 || type == 0x88a8 || type == 0x9100) && tags < 8;
		     tags++) {
			bb_rd_skip(&r, 2);
			type = bb_rd_be16(&r);
		}
		if (!bb_rd_ok(&r))
			return -1;
		if (type < 0x0600) /* 802.3 length: LLC, not IP */
			return 0;
		return by_ethertype(type, &r, ip, len);
	case DLT_LINUX_SLL:
		bb_rd_skip(&r, 14);
		type = bb_rd_be16(&r);
		if (!bb_rd_ok(&r))
			return -1;
		return by_ethertype(type, &r, ip, len);
	case DLT_LINUX_SLL2:
		type = bb_rd_be16(&r);
		bb_rd_skip(&r, 18);
		if (!bb_rd_ok(&r))
			return -1;
		return by_ethertype(type, &r, ip, len);
	case DLT_NULL:
	case DLT_LOOP: {
		uint32_t fam = dlt == DLT_LOOP ? bb_rd_be32(&r) : bb_rd_le32(&r);
		if (!bb_rd_ok(&r))
			return -1;
		if (dlt == DLT_NULL && fam > 0xffff) /* written by a big-endian host */
			fam = (fam >> 24) | ((fam >> 8) & 0xff00);
		if (fam == 2)
			return by_version(&r, ip, len) == 4 ? 4 : 0;
		if (fam == 10 || fam == 24 || fam == 28 || fam == 30)
			return by_version(&r, ip, len) == 6 ? 6 : 0;
		return 0;
	}
	case DLT_RAW:
	case 14: /* DLT_RAW as OpenBSD numbers it */
	case 101: /* LINKTYPE_RAW */
	case DLT_IPV4:
	case DLT_IPV6:
		return by_version(&r, ip, len);
	default:
		return -2;
	}
}
