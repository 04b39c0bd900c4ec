/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pgsql.h - a host's span as SQL for PostgreSQL (`flowsketch export
 * --format pg-sql`), and the schema it loads into.
 *
 * Fleet top talkers need the Count-Min cells themselves, not a finished
 * top list: a flow that is moderate on every host can be the fleet's
 * largest, and only the summed cells bound it.  So each host's span is
 * loaded as rows, and one query (dist/fleet_top.sql) sums the cells over
 * hosts and takes, for each candidate, the minimum over rows of the
 * summed cell it occupies, exactly what fs_sketch_query() does on the
 * merged sketch.  Cells, registers and a candidate's column in each row
 * are the native file's, in the secret coordinates of export_perm.h (the
 * same on every host of one secret): SQL needs no secret (and should not
 * have one), and no keyed hash output is in the script; only the
 * extension hll is needed, for the distinct counts.
 *
 * Schema (CREATE TABLE IF NOT EXISTS at the top of every load):
 *
 *   fs_fleet      one row: the parameters and secret fingerprint every
 *                 host's span must have (the first load sets it)
 *     one          boolean PRIMARY KEY, always true
 *     depth        Count-Min rows
 *     log2w        log2 of the Count-Min width
 *     p            HyperLogLog precision
 *     fingerprint  fs_params_fingerprint() of the secret, 16 hex digits
 *   fs_span       one row per host: its span, its totals; a foreign key
 *                 on (depth, log2w, p, fingerprint) to fs_fleet, so that
 *                 a span of other parameters or another secret fails to
 *                 load (constraint fs_span_sketches_match_fs_fleet)
 *     host, window_start, window_end (timestamptz, UTC, to the
 *     microsecond), windows, window_seconds, direction ('in', 'out',
 *     'both'), depth, log2w, p, fingerprint, packets, bytes
 *   fs_cms        the span's non-zero Count-Min cells
 *     host, cms_row (0 .. depth - 1), cms_col (0 .. 2^log2w - 1, the
 *     exported column),
 *     packets, bytes
 *   fs_candidate  each heavy-hitter candidate of the span, once per row,
 *                 with its exported column in that row
 *     host, family (4, 6), proto, src, dst (inet), sport, dport
 *     (host order; ICMP: dport = type << 8 | code), cms_row, cms_col
 *   fs_hll        the span's HyperLogLogs, postgresql-hll FULL values
 *                 (regwidth 5, log2m = p; hll_export.h)
 *     host, sketch ('flows', 'sources', 'destinations'), value hll
 *
 * fs_cms, fs_candidate and fs_hll reference fs_span (ON DELETE CASCADE).
 * A load is one transaction that first deletes the host's rows: loading a
 * host again replaces its span.  To change the fleet's parameters or
 * secret, empty the tables (DELETE FROM fs_fleet after fs_span).
 * Distinct flows of the fleet:
 *   SELECT hll_cardinality(hll_union_agg(value)) FROM fs_hll
 *   WHERE sketch = 'flows';
 *
 * The output is a psql script (COPY ... FROM STDIN with its rows inline,
 * like pg_dump's), run with `psql -f FILE` or `psql < FILE`; it sets
 * ON_ERROR_STOP, so a refused load leaves nothing and exits non-zero.
 */
#ifndef FLOWSKETCH_CLI_PGSQL_H
#define FLOWSKETCH_CLI_PGSQL_H

#include <stdio.h>
#include "native.h"

/* Longest --host; a host name is letters, digits and ".-_:" only, so it
 * needs no quoting in SQL or COPY. */
#define FS_PGSQL_HOST_MAX 255

/* 0 when host is a name fs_pgsql_write() takes. */
int fs_pgsql_host_ok(const char *host);

/* 0 when postgresql-hll takes n's HyperLogLogs (precision 4..17), else
 * -EINVAL with one line said. */
int fs_pgsql_hll_check(const struct fs_native *n);

/* Sketch s of n as postgresql-hll writes it, "\x" and hex digits, with
 * buf for fs_hll_pg_bytes() of its precision (fs_pgsql_hll_check()ed). */
void fs_pgsql_hll_text(FILE *out, const struct fs_native *n,
		       enum fs_hll_sketch s, __u8 *buf);

/*
 * Write n as host's span to out: 0, or -EINVAL (a precision outside
 * what postgresql-hll takes, 4..17) / -ENOMEM, with one line said.  Write
 * errors are the caller's to find (ferror()).
 */
int fs_pgsql_write(FILE *out, const struct fs_native *n, const char *host);

#endif /* FLOWSKETCH_CLI_PGSQL_H */
