/* viz_inst.c - path instances as JSON lines, as OTLP/JSON, and sent to an OTLP/HTTP collector */
/* SPDX-License-Identifier: MIT */
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz_int.h"

/* libcurl is loaded only when instances are sent (--otlp-url): linked, it
 * pulls some thirty libraries and their constructors (TLS, Kerberos, LDAP)
 * into every start of every bb command, 11 ms of CPU a start on the
 * project's machine against 2.6 ms for the others, more than bbnest needs
 * for a 20,000-message trace. The header still gives the types. */
#define BB_LIBCURL "libcurl.so.4" /* the ABI of libcurl 7.16 and later */

static struct curl_api {
	void *lib;
	CURLcode (*global_init)(long);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	void (*easy_cleanup)(CURL *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} cu;

static int curl_load(const char *endpoint, struct bb_err *err)
{
	if (cu.lib)
		return 0;
	const struct bb_viz_sym syms[] = {
	    {"curl_global_init", &cu.global_init},
	    {"curl_global_cleanup", &cu.global_cleanup},
	    {"curl_easy_init", &cu.easy_init},
	    {"curl_easy_setopt", &cu.easy_setopt},
	    {"curl_easy_perform", &cu.easy_perform},
	    {"curl_easy_getinfo", &cu.easy_getinfo},
	    {"curl_easy_strerror", &cu.easy_strerror},
	    {"curl_easy_cleanup", &cu.easy_cleanup},
	    {"curl_slist_append", &cu.slist_append},
	    {"curl_slist_free_all", &cu.slist_free_all},
	};
	struct bb_err e;
	if (bb_viz_dl_load(&cu.lib, BB_LIBCURL, "libcurl4", syms, sizeof(syms) / sizeof(syms[0]),
	                   &e) != 0) {
		bb_err_set(err, "%s: %s", endpoint, e.msg);
		memset(&cu, 0, sizeof(cu));
		return -1;
	}
	return 0;
}

/* A string that may hold bytes from packets: jansson refuses invalid UTF-8
 * (bb_vval_str replaces it). */
static json_t *jstr(const char *s)
{
	return vval_json(bb_vval_str(s));
}

/* ---- JSON lines ------------------------------------------------------------- */

static json_t *instance_json(const struct bb_vinstance *in, const char *trace_id)
{
	json_t *o = json_object();
	json_object_set_new(o, "seq", json_integer((json_int_t)in->seq));
	json_object_set_new(o, "start_ns", json_integer(in->start_ns));
	json_object_set_new(o, "latency_ns", json_integer(in->latency_ns));
	json_object_set_new(o, "pattern", jstr(in->pattern));
	json_object_set_new(o, "shape", jstr(in->shape));
	json_object_set_new(o, "trace_id", json_string(trace_id));
	json_t *calls = json_array();
	for (size_t i = 0; i < in->ncalls; i++) {
		const struct bb_vcall *c = &in->calls[i];
		json_t *j = json_object();
		json_object_set_new(j, "caller", jstr(c->caller));
		json_object_set_new(j, "callee", jstr(c->callee));
		json_object_set_new(j, "start_ns", json_integer(c->start_ns));
		json_object_set_new(j, "end_ns", json_integer(c->end_ns));
		json_object_set_new(j, "delay_ns", json_integer(c->delay_ns));
		json_object_set_new(j, "proto", c->proto ? jstr(c->proto) : json_null());
		json_object_set_new(j, "req", c->req ? jstr(c->req) : json_null());
		json_object_set_new(j, "parent", json_integer(c->parent));
		json_object_set_new(j, "ambiguous", json_boolean(c->ambiguous));
		json_array_append_new(calls, j);
	}
	json_object_set_new(o, "calls", calls);
	return o;
}

/* ---- OTLP/JSON ---------------------------------------------------------------
 * The OTLP/JSON encoding (opentelemetry-proto, docs/specification.md): proto3's
 * JSON mapping with lowerCamelCase keys, 64-bit integers as strings, enums as
 * integers and, unlike proto3, trace and span ids as hex. A span is a call,
 * in the resource of the service that served it (service.name = callee); its
 * parent is the call that (the algorithm infers) caused it. */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Deterministic ids: the same trace and options give the same ids. */
struct ids {
	uint64_t t[2];
};

static struct ids trace_ids(const struct bb_vinstance *in)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *p = (const unsigned char *)in->shape; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	struct ids x;
	x.t[0] = mix64(h ^ mix64(in->seq + 1));
	x.t[1] = mix64(x.t[0] ^ (uint64_t)in->start_ns);
	if (!x.t[0] && !x.t[1])
		x.t[1] = 1; /* all zero is invalid */
	return x;
}

static uint64_t span_id(const struct ids *x, size_t i)
{
	uint64_t s = mix64(x->t[1] ^ mix64(x->t[0] + i + 1));
	return s ? s : 1;
}

static void hex_trace(const struct ids *x, char buf[33])
{
	snprintf(buf, 33, "%016llx%016llx", (unsigned long long)x->t[0],
	         (unsigned long long)x->t[1]);
}

static json_t *otlp_attr(const char *key, json_t *value, const char *kind)
{
	json_t *v = json_object();
	json_object_set_new(v, kind, value);
	json_t *a = json_object();
	json_object_set_new(a, "key", json_string(key));
	json_object_set_new(a, "value", v);
	return a;
}

static json_t *otlp_time(int64_t ns)
{
	char b[24];
	snprintf(b, sizeof(b), "%lld", (long long)(ns > 0 ? ns : 0));
	return json_string(b);
}

static json_t *otlp_span(const struct bb_vinstance *in, const struct ids *x, size_t i)
{
	const struct bb_vcall *c = &in->calls[i];
	char tid[33], sid[17];
	hex_trace(x, tid);
	json_t *s = json_object();
	json_object_set_new(s, "traceId", json_string(tid));
	snprintf(sid, sizeof(sid), "%016llx", (unsigned long long)span_id(x, i));
	json_object_set_new(s, "spanId", json_string(sid));
	if (c->parent >= 0) {
		snprintf(sid, sizeof(sid), "%016llx",
		         (unsigned long long)span_id(x, (size_t)c->parent));
		json_object_set_new(s, "parentSpanId", json_string(sid));
	}
	json_object_set_new(s, "name", c->req ? jstr(c->req) : jstr(c->callee));
	json_object_set_new(s, "kind", json_integer(2)); /* SPAN_KIND_SERVER */
	json_object_set_new(s, "startTimeUnixNano", otlp_time(c->start_ns));
	json_object_set_new(s, "endTimeUnixNano", otlp_time(c->end_ns));
	json_t *at = json_array();
	json_array_append_new(at, otlp_attr("bb.caller", jstr(c->caller), "stringValue"));
	if (c->proto)
		json_array_append_new(at, otlp_attr("bb.proto", jstr(c->proto), "stringValue"));
	if (c->req)
		json_array_append_new(at, otlp_attr("bb.req", jstr(c->req), "stringValue"));
	if (c->parent >= 0) {
		/* the parent link is the algorithm's inference, not an observed
		 * propagated context */
		json_array_append_new(at, otlp_attr("bb.parent.inferred", json_true(), "boolValue"));
		json_array_append_new(at, otlp_attr("bb.parent.ambiguous",
		                                    json_boolean(c->ambiguous), "boolValue"));
	}
	json_array_append_new(at, otlp_attr("bb.pattern", jstr(in->pattern), "stringValue"));
	json_object_set_new(s, "attributes", at);
	return s;
}

/* Appends to arr one ResourceSpans per service of the instance, in order of
 * first appearance. */
static void otlp_instance(json_t *arr, const struct bb_vinstance *in)
{
	struct ids x = trace_ids(in);
	for (size_t i = 0; i < in->ncalls; i++) {
		const char *svc = in->calls[i].callee;
		size_t j = 0;
		while (j < i && strcmp(in->calls[j].callee, svc) != 0)
			j++;
		if (j < i)
			continue; /* this service's resource is done */
		json_t *spans = json_array();
		for (size_t k = i; k < in->ncalls; k++)
			if (strcmp(in->calls[k].callee, svc) == 0)
				json_array_append_new(spans, otlp_span(in, &x, k));
		json_t *scope = json_object();
		json_t *sc = json_object();
		json_object_set_new(sc, "name", json_string("bb"));
		json_object_set_new(sc, "version", json_string(BB_VERSION));
		json_object_set_new(scope, "scope", sc);
		json_object_set_new(scope, "spans", spans);
		json_t *scopes = json_array();
		json_array_append_new(scopes, scope);
		json_t *res = json_object();
		json_t *ra = json_array();
		json_array_append_new(ra, otlp_attr("service.name", jstr(svc), "stringValue"));
		json_object_set_new(res, "attributes", ra);
		json_t *rs = json_object();
		json_object_set_new(rs, "resource", res);
		json_object_set_new(rs, "scopeSpans", scopes);
		json_array_append_new(arr, rs);
	}
}

/* ---- the output --------------------------------------------------------------- */

#define POST_BATCH 256 /* instances a request */

struct bb_vinst_out {
	FILE *jsonl, *otlp;
	const char *jsonl_name, *otlp_name;
	int64_t jsonl_mark, otlp_mark;
	size_t otlp_n;       /* resource spans written to the file */
	CURL *curl;
	char *url;
	json_t *batch;       /* resource spans waiting to be sent */
	size_t batch_inst;
	uint64_t posts;
	int failed;
};

static FILE *open_out(const char *path, const char **name, int64_t *mark, struct bb_err *err)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	*name = strcmp(path, "-") == 0 ? "<stdout>" : path;
	if (!f) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	*mark = bb_out_mark(f);
	return f;
}

static size_t sink(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n; /* the collector's answer body is not needed */
}

struct bb_vinst_out *bb_viz_inst_out_new(const char *jsonl, const char *otlp,
                                         const char *endpoint, struct bb_err *err)
{
	struct bb_vinst_out *o = bb_xcalloc(1, sizeof(*o));
	if (jsonl && !(o->jsonl = open_out(jsonl, &o->jsonl_name, &o->jsonl_mark, err)))
		goto fail;
	if (otlp) {
		if (!(o->otlp = open_out(otlp, &o->otlp_name, &o->otlp_mark, err)))
			goto fail;
		fputs("{\"resourceSpans\":[\n", o->otlp);
	}
	if (endpoint) {
		if (strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0) {
			bb_err_set(err, "%s: not an http:// or https:// URL", endpoint);
			goto fail;
		}
		const char *host = strstr(endpoint, "//") + 2;
		size_t len = strlen(endpoint);
		o->url = bb_xmalloc(len + 12);
		strcpy(o->url, endpoint);
		if (!strchr(host, '/'))
			strcat(o->url, "/v1/traces");
		if (curl_load(endpoint, err) < 0)
			goto fail;
		if (cu.global_init(CURL_GLOBAL_DEFAULT) != 0 || !(o->curl = cu.easy_init())) {
			bb_err_set(err, "%s: cannot initialise libcurl", endpoint);
			goto fail;
		}
		o->batch = json_array();
	}
	return o;
fail:
	bb_viz_inst_out_close(o, NULL);
	return NULL;
}

/* POSTs the waiting batch as one ExportTraceServiceRequest. */
static int post(struct bb_vinst_out *o, struct bb_err *err)
{
	if (!o->batch || json_array_size(o->batch) == 0)
		return 0;
	json_t *req = json_object();
	json_object_set(req, "resourceSpans", o->batch);
	char *body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	json_array_clear(o->batch);
	o->batch_inst = 0;
	if (!body) {
		bb_err_set(err, "%s: cannot encode the request", o->url);
		return BB_ERR_IO;
	}
	struct curl_slist *h = cu.slist_append(NULL, "Content-Type: application/json");
	cu.easy_setopt(o->curl, CURLOPT_URL, o->url);
	cu.easy_setopt(o->curl, CURLOPT_HTTPHEADER, h);
	cu.easy_setopt(o->curl, CURLOPT_POSTFIELDS, body);
	cu.easy_setopt(o->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	cu.easy_setopt(o->curl, CURLOPT_WRITEFUNCTION, sink);
	cu.easy_setopt(o->curl, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(o->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	cu.easy_setopt(o->curl, CURLOPT_TIMEOUT, 60L);
	CURLcode cc = cu.easy_perform(o->curl);
	long status = 0;
	cu.easy_getinfo(o->curl, CURLINFO_RESPONSE_CODE, &status);
	cu.slist_free_all(h);
	free(body);
	if (cc != CURLE_OK) {
		bb_err_set(err, "%s: %s", o->url, cu.easy_strerror(cc));
		return BB_ERR_IO;
	}
	if (status < 200 || status > 299) {
		bb_err_set(err, "%s: the collector answered HTTP %ld", o->url, status);
		return BB_ERR_IO;
	}
	o->posts++;
	return 0;
}

static int write_err(const char *name, struct bb_err *err)
{
	bb_err_set(err, "%s: %s", name, strerror(errno ? errno : EIO));
	return BB_ERR_IO;
}

int bb_viz_inst_out_write(struct bb_vinst_out *o, const struct bb_vinstance *in,
                          struct bb_err *err)
{
	if (o->failed)
		return BB_ERR_IO;
	struct ids x = trace_ids(in);
	char tid[33];
	hex_trace(&x, tid);
	if (o->jsonl) {
		json_t *j = instance_json(in, tid);
		int rc = json_dumpf(j, o->jsonl, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(j);
		if (rc != 0 || fputc('\n', o->jsonl) == EOF) {
			o->failed = 1;
			return write_err(o->jsonl_name, err);
		}
	}
	if (o->otlp) {
		json_t *arr = json_array();
		otlp_instance(arr, in);
		size_t i;
		json_t *rs;
		json_array_foreach(arr, i, rs) {
			if ((o->otlp_n++ && fputs(",\n", o->otlp) == EOF) ||
			    json_dumpf(rs, o->otlp, JSON_COMPACT | JSON_PRESERVE_ORDER) != 0) {
				json_decref(arr);
				o->failed = 1;
				return write_err(o->otlp_name, err);
			}
		}
		json_decref(arr);
	}
	if (o->batch) {
		otlp_instance(o->batch, in);
		if (++o->batch_inst >= POST_BATCH) {
			int rc = post(o, err);
			if (rc < 0) {
				o->failed = 1;
				return rc;
			}
		}
	}
	return 0;
}

static int close_out(FILE *f, const char *name, int64_t mark, int ok, struct bb_err *err)
{
	if (!f)
		return 0;
	int rc = 0;
	if (ok && (fflush(f) != 0 || ferror(f)))
		rc = write_err(name, err);
	if (!ok || rc < 0)
		bb_out_cut(f, mark); /* no torn document */
	if (f != stdout && fclose(f) != 0 && rc == 0 && ok)
		rc = write_err(name, err);
	return rc;
}

int bb_viz_inst_out_close(struct bb_vinst_out *o, struct bb_err *err)
{
	if (!o)
		return 0;
	int rc = o->failed ? BB_ERR_IO : 0;
	if (!rc && o->otlp && fputs("\n]}\n", o->otlp) == EOF)
		rc = write_err(o->otlp_name, err);
	if (!rc && o->batch)
		rc = post(o, err);
	int r1 = close_out(o->jsonl, o->jsonl_name, o->jsonl_mark, !o->failed, rc ? NULL : err);
	int r2 = close_out(o->otlp, o->otlp_name, o->otlp_mark, !o->failed && !rc,
	                   rc || r1 ? NULL : err);
	if (!rc)
		rc = r1 ? r1 : r2;
	json_decref(o->batch);
	if (o->curl) {
		cu.easy_cleanup(o->curl);
		cu.global_cleanup();
	}
	free(o->url);
	free(o);
	return rc;
}
