/* dec_sql_int.h - what an SQL statement does, for the pgsql and mysql decoders' req= */
/* SPDX-License-Identifier: MIT */
#ifndef BB_DEC_SQL_INT_H
#define BB_DEC_SQL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/decoders.h"

/* Longest summary written (without the terminating NUL). */
#define DEC_SQL_MAX 63

/* Writes into out (cap bytes, cap >= 2) the statement's verb in upper case
 * and the first table it names: "SELECT accounts", "INSERT orders",
 * "UPDATE t", "DELETE t", "CREATE TABLE t", "COPY t", or the verb alone
 * ("BEGIN", "SELECT" for SELECT 1). Leading white space and comments (--,
 * slash-star, and # when mysql is set) are skipped; for WITH (CTEs) the main
 * statement's verb is taken, and its first table may be a CTE's name. The
 * text need not be NUL-terminated; only n bytes at sql are read (borrowed).
 * Returns the length written (0 when no verb was found). */
size_t dec_sql_summary(const uint8_t *sql, size_t n, int mysql, char *out, size_t cap);

/* Content tokens of an SQL statement's literals into t: its numbers and
 * quoted strings (each string's first DEC_SQL_MAX bytes as a field, see
 * dec_tok_field), not its keywords, names or parameters ($1, ?). Only the
 * first DEC_TOK_SCAN bytes of the text are read (borrowed). */
void dec_sql_tokens(const uint8_t *sql, size_t n, int mysql, struct bb_dec_toks *t,
                    const struct bb_dec_ctx *ctx);

#endif
