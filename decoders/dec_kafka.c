/* dec_kafka.c - Apache Kafka wire protocol: requests and responses by correlation id */
/* SPDX-License-Identifier: MIT */
/*
 * kafka.apache.org/protocol ("Protocol primitive types", "Common request and
 * response structure", "Headers") and the message definitions in
 * clients/src/main/resources/common/message/ *Request.json.
 *
 *   message:          size:32 (bytes after it) payload
 *   request header:   api_key:16 api_version:16 correlation_id:32
 *                     client_id:nullable string (int16 length)
 *                     [tagged fields (uvarint count ...) in header v2, used
 *                      by "flexible" request versions]
 *   response header:  correlation_id:32 [tagged fields]
 *
 * Responses carry only the correlation id: the decoder keeps the pending
 * requests (64 per connection: api key and req) to name them, and a request
 * never answered (Produce with acks=0) is not kept. id =
 * "c<connection>#<correlation id>"; req = the API name (Produce, Fetch,
 * Metadata, ...) and, for Produce, Fetch (up to v12, which still names
 * topics) and Metadata, the first topic: "Produce orders".
 * Only the first 512 bytes of a message are parsed; the rest is skipped as
 * it streams (record batches are never buffered).
 */
#include <stddef.h>

#include "decoders/dec_int.h"

#define KF_HEAD 512
#define KF_MAX_MSG (256u << 20)
#define KF_PENDING 64
#define KF_REQ 64

static const char *const api_names[] = {"Produce", "Fetch", "ListOffsets", "Metadata",
	"LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown", "OffsetCommit",
	"OffsetFetch", "FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup",
	"DescribeGroups", "ListGroups", "SaslHandshake", "ApiVersions", "CreateTopics",
	"DeleteTopics", "DeleteRecords", "InitProducerId", "OffsetForLeaderEpoch",
	"AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "WriteTxnMarkers", "TxnOffsetCommit",
	"DescribeAcls", "CreateAcls", "DeleteAcls", "DescribeConfigs", "AlterConfigs",
	"AlterReplicaLogDirs", "DescribeLogDirs", "SaslAuthenticate", "CreatePartitions",
	"CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken",
	"DescribeDelegationToken", "DeleteGroups", "ElectLeaders", "IncrementalAlterConfigs",
	"AlterPartitionReassignments", "ListPartitionReassignments", "OffsetDelete",
	"DescribeClientQuotas", "AlterClientQuotas", "DescribeUserScramCredentials",
	"AlterUserScramCredentials", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch",
	"DescribeQuorum", "AlterPartition", "UpdateFeatures", "Envelope", "FetchSnapshot",
	"DescribeCluster", "DescribeProducers", "BrokerRegistration", "BrokerHeartbeat",
	"UnregisterBroker", "DescribeTransactions", "ListTransactions", "AllocateProducerIds",
	"ConsumerGroupHeartbeat", "ConsumerGroupDescribe", "ControllerRegistration",
	"GetTelemetrySubscriptions", "PushTelemetry", "AssignReplicasToDirs",
	"ListClientMetricsResources", "DescribeTopicPartitions"};

#define KF_NAPI (sizeof api_names / sizeof api_names[0])

/* First request version that is "flexible" (compact strings, tagged
 * fields) for the APIs whose topic is read. */
enum { FLEX_PRODUCE = 9, FLEX_FETCH = 12, FLEX_METADATA = 9 };

struct kf_dir {
	uint8_t hunting;        /* after a gap: look for a message start */
	uint8_t in_msg;         /* skipping the rest of a message */
	uint8_t have;           /* the message in progress is to be emitted */
	uint8_t reqlen;
	uint32_t left;          /* bytes of the message still to come */
	int32_t corr;
	int64_t t0;
	uint64_t len;
	char req[KF_REQ];
};

struct kf_state {
	struct kf_dir d[2];
	uint32_t next;
	struct {
		int32_t corr;
		uint8_t used, reqlen;
		char req[KF_REQ];
	} p[KF_PENDING];
};

/* A string (int16 length, or compact: uvarint length + 1); NULL when null or
 * cut. */
static const uint8_t *kstr(struct bb_rd *r, int compact, size_t *n)
{
	int64_t len;
	if (compact)
		len = (int64_t)bb_rd_uvarint32(r) - 1;
	else
		len = (int16_t)bb_rd_be16(r);
	if (len < 0) {
		*n = 0;
		return NULL;
	}
	*n = (size_t)len;
	return bb_rd_bytes(r, *n);
}

static void skip_tags(struct bb_rd *r)
{
	uint32_t n = bb_rd_uvarint32(r);
	for (uint32_t i = 0; i < n && bb_rd_ok(r); i++) {
		bb_rd_uvarint32(r);
		bb_rd_skip(r, bb_rd_uvarint32(r));
	}
}

/* The first topic named by a Produce, Fetch or Metadata request body at r;
 * sets *acks0 for a Produce that gets no response. */
static const uint8_t *first_topic(struct bb_rd r, int api, int ver, size_t *n, int *acks0)
{
	size_t sl;
	int compact;
	uint32_t count;
	*n = 0;
	switch (api) {
	case 0: /* Produce */
		compact = ver >= FLEX_PRODUCE;
		if (ver >= 3)
			kstr(&r, compact, &sl); /* transactional_id */
		*acks0 = (int16_t)bb_rd_be16(&r) == 0 && bb_rd_ok(&r);
		bb_rd_skip(&r, 4); /* timeout */
		break;
	case 1: /* Fetch: topic names up to v12, ids from v13 */
		if (ver > 12)
			return NULL;
		compact = ver >= FLEX_FETCH;
		bb_rd_skip(&r, 4 + 4 + 4); /* replica_id, max_wait, min_bytes */
		if (ver >= 3)
			bb_rd_skip(&r, 4); /* max_bytes */
		if (ver >= 4)
			bb_rd_skip(&r, 1); /* isolation_level */
		if (ver >= 7)
			bb_rd_skip(&r, 8); /* session id and epoch */
		break;
	case 3: /* Metadata */
		compact = ver >= FLEX_METADATA;
		break;
	default:
		return NULL;
	}
	count = compact ? bb_rd_uvarint32(&r) - 1 : bb_rd_be32(&r);
	if (!bb_rd_ok(&r) || count == 0 || count > 100000)
		return NULL;
	if (api == 3 && ver >= 10)
		bb_rd_skip(&r, 16); /* topic_id */
	const uint8_t *t = kstr(&r, compact, n);
	return bb_rd_ok(&r) ? t : NULL;
}

/* A plausible request header (client) or response (server) at r. */
static int plausible(const struct kf_state *s, struct bb_rd r, int dir)
{
	uint32_t size = bb_rd_be32(&r);
	if (!bb_rd_ok(&r) || size < 4 || size > KF_MAX_MSG)
		return 0;
	if (dir == BB_DIR_S2C) {
		/* a response to a pending request, or one that ends exactly where
		 * the bytes do (a segment holds whole responses) */
		if (size == bb_rd_left(&r))
			return 1;
		int32_t corr = (int32_t)bb_rd_be32(&r);
		for (unsigned i = 0; bb_rd_ok(&r) && i < KF_PENDING; i++)
			if (s->p[i].used && s->p[i].corr == corr)
				return 1;
		return 0;
	}
	uint16_t api = bb_rd_be16(&r);
	uint16_t ver = bb_rd_be16(&r);
	bb_rd_skip(&r, 4);
	int16_t cl = (int16_t)bb_rd_be16(&r);
	return bb_rd_ok(&r) && size >= 10 && api < KF_NAPI && ver < 32 && cl >= -1 &&
	       (cl < 0 || (uint32_t)cl <= size - 10);
}

static int id_of(char *buf, size_t cap, const struct bb_dec_ctx *ctx, int32_t corr)
{
	int n = snprintf(buf, cap, "c%llu#%d", (unsigned long long)ctx->conn, corr);
	return n < (int)cap ? n : (int)cap - 1;
}

/* Parses a message head (after the size): 0, or -1 when malformed. */
static int parse_head(struct kf_state *s, const struct bb_dec_ctx *ctx, struct kf_dir *d, int dir,
                      struct bb_rd r)
{
	if (dir == BB_DIR_S2C) {
		d->corr = (int32_t)bb_rd_be32(&r);
		if (!bb_rd_ok(&r))
			return -1;
		d->reqlen = 0;
		d->have = 1;
		for (unsigned i = 0; i < KF_PENDING; i++) {
			if (s->p[i].used && s->p[i].corr == d->corr) {
				s->p[i].used = 0;
				memcpy(d->req, s->p[i].req, s->p[i].reqlen);
				d->reqlen = s->p[i].reqlen;
				return 0;
			}
		}
		DEC_COUNT(ctx, unmatched_ret);
		return 0;
	}
	uint16_t api = bb_rd_be16(&r);
	uint16_t ver = bb_rd_be16(&r);
	d->corr = (int32_t)bb_rd_be32(&r);
	if (!bb_rd_ok(&r) || api >= KF_NAPI || ver >= 32)
		return -1;
	size_t cl;
	kstr(&r, 0, &cl); /* client_id (a long one leaves no room for the topic) */
	int flexible = (api == 0 && ver >= FLEX_PRODUCE) || (api == 1 && ver >= FLEX_FETCH) ||
	               (api == 3 && ver >= FLEX_METADATA);
	if (flexible)
		skip_tags(&r);
	size_t tl = 0;
	int acks0 = 0;
	const uint8_t *topic = bb_rd_ok(&r) ? first_topic(r, api, ver, &tl, &acks0) : NULL;
	int n = snprintf(d->req, sizeof d->req, "%s", api_names[api]);
	if (topic && tl > 0) {
		size_t room = sizeof d->req - 1 - (size_t)n;
		if (room > 1) {
			d->req[n++] = ' ';
			room--;
			if (tl > room)
				tl = room;
			memcpy(d->req + n, topic, tl);
			n += (int)tl;
			d->req[n] = 0;
		}
	}
	d->reqlen = (uint8_t)n;
	d->have = 1;
	if (acks0)
		return 0; /* no response will come */
	int slot = -1;
	for (unsigned i = 0; i < KF_PENDING; i++) {
		if (s->p[i].used && s->p[i].corr == d->corr) {
			DEC_COUNT(ctx, dup_call);
			slot = (int)i;
			break;
		}
		if (!s->p[i].used && slot < 0)
			slot = (int)i;
	}
	if (slot < 0) {
		slot = (int)(s->next++ % KF_PENDING);
		DEC_COUNT(ctx, evicted);
	}
	s->p[slot].used = 1;
	s->p[slot].corr = d->corr;
	memcpy(s->p[slot].req, d->req, d->reqlen);
	s->p[slot].reqlen = d->reqlen;
	return 0;
}

static void emit_msg(const struct bb_dec_ctx *ctx, struct kf_dir *d, int dir, int64_t t1)
{
	char id[48];
	int il = id_of(id, sizeof id, ctx, d->corr);
	dec_emit(ctx, dir == BB_DIR_C2S ? BB_CALL : BB_RET, dir, d->t0, t1, d->len, id, (size_t)il,
	         d->reqlen ? d->req : NULL, d->reqlen);
	d->have = 0;
}

static size_t kf_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                        const uint8_t *p, size_t n)
{
	struct kf_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	struct kf_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) > 0) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->in_msg) {
			size_t take = d->left < left ? d->left : left;
			bb_rd_skip(&r, take);
			d->left -= (uint32_t)take;
			d->len += take;
			if (d->left == 0) {
				d->in_msg = 0;
				if (d->have)
					emit_msg(ctx, d, dir, dec_time(ctx, dir, pos + off + take - 1));
			}
			continue;
		}
		if (d->hunting) {
			size_t i = 0;
			int found = 0;
			for (; i + 12 <= left; i++) {
				if (plausible(s, bb_rd_make(r.p + i, left - i), dir)) {
					found = 1;
					break;
				}
			}
			if (ctx->stats)
				ctx->stats->skipped_bytes += i;
			bb_rd_skip(&r, i);
			if (!found)
				break;
			d->hunting = 0;
			continue;
		}
		if (left < 4)
			return off;
		struct bb_rd h = r;
		uint32_t size = bb_rd_be32(&h);
		if (size < 4 || size > KF_MAX_MSG) {
			DEC_COUNT(ctx, malformed);
			d->hunting = 1;
			bb_rd_skip(&r, 1);
			continue;
		}
		size_t need = size < KF_HEAD ? size : KF_HEAD;
		if (left < 4 + need)
			return off;
		d->t0 = dec_time(ctx, dir, pos + off);
		if (parse_head(s, ctx, d, dir, bb_rd_make(h.p, need)) < 0) {
			DEC_COUNT(ctx, malformed);
			d->hunting = 1;
			bb_rd_skip(&r, 1);
			continue;
		}
		bb_rd_skip(&r, 4);
		d->len = 4;
		d->left = size;
		d->in_msg = 1;
	}
	return (size_t)(r.p - p);
}

static void kf_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct kf_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct kf_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (lost && d->in_msg && lost < d->left) {
		d->left -= (uint32_t)lost;
		d->len += lost;
		return;
	}
	/* A message whose head was seen happened: report it, ending at the gap. */
	if (d->in_msg && d->have)
		emit_msg(ctx, d, dir, d->t0);
	d->in_msg = 0;
	d->have = 0;
	d->hunting = 1;
}

const struct bb_decoder bb_dec_kafka = {
	.name = "kafka",
	.summary = "Apache Kafka: request header, api names, responses by correlation id",
	.transports = BB_TR_TCP,
	.ports = {9092, 0},
	.probe = NULL,
	.state_size = sizeof(struct kf_state),
	.decode = kf_decode,
	.gap = kf_gap,
	.end = NULL,
	.free = NULL,
};
