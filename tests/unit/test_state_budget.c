// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_state_budget.c - the state directory's budget (statebudget.h).
 *
 * The size parser and the default against values worked out by hand; the
 * eviction order against the test's own list of windows in the order they
 * ended; what the directory holds against stat() of its files (the blocks
 * du counts), never against the budget's own sums alone.  The stores work
 * in tmpfs mounts of the test's own under a mkdtemp directory (skipped
 * when not root): one small enough in bytes for the budget to bite, one
 * small enough in inodes for a write to meet ENOSPC although statvfs
 * shows bytes free, which is the path a write that fails for room takes.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "windows/statebudget.h"
#include "windows/winstore.h"

#define DEPTH 4
#define LOG2W 8
#define HLL_P 6
/* A window file with no candidates: header page, 4 x 256 cells of 16
 * bytes, 3 x 64 registers; in 4 KiB blocks. */
#define FILE_BYTES (4096 + 4 * 256 * 16 + 3 * 64)
#define FILE_BLOCKS_BYTES ((FILE_BYTES + 4095) / 4096 * 4096)

static const struct fs_hash_secret secret = { 0x1234, 0x5678 };

/* --- parsing and sizes --------------------------------------------------- */

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		unsigned long long v;
	} good[] = {
		{ "7", 7 }, { "64M", 64ULL << 20 }, { "2G", 2ULL << 30 },
		{ "512k", 512ULL << 10 }, { "1KiB", 1024 }, { "3MB", 3ULL << 20 },
		{ "1T", 1ULL << 40 },
	};
	static const char *const bad[] = {
		"", "M", "5X", "1.5G", "-1", "+1", " 1", "1 ", "12MB7", "1Gi",
		"18446744073709551616", "17179869184G", "16383P", "0x10",
	};
	unsigned long long v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 1;
		assert_int_equal(fsd_parse_size(good[i].s, &v), 0);
		assert_true(v == good[i].v);
	}
	/* The largest that fit: 2^64 - 1 bytes, and 2^24 - 1 T. */
	assert_int_equal(fsd_parse_size("16777215T", &v), 0);
	assert_true(v == 16777215ULL << 40);
	assert_int_equal(fsd_parse_size("18446744073709551615", &v), 0);
	assert_true(v == ~0ULL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		assert_int_equal(fsd_parse_size(bad[i], &v), -EINVAL);
		assert_true(v == 42);	/* untouched */
	}
}

static void test_default_and_bounds(void **state)
{
	struct fs_sketch_params p;

	(void)state;
	/* 16 MiB of 4 KiB blocks: a quarter, 4 MiB (floor of a hundredth,
	 * times 25: 167772 * 25). */
	assert_true(fsd_state_default_max(4096, 4096, 1ULL << 40) == 16777216ULL / 100 * 25);
	/* No size stated (tmpfs size=0): a quarter of the memory. */
	assert_true(fsd_state_default_max(0, 4096, 8ULL << 30) == (8ULL << 30) / 100 * 25);
	/* A size that overflows 64 bits is no size either. */
	assert_true(fsd_state_default_max(1ULL << 60, 1ULL << 10, 400) == 100);
	fs_params_init(&p, DEPTH, LOG2W, HLL_P, 0, &secret);
	assert_true(fsd_state_window_bytes(&p, 4096) == FILE_BLOCKS_BYTES);
	assert_true(fsd_state_window_bytes(&p, 1) == FILE_BYTES);
	assert_true(fsd_state_min_bytes(&p) == FSD_STATE_RESERVE + 3 * FILE_BLOCKS_BYTES);
	/* 10 windows of 100 candidates (4800 bytes: 2 blocks) in each of 3
	 * histories, and two journals of a full set each. */
	assert_true(fsd_state_worst_bytes(&p, 10, 100) ==
		    FSD_STATE_RESERVE + 3 * (10 * (FILE_BLOCKS_BYTES + 8192) + 2 * 8192));
}

/* --- a history and its store --------------------------------------------- */

struct hs {
	struct fsd_history h;
	struct fsd_winstore ws;
	char dir[PATH_MAX];
};

static void hs_open(struct hs *x, const char *dir, __u32 capacity)
{
	struct fs_sketch_params p;

	fs_params_init(&p, DEPTH, LOG2W, HLL_P, 0, &secret);
	snprintf(x->dir, sizeof(x->dir), "%s", dir);
	assert_int_equal(fsd_winstore_open(&x->ws, dir, &p, false), 0);
	assert_true(x->ws.usable);
	memset(&p.secret, 0, sizeof(p.secret));
	assert_int_equal(fsd_history_init(&x->h, &p, capacity, 64, 0), 0);
}

static void hs_close(struct hs *x)
{
	x->ws.budget = NULL;
	fsd_history_free(&x->h);
	fsd_winstore_close(&x->ws);
}

/* Close window seq, ended at end_ns, as the rotation does (rotation.c,
 * commit_window): stored first, then committed mapped.  The put's
 * return. */
static int hs_close_window(struct hs *x, __u64 seq, __u64 end_ns)
{
	struct fs_window_totals ever = { seq + 1, seq + 1 };
	struct fsd_window_map m = { 0 };
	struct fs_sketch *s, view;
	__u64 evicted;
	int err;

	assert_int_equal(fsd_history_begin(&x->h, &s), 0);
	s->totals.packets = 1;
	err = fsd_winstore_put(&x->ws, seq, end_ns - 1000, end_ns, s,
			       &x->h.pending[seq % FS_NSLOTS], &ever, seq + 1,
			       &view, &m);
	assert_int_equal(fsd_history_commit(&x->h, seq, end_ns - 1000, end_ns,
					    err ? NULL : &view, err ? NULL : &m,
					    &evicted), 0);
	fsd_winstore_drop(&x->ws, evicted);
	return err;
}

/* Bytes the window files and journals in dir take (st_blocks: du). */
static unsigned long long du_files(const char *dir)
{
	char path[PATH_MAX + 300];
	unsigned long long sum = 0;
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!lstat(path, &st) && S_ISREG(st.st_mode))
			sum += (unsigned long long)st.st_blocks * 512;
	}
	closedir(d);
	return sum;
}

static bool win_exists(const char *dir, __u64 seq)
{
	char path[PATH_MAX + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/window-%020llu", dir, (unsigned long long)seq);
	return !lstat(path, &st);
}

struct tmp {
	char dir[64], mnt[128];
	bool mounted;
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/fs-test-budget.XXXXXX");
	if (!mkdtemp(t->dir))
		return -1;
	snprintf(t->mnt, sizeof(t->mnt), "%s/fs", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;

	if (t->mounted)
		umount2(t->mnt, MNT_DETACH);	/* busy after a failed assertion */
	rmdir(t->mnt);
	rmdir(t->dir);
	free(t);
	return 0;
}

/* A tmpfs of opts at t->mnt, or skip (not root). */
static void mount_tmpfs(struct tmp *t, const char *opts)
{
	assert_int_equal(mkdir(t->mnt, 0700), 0);
	if (mount("tmpfs", t->mnt, "tmpfs", 0, opts))
		skip();
	t->mounted = true;
}

/* --- eviction order ------------------------------------------------------ */

/*
 * The victim is the history whose oldest window ended first, among those
 * whose store holds a file; ties go to the first added.  Windows closed
 * in memory only (no file) are built here by committing without a view.
 */
static void test_victim_order(void **state)
{
	struct fsd_state_budget b;
	struct hs x[3];
	unsigned int i;
	__u64 seq;
	bool mapped;

	(void)state;
	memset(&b, 0, sizeof(b));
	for (i = 0; i < 3; i++) {
		struct fs_sketch_params p;
		struct fs_sketch *s;
		__u64 ev;

		fs_params_init(&p, DEPTH, LOG2W, HLL_P, 0, &secret);
		memset(&x[i], 0, sizeof(x[i]));
		assert_int_equal(fsd_history_init(&x[i].h, &p, 8, 64, 0), 0);
		fsd_state_budget_add(&b, &x[i].h, &x[i].ws);
		/* Windows 0 and 1, ending at 100 + i and 200 + 10 * i. */
		assert_int_equal(fsd_history_begin(&x[i].h, &s), 0);
		assert_int_equal(fsd_history_commit(&x[i].h, 0, 0, 100 + i, NULL, NULL, &ev), 0);
		assert_int_equal(fsd_history_begin(&x[i].h, &s), 0);
		assert_int_equal(fsd_history_commit(&x[i].h, 1, 0, 200 + 10 * i, NULL, NULL, &ev), 0);
		x[i].ws.files = 2;
	}
	assert_int_equal(fsd_state_budget_victim(&b), 0);	/* ended at 100 */
	x[0].ws.files = 0;					/* nothing on disk */
	assert_int_equal(fsd_state_budget_victim(&b), 1);	/* 101 */
	x[0].ws.files = 2;
	assert_int_equal(fsd_history_evict_oldest(&x[0].h, &seq, &mapped), 0);
	assert_true(seq == 0 && !mapped);
	assert_int_equal(fsd_state_budget_victim(&b), 1);	/* 101 < 102 < 200 */
	assert_int_equal(fsd_history_evict_oldest(&x[1].h, &seq, &mapped), 0);
	assert_int_equal(fsd_state_budget_victim(&b), 2);	/* 102 */
	assert_int_equal(fsd_history_evict_oldest(&x[2].h, &seq, &mapped), 0);
	/* 200, 210, 220 left: the first. */
	assert_int_equal(fsd_state_budget_victim(&b), 0);
	/* A tie goes to the first added: user 2's window 1 ends at 200 too. */
	x[2].h.ring[1].end_ns = 200;
	assert_int_equal(fsd_state_budget_victim(&b), 0);
	assert_int_equal(fsd_history_evict_oldest(&x[0].h, &seq, &mapped), 0);
	assert_true(seq == 1);
	assert_int_equal(fsd_state_budget_victim(&b), 2);	/* 200 < 210 */
	/* An emptied ring is never a victim, and says so. */
	assert_int_equal(x[0].h.count, 0);
	assert_int_equal(fsd_history_evict_oldest(&x[0].h, &seq, &mapped), -ENOENT);
	assert_null(fsd_history_window(&x[0].h, 0));
	for (i = 0; i < 3; i++)
		fsd_history_free(&x[i].h);
}

/*
 * Two stores sharing a budget of five windows (and the reserve), windows
 * closed alternately in each: after every window the files kept are the
 * five that ended last, whichever store they are in, du of both
 * directories fits the budget, and each history holds its files only.
 */
static void test_budget_keeps_newest(void **state)
{
	struct tmp *t = *state;
	unsigned long long max = FSD_STATE_RESERVE + 5 * FILE_BLOCKS_BYTES;
	struct fsd_state_budget b;
	char da[PATH_MAX], db[PATH_MAX];
	struct hs *a = calloc(1, sizeof(*a)), *c = calloc(1, sizeof(*c));
	unsigned int r, k, kept_a, kept_c;

	assert_non_null(a);
	assert_non_null(c);
	mount_tmpfs(t, "size=4m,mode=0700");
	snprintf(da, sizeof(da), "%s/a", t->mnt);
	snprintf(db, sizeof(db), "%s/b", t->mnt);
	hs_open(a, da, 100);
	hs_open(c, db, 100);
	fsd_state_budget_init(&b, t->mnt, max);
	assert_true(b.max == max && b.block == 4096);
	fsd_state_budget_add(&b, &a->h, &a->ws);
	fsd_state_budget_add(&b, &c->h, &c->ws);
	for (r = 0; r < 12; r++) {
		/* The order they end in: a's window r, then c's. */
		assert_int_equal(hs_close_window(a, r, 1000000ULL * r + 10), 0);
		assert_int_equal(hs_close_window(c, r, 1000000ULL * r + 20), 0);
		assert_true(du_files(da) + du_files(db) + FSD_STATE_RESERVE <= max);
		assert_true(b.used <= max);
		assert_true(b.used == FSD_STATE_RESERVE + du_files(da) + du_files(db));
		/* The five that ended last of the 2 (r + 1) closed: c's r,
		 * a's r, c's r - 1, a's r - 1, c's r - 2. */
		kept_a = kept_c = 0;
		for (k = 0; k <= r; k++) {
			bool want_a = 2 * (r - k) + 1 < 5, want_c = 2 * (r - k) < 5;

			assert_int_equal(win_exists(da, k), want_a);
			assert_int_equal(win_exists(db, k), want_c);
			kept_a += want_a;
			kept_c += want_c;
		}
		assert_int_equal(a->h.count, kept_a);
		assert_int_equal(c->h.count, kept_c);
		assert_true(a->ws.files == kept_a && c->ws.files == kept_c);
	}
	assert_true(b.evicted == 2 * 12 - 5);
	assert_true(a->ws.evicted + c->ws.evicted == b.evicted);
	assert_true(b.no_room == 0);	/* the budget bit, not the fs */
	assert_true(a->ws.errors == 0 && c->ws.errors == 0);
	/* The newest window still answers from its file. */
	assert_true(fsd_history_window(&c->h, 0)->seq == 11);
	assert_non_null(fsd_history_window(&c->h, 0)->map.addr);
	hs_close(a);
	hs_close(c);
	fsd_winstore_clear(da);
	fsd_winstore_clear(db);
	free(a);
	free(c);
}

/*
 * ENOSPC on the write itself: a tmpfs with bytes to spare but inodes for
 * five windows only (and the root), and a budget far above it.  The
 * sixth window's file cannot be created; the store evicts the oldest
 * window and writes it, never failing the window nor backing off.
 */
static void test_enospc_evicts(void **state)
{
	struct tmp *t = *state;
	struct fsd_state_budget b;
	struct hs *x = calloc(1, sizeof(*x));
	unsigned int i;

	assert_non_null(x);
	mount_tmpfs(t, "size=4m,nr_inodes=6,mode=0700");
	hs_open(x, t->mnt, 100);
	fsd_state_budget_init(&b, t->mnt, 1ULL << 30);
	fsd_state_budget_add(&b, &x->h, &x->ws);
	for (i = 0; i < 5; i++)
		assert_int_equal(hs_close_window(x, i, 1000 * (i + 1)), 0);
	assert_int_equal(b.evicted, 0);
	for (i = 5; i < 9; i++) {
		assert_int_equal(hs_close_window(x, i, 1000 * (i + 1)), 0);
		assert_true(win_exists(t->mnt, i));
		assert_false(win_exists(t->mnt, i - 5));	/* the oldest went */
		assert_true(win_exists(t->mnt, i - 4));
		assert_int_equal(x->h.count, 5);
	}
	assert_true(b.evicted == 4 && b.no_room == 4 && x->ws.evicted == 4);
	assert_true(x->ws.errors == 0 && x->ws.backoff == 0);
	assert_true(b.used == FSD_STATE_RESERVE + du_files(t->mnt));
	hs_close(x);
	fsd_winstore_clear(t->mnt);
	free(x);
}

/*
 * Journals are charged as they grow and released when their window is
 * done: a journal that would pass the budget evicts a finished window.
 */
static void test_journal_charged(void **state)
{
	struct tmp *t = *state;
	unsigned long long max = FSD_STATE_RESERVE + 2 * FILE_BLOCKS_BYTES + 4096;
	struct fsd_state_budget b;
	struct fs_flow_key k;
	struct hs *x = calloc(1, sizeof(*x));
	unsigned int i;

	assert_non_null(x);
	mount_tmpfs(t, "size=4m,mode=0700");
	hs_open(x, t->mnt, 100);
	fsd_state_budget_init(&b, t->mnt, max);
	fsd_state_budget_add(&b, &x->h, &x->ws);
	assert_int_equal(hs_close_window(x, 0, 1000), 0);
	assert_int_equal(hs_close_window(x, 1, 2000), 0);
	assert_int_equal(b.evicted, 0);
	/* 100 records (4800 bytes, two blocks) for pending window 2: one
	 * block fits beside the two windows, two do not. */
	memset(&k, 0, sizeof(k));
	k.family = FS_FAMILY_IPV4;
	for (i = 0; i < 100; i++) {
		k.sport = (__be16)i;
		fsd_winstore_note(&x->ws, 2, &k, i);
	}
	fsd_winstore_flush(&x->ws);
	assert_int_equal(b.evicted, 1);
	assert_false(win_exists(t->mnt, 0));
	assert_true(win_exists(t->mnt, 1));
	assert_true(b.used == FSD_STATE_RESERVE + du_files(t->mnt));
	assert_true(b.used <= max);
	fsd_winstore_forget(&x->ws, 2);
	assert_true(b.used == FSD_STATE_RESERVE + FILE_BLOCKS_BYTES);
	assert_true(x->ws.journal_errors == 0);
	hs_close(x);
	fsd_winstore_clear(t->mnt);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_default_and_bounds),
		cmocka_unit_test(test_victim_order),
		cmocka_unit_test_setup_teardown(test_budget_keeps_newest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enospc_evicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_charged, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
