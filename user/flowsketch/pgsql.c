// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* pgsql.c - a host's span as a psql script (pgsql.h has the schema). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "args.h"
#include "flow_fmt.h"
#include "hll_export.h"
#include "pgsql.h"

static const char schema[] =
"CREATE EXTENSION IF NOT EXISTS hll;\n"
"CREATE TABLE IF NOT EXISTS fs_fleet (\n"
"    one boolean PRIMARY KEY DEFAULT true CHECK (one),\n"
"    depth smallint NOT NULL,\n"
"    log2w smallint NOT NULL,\n"
"    p smallint NOT NULL,\n"
"    fingerprint text NOT NULL,\n"
"    UNIQUE (depth, log2w, p, fingerprint)\n"
");\n"
"CREATE TABLE IF NOT EXISTS fs_span (\n"
"    host text PRIMARY KEY,\n"
"    window_start timestamptz NOT NULL,\n"
"    window_end timestamptz NOT NULL,\n"
"    windows integer NOT NULL,\n"
"    window_seconds integer NOT NULL,\n"
"    direction text NOT NULL CHECK (direction IN ('in', 'out', 'both')),\n"
"    depth smallint NOT NULL,\n"
"    log2w smallint NOT NULL,\n"
"    p smallint NOT NULL,\n"
"    fingerprint text NOT NULL,\n"
"    packets bigint NOT NULL,\n"
"    bytes bigint NOT NULL,\n"
"    CONSTRAINT fs_span_sketches_match_fs_fleet FOREIGN KEY (depth, log2w, p, fingerprint)\n"
"        REFERENCES fs_fleet (depth, log2w, p, fingerprint)\n"
");\n";

static const char cms_schema[] =
"CREATE TABLE IF NOT EXISTS fs_cms (\n"
"    host text NOT NULL REFERENCES fs_span ON DELETE CASCADE,\n"
"    cms_row smallint NOT NULL,\n"
"    cms_col integer NOT NULL,\n"
"    packets bigint NOT NULL,\n"
"    bytes bigint NOT NULL,\n"
"    PRIMARY KEY (host, cms_row, cms_col)\n"
");\n"
"CREATE TABLE IF NOT EXISTS fs_candidate (\n"
"    host text NOT NULL REFERENCES fs_span ON DELETE CASCADE,\n"
"    family smallint NOT NULL,\n"
"    proto smallint NOT NULL,\n"
"    src inet NOT NULL,\n"
"    dst inet NOT NULL,\n"
"    sport integer NOT NULL,\n"
"    dport integer NOT NULL,\n"
"    cms_row smallint NOT NULL,\n"
"    cms_col integer NOT NULL,\n"
"    PRIMARY KEY (host, family, proto, src, dst, sport, dport, cms_row)\n"
");\n";

static const char hll_schema[] =
"CREATE TABLE IF NOT EXISTS fs_hll (\n"
"    host text NOT NULL REFERENCES fs_span ON DELETE CASCADE,\n"
"    sketch text NOT NULL CHECK (sketch IN ('flows', 'sources', 'destinations')),\n"
"    value hll NOT NULL,\n"
"    PRIMARY KEY (host, sketch)\n"
");\n";

int fs_pgsql_host_ok(const char *host)
{
	size_t i, len = strlen(host);

	if (!len || len > FS_PGSQL_HOST_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:",
			    host[i]))
			return -EINVAL;
	return 0;
}

/* A wall-clock time in ns as a timestamptz literal, to the microsecond. */
static void timestamp(char *buf, size_t len, __u64 ns)
{
	time_t t = (time_t)(ns / 1000000000ULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%06llu+00",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec,
		 (unsigned long long)(ns % 1000000000ULL / 1000));
}

static const char *dir_name(__u32 dir)
{
	return dir == FS_NATIVE_DIR_IN ? "in" : dir == FS_NATIVE_DIR_OUT ? "out" : "both";
}

static void write_cells(FILE *out, const struct fs_native *n, const char *host)
{
	const struct fs_sketch_params *p = &n->sketch.params;
	__u64 i, ncells = fs_cms_cells_per_slot(p);

	fprintf(out, "COPY fs_cms (host, cms_row, cms_col, packets, bytes) FROM STDIN;\n");
	for (i = 0; i < ncells; i++) {
		const struct fs_cms_cell *c = &n->sketch.cms[i];

		if (!c->packets && !c->bytes)
			continue;
		fprintf(out, "%s\t%llu\t%llu\t%llu\t%llu\n", host,
			(unsigned long long)(i >> p->cms_log2_width),
			(unsigned long long)(i & ((1ULL << p->cms_log2_width) - 1)),
			(unsigned long long)c->packets, (unsigned long long)c->bytes);
	}
	fprintf(out, "\\.\n");
}

/* The cells, then the candidates' rows: where each is in fs_cms. */
static int write_cms(FILE *out, const struct fs_native *n, const char *host)
{
	const struct fs_sketch_params *p = &n->sketch.params;
	__u64 i;

	write_cells(out, n, host);
	fprintf(out, "COPY fs_candidate (host, family, proto, src, dst, sport, dport, cms_row, cms_col) FROM STDIN;\n");
	for (i = 0; i < n->ncandidates; i++) {
		const struct fs_native_candidate *c = &n->candidates[i];
		char src[FS_ADDR_STR_MAX] = "?", dst[FS_ADDR_STR_MAX] = "?";
		__u32 row;

		/* The same key twice (it cannot be in a file native.c read)
		 * would break the primary key: once is enough. */
		if (i && !memcmp(&c->key, &n->candidates[i - 1].key, sizeof(c->key)))
			continue;
		fs_addr_str(c->key.family, c->key.src, src, sizeof(src));
		fs_addr_str(c->key.family, c->key.dst, dst, sizeof(dst));
		/* Its exported columns (native.h): where it is in fs_cms. */
		for (row = 0; row < p->cms_depth; row++)
			fprintf(out, "%s\t%u\t%u\t%s\t%s\t%u\t%u\t%u\t%u\n", host,
				c->key.family, c->key.proto, src, dst,
				fs_flow_sport(&c->key), fs_flow_dport(&c->key), row,
				c->cols[row]);
	}
	fprintf(out, "\\.\n");
	return 0;
}

int fs_pgsql_hll_check(const struct fs_native *n)
{
	__u32 p = n->sketch.params.hll_p;

	if (p < FS_PG_HLL_MIN_LOG2M || p > FS_PG_HLL_MAX_LOG2M) {
		fs_error("export: postgresql-hll takes precisions %u to %u, and this sketch has p = %u",
			 FS_PG_HLL_MIN_LOG2M, FS_PG_HLL_MAX_LOG2M, p);
		return -EINVAL;
	}
	return 0;
}

void fs_pgsql_hll_text(FILE *out, const struct fs_native *n,
		       enum fs_hll_sketch s, __u8 *buf)
{
	__u32 p = n->sketch.params.hll_p;
	size_t len = fs_hll_pg_bytes(p), i;

	/* Cannot fail: p is checked and buf is len bytes. */
	fs_hll_export_pg(n->sketch.hll + ((size_t)s << p), p, buf, len);
	fputs("\\x", out);
	for (i = 0; i < len; i++)
		fprintf(out, "%02x", buf[i]);
}

static int write_hlls(FILE *out, const struct fs_native *n, const char *host)
{
	static const char *const names[FS_HLL_NSKETCH] = {
		"flows", "sources", "destinations"
	};
	__u8 *blob = malloc(fs_hll_pg_bytes(n->sketch.params.hll_p));
	__u32 s;

	if (!blob)
		return fs_no_memory();
	fprintf(out, "INSERT INTO fs_hll (host, sketch, value) VALUES\n");
	for (s = 0; s < FS_HLL_NSKETCH; s++) {
		fprintf(out, "    ('%s', '%s', '", host, names[s]);
		fs_pgsql_hll_text(out, n, s, blob);
		fprintf(out, "'::hll)%s\n", s + 1 < FS_HLL_NSKETCH ? "," : ";");
	}
	free(blob);
	return 0;
}

/*
 * Each sketch kind's tables (sketch_kind.h), its check before anything
 * is written, and its rows: a kind without a part is not loaded.
 */
static const struct pg_part {
	const char *schema;
	int (*check)(const struct fs_native *n);
	int (*write)(FILE *out, const struct fs_native *n, const char *host);
} pg_parts[FS_NKINDS] = {
	[FS_KIND_CMS] = { cms_schema, NULL, write_cms },
	[FS_KIND_HLL] = { hll_schema, fs_pgsql_hll_check, write_hlls },
};

int fs_pgsql_write(FILE *out, const struct fs_native *n, const char *host)
{
	const struct fs_sketch_params *p = &n->sketch.params;
	char start[48], end[48];
	int err = 0, k;

	for (k = 0; k < FS_NKINDS && !err; k++)
		if (pg_parts[k].check)
			err = pg_parts[k].check(n);
	if (err)
		return err;
	timestamp(start, sizeof(start), n->start_ns);
	timestamp(end, sizeof(end), n->end_ns);
	fprintf(out, "-- flowsketch export --format pg-sql: host %s, %s .. %s\n"
		"-- (%llu windows, %s), schema in user/flowsketch/pgsql.h; the fleet's\n"
		"-- top talkers: dist/fleet_top.sql.  Run with psql.\n"
		"\\set ON_ERROR_STOP on\n"
		"BEGIN;\n"
		"SET LOCAL client_min_messages = warning;\n%s", host, start, end, (unsigned long long)n->windows,
		dir_name(n->direction), schema);
	for (k = 0; k < FS_NKINDS; k++)
		if (pg_parts[k].schema)
			fputs(pg_parts[k].schema, out);
	fprintf(out, "INSERT INTO fs_fleet (depth, log2w, p, fingerprint)\n"
		"    VALUES (%u, %u, %u, '%016llx') ON CONFLICT (one) DO NOTHING;\n",
		p->cms_depth, p->cms_log2_width, p->hll_p,
		(unsigned long long)n->fingerprint);
	fprintf(out, "DELETE FROM fs_span WHERE host = '%s';\n", host);
	fprintf(out, "INSERT INTO fs_span (host, window_start, window_end, windows, window_seconds,\n"
		"                     direction, depth, log2w, p, fingerprint, packets, bytes)\n"
		"    VALUES ('%s', '%s', '%s', %llu, %llu, '%s', %u, %u, %u, '%016llx', %llu, %llu);\n",
		host, start, end, (unsigned long long)n->windows,
		(unsigned long long)(n->window_ns / 1000000000ULL),
		dir_name(n->direction), p->cms_depth, p->cms_log2_width, p->hll_p,
		(unsigned long long)n->fingerprint,
		(unsigned long long)n->sketch.totals.packets,
		(unsigned long long)n->sketch.totals.bytes);
	for (k = 0; k < FS_NKINDS && !err; k++)
		if (pg_parts[k].write)
			err = pg_parts[k].write(out, n, host);
	if (err)
		return err;
	fprintf(out, "COMMIT;\n");
	return 0;
}
