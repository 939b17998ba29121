/* dec_sqltext.c - an SQL statement's verb and first table, for req= of pgsql and mysql */
/* SPDX-License-Identifier: MIT */
/*
 * Not a parser: a tokenizer (words, quoted names, strings, comments, parens)
 * and a few rules per verb, enough to tell query patterns apart:
 *
 *   SELECT ... FROM t          -> "SELECT t"   (first FROM outside parens)
 *   INSERT [INTO] t            -> "INSERT t"   (also REPLACE)
 *   UPDATE [ONLY] t            -> "UPDATE t"
 *   DELETE FROM t              -> "DELETE t"
 *   CREATE|DROP|ALTER [mods] KIND [IF [NOT] EXISTS] name -> "CREATE TABLE name"
 *   TRUNCATE [TABLE] t, COPY t, LOCK [TABLE] t, CALL p -> "VERB t"
 *   SHOW x, SET x              -> "SHOW x", "SET x" (what is shown or set)
 *   WITH a AS (...), b AS (...) main  -> main's summary
 *   anything else              -> the verb
 *
 * Quoted names ("t", `t`) lose their quotes; schema.table stays qualified.
 * PostgreSQL dollar-quoted strings and MySQL backslash escapes are skipped.
 */
#include <stddef.h>
#include <string.h>

#include "decoders/dec_sql_int.h"
#include "decoders/dec_tok_int.h"
#include "decoders/decoders.h"

enum { T_END = 0, T_WORD, T_PUNCT, T_OTHER };

struct tok {
	int kind;
	int quoted;             /* a quoted name: never a keyword */
	int c;                  /* T_PUNCT: the character */
	size_t n;
	char txt[DEC_SQL_MAX + 1];
};


static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c >= 0x80;
}

static int is_ident_start(int c)
{
	return is_ident(c) && !(c >= '0' && c <= '9') && c != '$';
}

/* Skips to just after the first occurrence of lit, or to the end. */
static void skip_past(struct bb_rd *r, const char *lit)
{
	long at = bb_rd_find(r, lit, strlen(lit));
	bb_rd_skip(r, at < 0 ? bb_rd_left(r) : (size_t)at + strlen(lit));
}

static void skip_space(struct bb_rd *r, int mysql)
{
	for (;;) {
		int c = bb_rd_peek(r);
		if (is_space(c)) {
			bb_rd_skip(r, 1);
		} else if (c == '-' && bb_rd_peek_at(r, 1) == '-') {
			skip_past(r, "\n");
		} else if (c == '#' && mysql) {
			skip_past(r, "\n");
		} else if (c == '/' && bb_rd_peek_at(r, 1) == '*') {
			/* PostgreSQL nests block comments. */
			int depth = 0;
			while (bb_rd_left(r)) {
				int a = bb_rd_peek(r), b = bb_rd_peek_at(r, 1);
				if (a == '/' && b == '*') {
					depth++;
					bb_rd_skip(r, 2);
				} else if (a == '*' && b == '/') {
					bb_rd_skip(r, 2);
					if (--depth == 0)
						break;
				} else {
					bb_rd_skip(r, 1);
				}
			}
		} else {
			return;
		}
	}
}

static void tok_add(struct tok *t, int c)
{
	if (t->n < DEC_SQL_MAX)
		t->txt[t->n++] = (char)c;
	t->txt[t->n] = 0;
}

/* A quoted string or name with quote q; doubled quotes (and, for mysql,
 * backslashes) escape. Appends the content to t when t is given. */
static void quoted(struct bb_rd *r, int q, int mysql, struct tok *t)
{
	bb_rd_skip(r, 1);
	while (bb_rd_left(r)) {
		int c = bb_rd_u8(r);
		if (c == '\\' && mysql && q == '\'') {
			bb_rd_skip(r, bb_rd_left(r) ? 1 : 0);
			continue;
		}
		if (c == q) {
			if (bb_rd_peek(r) != q)
				return;
			bb_rd_skip(r, 1);
		}
		if (t)
			tok_add(t, c);
	}
}

static void next(struct bb_rd *r, int mysql, struct tok *t)
{
	skip_space(r, mysql);
	t->n = 0;
	t->txt[0] = 0;
	t->quoted = 0;
	t->c = 0;
	int c = bb_rd_peek(r);
	if (c < 0) {
		t->kind = T_END;
		return;
	}
	if (is_ident_start(c) || c == '"' || c == '`') {
		t->kind = T_WORD;
		for (;;) {
			c = bb_rd_peek(r);
			if (c == '"' || c == '`') {
				t->quoted = 1;
				quoted(r, c, 0, t);
			} else {
				while (is_ident(bb_rd_peek(r)))
					tok_add(t, bb_rd_u8(r));
			}
			/* schema.table */
			int d = bb_rd_peek_at(r, 1);
			if (bb_rd_peek(r) == '.' && (is_ident_start(d) || d == '"' || d == '`')) {
				tok_add(t, bb_rd_u8(r));
				continue;
			}
			return;
		}
	}
	t->kind = T_OTHER;
	if (c == '\'') {
		quoted(r, '\'', mysql, NULL);
	} else if (c == '$' && !mysql) {
		/* $tag$ ... $tag$ (tag may be empty), else a parameter like $1 */
		struct bb_rd s = *r;
		bb_rd_skip(&s, 1);
		char tag[32];
		size_t tl = 0;
		tag[tl++] = '$';
		while (is_ident(bb_rd_peek(&s)) && bb_rd_peek(&s) != '$' && tl < sizeof tag - 2)
			tag[tl++] = (char)bb_rd_u8(&s);
		if (bb_rd_peek(&s) == '$' && !(tl > 1 && tag[1] >= '0' && tag[1] <= '9')) {
			bb_rd_skip(&s, 1);
			tag[tl++] = '$';
			tag[tl] = 0;
			*r = s;
			skip_past(r, tag);
		} else {
			bb_rd_skip(r, 1);
			while (is_ident(bb_rd_peek(r)))
				bb_rd_skip(r, 1);
		}
	} else if (is_ident(c)) {
		while (is_ident(bb_rd_peek(r)) || bb_rd_peek(r) == '.')
			bb_rd_skip(r, 1);
	} else {
		t->kind = T_PUNCT;
		t->c = bb_rd_u8(r);
	}
}

void dec_sql_tokens(const uint8_t *sql, size_t n, int mysql, struct bb_dec_toks *t,
                    const struct bb_dec_ctx *ctx)
{
	if (!dec_tok_on(ctx))
		return;
	struct bb_rd r = bb_rd_make(sql, n < DEC_TOK_SCAN ? n : DEC_TOK_SCAN);
	struct tok lit;
	for (;;) {
		skip_space(&r, mysql);
		int c = bb_rd_peek(&r);
		if (c < 0)
			return;
		if (c == '\'' || (c == '"' && mysql)) {
			/* a string ("..." too in MySQL's default mode) */
			lit.n = 0;
			lit.txt[0] = 0;
			quoted(&r, c, mysql, &lit);
			dec_tok_field(t, ctx, (const uint8_t *)lit.txt, lit.n, DEC_TOK_WHOLE);
		} else if (c == '"' || c == '`') {
			quoted(&r, c, 0, NULL); /* a quoted name */
		} else if (c >= '0' && c <= '9') {
			const uint8_t *num = r.p;
			size_t nl = 0;
			while (is_ident(bb_rd_peek(&r)) || bb_rd_peek(&r) == '.') {
				bb_rd_skip(&r, 1);
				nl++;
			}
			dec_tok_field(t, ctx, num, nl, 0);
		} else if (is_ident(c)) {
			while (is_ident(bb_rd_peek(&r)))
				bb_rd_skip(&r, 1); /* a keyword, a name, a $1 parameter's tail */
		} else {
			bb_rd_skip(&r, 1);
		}
	}
}

/* An unquoted word equal to kw (upper case), ignoring case. */
static int kw(const struct tok *t, const char *k)
{
	if (t->kind != T_WORD || t->quoted || t->n != strlen(k))
		return 0;
	for (size_t i = 0; i < t->n; i++) {
		char c = t->txt[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 32);
		if (c != k[i])
			return 0;
	}
	return 1;
}

static int punct(const struct tok *t, int c)
{
	return t->kind == T_PUNCT && t->c == c;
}

/* After an opening paren: skips to its closing one. */
static void skip_group(struct bb_rd *r, int mysql, struct tok *t)
{
	int depth = 1;
	while (depth > 0) {
		next(r, mysql, t);
		if (t->kind == T_END)
			return;
		if (punct(t, '('))
			depth++;
		else if (punct(t, ')'))
			depth--;
	}
}

/* Reads tokens until the unquoted keyword k outside parens; 1 when found
 * (t is then k), 0 at the end or at a ';'. */
static int find_kw(struct bb_rd *r, int mysql, struct tok *t, const char *k)
{
	for (;;) {
		next(r, mysql, t);
		if (t->kind == T_END || punct(t, ';'))
			return 0;
		if (punct(t, '('))
			skip_group(r, mysql, t);
		else if (kw(t, k))
			return 1;
	}
}

/* Reads the next token, passing over the given keywords (NULL-terminated). */
static void next_skipping(struct bb_rd *r, int mysql, struct tok *t, const char *const *words)
{
	for (;;) {
		next(r, mysql, t);
		int hit = 0;
		for (size_t i = 0; words[i]; i++)
			if (kw(t, words[i]))
				hit = 1;
		if (!hit)
			return;
	}
}

static size_t put(char *out, size_t cap, size_t at, const char *s, size_t n)
{
	if (at >= cap - 1)
		return at;
	if (n > cap - 1 - at)
		n = cap - 1 - at;
	memcpy(out + at, s, n);
	out[at + n] = 0;
	return at + n;
}

size_t dec_sql_summary(const uint8_t *sql, size_t n, int mysql, char *out, size_t cap)
{
	static const char *const create_mods[] = {"OR", "REPLACE", "TEMP", "TEMPORARY", "UNIQUE",
		"UNLOGGED", "GLOBAL", "LOCAL", "MATERIALIZED", "RECURSIVE", "ONLINE", "OFFLINE",
		"IGNORE", "FULLTEXT", "SPATIAL", NULL};
	static const char *const if_exists[] = {"IF", "NOT", "EXISTS", "CONCURRENTLY", NULL};
	static const char *const only[] = {"ONLY", "LOW_PRIORITY", "IGNORE", "QUICK", "DELAYED",
		"HIGH_PRIORITY", "TABLE", "TABLES", "LATERAL", NULL};
	struct bb_rd r = bb_rd_make(sql, n);
	struct tok t, name;
	if (cap < 2)
		return 0;
	out[0] = 0;
	next(&r, mysql, &t);
	while (punct(&t, '('))
		next(&r, mysql, &t);
	if (kw(&t, "WITH")) {
		/* WITH [RECURSIVE] name [(cols)] AS [NOT] [MATERIALIZED] (query) [, ...] main */
		next_skipping(&r, mysql, &t, (const char *const[]){"RECURSIVE", NULL});
		for (int i = 0; i < 64 && t.kind == T_WORD; i++) {
			next(&r, mysql, &t);
			if (punct(&t, '(')) {
				skip_group(&r, mysql, &t);
				next(&r, mysql, &t);
			}
			if (!kw(&t, "AS"))
				return 0;
			next_skipping(&r, mysql, &t, (const char *const[]){"NOT", "MATERIALIZED", NULL});
			if (!punct(&t, '('))
				return 0;
			skip_group(&r, mysql, &t);
			next(&r, mysql, &t);
			if (!punct(&t, ','))
				break;
			next(&r, mysql, &t);
		}
	}
	if (t.kind != T_WORD || t.quoted)
		return 0;
	size_t at = 0;
	for (size_t i = 0; i < t.n; i++) {
		char c = t.txt[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 32);
		at = put(out, cap, at, &c, 1);
	}
	struct tok verb = t;
	const char *kind = NULL;
	size_t kindlen = 0;
	int have = 0;
	char kindbuf[DEC_SQL_MAX + 1];
	if (kw(&verb, "SELECT") || kw(&verb, "DELETE")) {
		if (find_kw(&r, mysql, &t, "FROM")) {
			next_skipping(&r, mysql, &name, only);
			have = 1;
		}
	} else if (kw(&verb, "INSERT") || kw(&verb, "REPLACE")) {
		next_skipping(&r, mysql, &name, only);
		if (kw(&name, "INTO"))
			next(&r, mysql, &name);
		have = 1;
	} else if (kw(&verb, "UPDATE") || kw(&verb, "TRUNCATE") || kw(&verb, "LOCK") ||
	           kw(&verb, "COPY") || kw(&verb, "CALL") || kw(&verb, "VACUUM") ||
	           kw(&verb, "ANALYZE")) {
		next_skipping(&r, mysql, &name, only);
		have = 1;
	} else if (kw(&verb, "SHOW") || kw(&verb, "SET")) {
		/* what is shown or set: SHOW tables, SET search_path */
		next_skipping(&r, mysql, &name, (const char *const[]){"SESSION", "GLOBAL", "LOCAL",
			"FULL", NULL});
		have = 1;
	} else if (kw(&verb, "CREATE") || kw(&verb, "DROP") || kw(&verb, "ALTER")) {
		next_skipping(&r, mysql, &t, create_mods);
		if (t.kind == T_WORD) {
			memcpy(kindbuf, t.txt, t.n + 1);
			for (size_t i = 0; i < t.n; i++)
				if (kindbuf[i] >= 'a' && kindbuf[i] <= 'z')
					kindbuf[i] = (char)(kindbuf[i] - 32);
			kind = kindbuf;
			kindlen = t.n;
			next_skipping(&r, mysql, &name, if_exists);
			have = 1;
		}
	}
	if (kind) {
		at = put(out, cap, at, " ", 1);
		at = put(out, cap, at, kind, kindlen);
	}
	if (have && name.kind == T_WORD && name.n > 0 && !kw(&name, "SELECT") &&
	    !kw(&name, "VALUES") && !kw(&name, "SET")) {
		at = put(out, cap, at, " ", 1);
		at = put(out, cap, at, name.txt, name.n);
	}
	return at;
}
