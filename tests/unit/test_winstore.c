// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_winstore.c - finished windows kept in files (winstore.h).
 *
 * Every test works in a directory of its own under /tmp (mkdtemp), never
 * in the daemon's /run/flowsketch.  The oracle is the test's own: windows
 * are built with known contents (cells, registers and totals from a seeded
 * PRNG, candidate keys of both families written by hand), what the store
 * hands back is compared byte for byte with those copies, and the files it
 * should refuse are written here, byte by byte, from the layout documented
 * in winstore.h, never with the store's own writer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "windows/winstore.h"

#define DEPTH 4
#define LOG2W 8
#define HLL_P 6
#define CMS_BYTES (((size_t)DEPTH << LOG2W) * 16)
#define HLL_BYTES ((size_t)3 << HLL_P)
#define CAND_LIMIT 1024
#define MAX_CAND 400
/* What the history had counted before the test's first window: a
 * window's totals and its "ever" values differ even in a one-window test. */
#define EVER_BEFORE { 5000000, 4000000000ULL }

static const struct fs_hash_secret secret = {
	0x8d1f3a5c7e92b46fULL, 0x1c2b3a4958677685ULL
};
static const struct fs_hash_secret other_secret = {
	0x0123456789abcdefULL, 0xfedcba9876543210ULL
};

static void make_params(struct fs_sketch_params *p, __u32 depth,
			const struct fs_hash_secret *s)
{
	fs_params_init(p, depth, LOG2W, HLL_P, FS_PARAM_F_CONSERVATIVE, s);
}

/* splitmix64: the test's own PRNG, seeded per test. */
static __u64 prng_state;

static void prng_seed(__u64 seed)
{
	prng_state = seed;
}

static __u64 rnd(void)
{
	__u64 z = (prng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* --- windows with known contents -------------------------------------- */

/* Each test's directory, its params (DEPTH, secret) and the history's
 * "ever" values its windows carry on from. */
struct state {
	char dir[PATH_MAX];
	struct fs_sketch_params p;
	struct fs_window_totals ever;
};

struct win {
	struct fs_sketch_params params;	/* with the secret */
	__u64 seq, start_ns, end_ns;
	struct fs_sketch s;
	struct fsd_candidates c;
	struct fsd_candidate rec[MAX_CAND];	/* the keys added to c */
	__u32 n;
	struct fs_window_totals ever;
	__u64 ever_windows;
};

/* A key no other window or index shares: seq and j are in its source. */
static void make_key(struct fs_flow_key *k, __u64 seq, __u32 j)
{
	unsigned int i;

	memset(k, 0, sizeof(*k));
	k->proto = j % 3 == 0 ? 6 : j % 3 == 1 ? 17 : 1;
	k->sport = (__be16)(rnd() & 0xffff);
	k->dport = (__be16)(rnd() & 0xffff);
	if (j & 1) {
		k->family = FS_FAMILY_IPV6;
		k->src[0] = 0x20;
		k->src[1] = 0x01;
		k->src[2] = 0x0d;
		k->src[3] = 0xb8;
		for (i = 4; i < 12; i++)
			k->src[i] = (__u8)rnd();
		k->src[12] = (__u8)seq;
		k->src[13] = (__u8)(seq >> 8);
		k->src[14] = (__u8)(j >> 8);
		k->src[15] = (__u8)j;
		for (i = 0; i < 16; i++)
			k->dst[i] = (__u8)rnd();
	} else {
		k->family = FS_FAMILY_IPV4;
		k->src[0] = 10;
		k->src[1] = (__u8)seq;
		k->src[2] = (__u8)(j >> 8);
		k->src[3] = (__u8)j;
		for (i = 0; i < 4; i++)
			k->dst[i] = (__u8)rnd();
	}
}

/* Window seq of params p with ncand candidates, its "ever" values
 * carrying on from *ever (updated). */
static struct win *make_win(const struct fs_sketch_params *p, __u64 seq,
			    __u32 ncand, struct fs_window_totals *ever)
{
	struct win *w = calloc(1, sizeof(*w));
	size_t i, ncells, nregs;
	__u32 j;

	assert_non_null(w);
	assert_true(ncand <= MAX_CAND);
	w->params = *p;
	w->seq = seq;
	w->start_ns = 1000000000ULL * seq + rnd() % 1000;
	w->end_ns = w->start_ns + 999999000ULL + rnd() % 1000;
	assert_int_equal(fs_sketch_init(&w->s, p), 0);
	ncells = (size_t)p->cms_depth << p->cms_log2_width;
	nregs = (size_t)3 << p->hll_p;
	for (i = 0; i < ncells; i++) {
		w->s.cms[i].packets = rnd();
		w->s.cms[i].bytes = rnd();
	}
	for (i = 0; i < nregs; i++)
		w->s.hll[i] = (__u8)(rnd() % 60);
	w->s.totals.packets = 1 + rnd() % 1000000;
	w->s.totals.bytes = w->s.totals.packets * (64 + rnd() % 1400);
	fsd_candidates_init(&w->c, CAND_LIMIT);
	for (j = 0; j < ncand; j++) {
		make_key(&w->rec[j].key, seq, j);
		w->rec[j].hash = rnd();
		assert_int_equal(fsd_candidates_add(&w->c, &w->rec[j].key,
						    w->rec[j].hash), 1);
	}
	w->n = ncand;
	ever->packets += w->s.totals.packets;
	ever->bytes += w->s.totals.bytes;
	w->ever = *ever;
	w->ever_windows = 1000 + seq;
	return w;
}

static void free_win(struct win *w)
{
	fs_sketch_free(&w->s);
	fsd_candidates_free(&w->c);
	free(w);
}

/* Window seq of the test's params with ncand candidates. */
static struct win *new_win(struct state *st, __u64 seq, __u32 ncand)
{
	return make_win(&st->p, seq, ncand, &st->ever);
}

static void free_wins(struct win *const *w, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		free_win(w[i]);
}

static int cmp_record(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fsd_candidate));
}

/* n records (48 bytes each) equal, as sets, to w's candidates. */
static void assert_same_candidates(const struct win *w,
				   const struct fsd_candidate *got, size_t n)
{
	struct fsd_candidate *a, *b;

	assert_int_equal(n, w->n);
	if (!n)
		return;
	a = calloc(n, sizeof(*a));
	b = calloc(n, sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	memcpy(a, got, n * sizeof(*a));
	memcpy(b, w->rec, n * sizeof(*b));
	qsort(a, n, sizeof(*a), cmp_record);
	qsort(b, n, sizeof(*b), cmp_record);
	assert_memory_equal(a, b, n * sizeof(*a));
	free(a);
	free(b);
}

static void assert_set_is(const struct fsd_candidates *c, const struct win *w)
{
	struct fsd_candidate *got = calloc(c->count + 1, sizeof(*got));
	size_t n = 0;
	__u32 i;

	assert_non_null(got);
	for (i = 0; i < c->capacity; i++)
		if (fsd_candidate_used(&c->slots[i])) {
			assert_true(n < c->count);
			got[n++] = c->slots[i];
		}
	assert_int_equal(n, c->count);
	assert_same_candidates(w, got, n);
	free(got);
}

static size_t file_len(const struct win *w)
{
	return FSD_WINFILE_DATA + CMS_BYTES + HLL_BYTES +
	       (size_t)w->n * sizeof(struct fsd_candidate);
}

/* A view (and its mapping) from fsd_winstore_put reads w's contents. */
static void assert_view_is(const struct win *w, const struct fs_sketch *view,
			   const struct fsd_window_map *m)
{
	assert_non_null(m->addr);
	assert_int_equal(m->len, file_len(w));
	assert_ptr_equal(view->cms, (char *)m->addr + FSD_WINFILE_DATA);
	assert_ptr_equal(view->hll,
			 (char *)m->addr + FSD_WINFILE_DATA + CMS_BYTES);
	assert_int_equal(view->params.cms_depth, w->params.cms_depth);
	assert_int_equal(view->params.cms_log2_width, w->params.cms_log2_width);
	assert_int_equal(view->params.hll_p, w->params.hll_p);
	assert_memory_equal(view->cms, w->s.cms, CMS_BYTES);
	assert_memory_equal(view->hll, w->s.hll, HLL_BYTES);
	assert_memory_equal(&view->totals, &w->s.totals, sizeof(view->totals));
}

/* A restored window of the history is w. */
static void assert_window_is(const struct fsd_window *hw, const struct win *w)
{
	assert_non_null(hw);
	assert_int_equal(hw->seq, w->seq);
	assert_int_equal(hw->start_ns, w->start_ns);
	assert_int_equal(hw->end_ns, w->end_ns);
	assert_non_null(hw->map.addr);
	assert_memory_equal(hw->sketch.cms, w->s.cms, CMS_BYTES);
	assert_memory_equal(hw->sketch.hll, w->s.hll, HLL_BYTES);
	assert_memory_equal(&hw->sketch.totals, &w->s.totals,
			    sizeof(hw->sketch.totals));
	assert_set_is(&hw->candidates, w);
}

static void put_win(struct fsd_winstore *ws, const struct win *w)
{
	struct fsd_window_map m = { 0 };
	struct fs_sketch view;

	assert_int_equal(fsd_winstore_put(ws, w->seq, w->start_ns, w->end_ns,
					  &w->s, &w->c, &w->ever,
					  w->ever_windows, &view, &m), 0);
	assert_view_is(w, &view, &m);
	assert_int_equal(munmap(m.addr, m.len), 0);
}

/* n windows put by a store of their own, opened afresh on dir, closed. */
static void store_wins(const char *dir, const struct fs_sketch_params *p,
		       struct win *const *w, unsigned int n)
{
	struct fsd_winstore ws;
	unsigned int i;

	assert_int_equal(fsd_winstore_open(&ws, dir, p, false), 0);
	for (i = 0; i < n; i++)
		put_win(&ws, w[i]);
	fsd_winstore_close(&ws);
}

/* --- files, by hand ------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *st, int type,
		    struct FTW *f)
{
	return remove(path);
}

static int setup(void **state)
{
	struct state *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	strcpy(s->dir, "/tmp/test_winstore.XXXXXX");
	if (!mkdtemp(s->dir)) {
		free(s);
		return -1;
	}
	make_params(&s->p, DEPTH, &secret);
	s->ever = (struct fs_window_totals)EVER_BEFORE;
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct state *s = *state;
	char mnt[PATH_MAX + 16];

	/* test_full_disk_backoff's tmpfs, if a failed check left it. */
	snprintf(mnt, sizeof(mnt), "%s/fs", s->dir);
	umount2(mnt, MNT_DETACH);
	nftw(s->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(s);
	return 0;
}

static void win_name(char *buf, size_t len, const char *dir, __u64 seq)
{
	assert_true(snprintf(buf, len, "%s/window-%020llu", dir,
			     (unsigned long long)seq) < (int)len);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static bool win_exists(const char *dir, __u64 seq)
{
	char path[PATH_MAX];

	win_name(path, sizeof(path), dir, seq);
	return exists(path);
}

static unsigned char *read_all(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	buf = malloc(*len + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, *len), (ssize_t)*len);
	close(fd);
	return buf;
}

static void write_all(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void write_win_file(const char *dir, __u64 seq, const void *buf,
			   size_t len)
{
	char path[PATH_MAX];

	win_name(path, sizeof(path), dir, seq);
	write_all(path, buf, len);
}

static void put32(unsigned char *p, __u32 v)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, __u64 v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static __u32 get32(const unsigned char *p)
{
	__u32 v = 0;
	unsigned int i;

	for (i = 0; i < 4; i++)
		v |= (__u32)p[i] << (8 * i);
	return v;
}

static __u64 get64(const unsigned char *p)
{
	__u64 v = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		v |= (__u64)p[i] << (8 * i);
	return v;
}

/* The 32 bytes of params as params.h lays them out, secret zeroed. */
static void params_bytes(unsigned char *b, const struct fs_sketch_params *p)
{
	memset(b, 0, 32);
	put32(b, FS_PARAMS_MAGIC);
	b[4] = FS_PARAMS_VERSION;
	b[5] = p->cms_depth;
	b[6] = p->cms_log2_width;
	b[7] = p->hll_p;
	b[8] = p->flags;
	b[9] = p->nslots;
}

/* Window w as a file, from the layout in winstore.h (candidates in the
 * order they were added). */
static unsigned char *build_image(const struct win *w, size_t *len)
{
	const struct fs_sketch_params *p = &w->params;
	size_t c = ((size_t)p->cms_depth << p->cms_log2_width) * 16;
	size_t h = (size_t)3 << p->hll_p, i;
	unsigned char *b;

	*len = FSD_WINFILE_DATA + c + h + (size_t)w->n * 48;
	b = calloc(1, *len + 1);
	assert_non_null(b);
	memcpy(b, "FSWINDOW", 8);
	put32(b + 8, 1);
	put32(b + 12, 4096);
	params_bytes(b + 16, p);
	put64(b + 48, fs_params_fingerprint(&p->secret));
	put64(b + 56, w->seq);
	put64(b + 64, w->start_ns);
	put64(b + 72, w->end_ns);
	put64(b + 80, w->s.totals.packets);
	put64(b + 88, w->s.totals.bytes);
	put64(b + 96, w->ever.packets);
	put64(b + 104, w->ever.bytes);
	put64(b + 112, w->ever_windows);
	put64(b + 120, c);
	put64(b + 128, h);
	put64(b + 136, w->n);
	for (i = 0; i < c / 16; i++) {
		put64(b + 4096 + 16 * i, w->s.cms[i].packets);
		put64(b + 4096 + 16 * i + 8, w->s.cms[i].bytes);
	}
	memcpy(b + 4096 + c, w->s.hll, h);
	for (i = 0; i < w->n; i++) {
		unsigned char *r = b + 4096 + c + h + 48 * i;

		memcpy(r, &w->rec[i].key, 40);
		put64(r + 40, w->rec[i].hash);
	}
	return b;
}

/* w's image as window file seq of dir, its last cut bytes left off. */
static void write_image(const char *dir, __u64 seq, const struct win *w,
			size_t cut)
{
	size_t len;
	unsigned char *img = build_image(w, &len);

	write_win_file(dir, seq, img, len - cut);
	free(img);
}

/* The names in dir, sorted, joined by spaces. */
static void dir_listing(const char *dir, char *out, size_t len)
{
	struct dirent **names;
	int n, i;

	out[0] = '\0';
	n = scandir(dir, &names, NULL, alphasort);
	assert_true(n >= 0);
	for (i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			if (out[0])
				strncat(out, " ", len - strlen(out) - 1);
			strncat(out, names[i]->d_name, len - strlen(out) - 1);
		}
		free(names[i]);
	}
	free(names);
}

static void touch(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];

	assert_true(snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path));
	write_all(path, text, strlen(text));
}

/* --- tests ------------------------------------------------------------------ */

/* Three windows put, locked against a second store, read back by the next. */
static void test_round_trip(void **state)
{
	struct state *st = *state;
	struct fsd_winstore ws, ws2, ws3;
	struct fsd_history h;
	struct win *w[3];
	__u64 last_end = 12345;
	unsigned int i;

	prng_seed(1);
	w[0] = new_win(st, 5, 300);
	w[1] = new_win(st, 6, 0);
	w[2] = new_win(st, 8, 257);

	assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, false), 0);
	assert_true(ws.usable);
	for (i = 0; i < 3; i++)
		put_win(&ws, w[i]);
	assert_int_equal(ws.stored, 3);

	/* One daemon per directory: a second is refused, and removes
	 * nothing even when it would start afresh. */
	assert_int_equal(fsd_winstore_open(&ws2, st->dir, &st->p, false), -EBUSY);
	for (i = 0; i < 3; i++)
		assert_true(win_exists(st->dir, w[i]->seq));
	fsd_winstore_close(&ws);

	assert_int_equal(fsd_winstore_open(&ws3, st->dir, &st->p, true), 0);
	for (i = 0; i < 3; i++)
		assert_true(win_exists(st->dir, w[i]->seq));
	assert_int_equal(fsd_history_init(&h, &st->p, 10, CAND_LIMIT, 9), 0);
	assert_int_equal(fsd_winstore_load(&ws3, &h, 9, &last_end), 3);
	assert_int_equal(h.count, 3);
	assert_window_is(fsd_history_window(&h, 0), w[2]);
	assert_window_is(fsd_history_window(&h, 1), w[1]);
	assert_window_is(fsd_history_window(&h, 2), w[0]);
	assert_null(fsd_history_window(&h, 3));
	assert_int_equal(h.totals.packets, w[2]->ever.packets);
	assert_int_equal(h.totals.bytes, w[2]->ever.bytes);
	assert_int_equal(h.windows_before + h.windows_finished, w[2]->ever_windows);
	assert_int_equal(last_end, w[2]->end_ns);
	/* Read, not consumed: the files stay for the daemon after this one. */
	for (i = 0; i < 3; i++)
		assert_true(win_exists(st->dir, w[i]->seq));
	fsd_history_free(&h);
	fsd_winstore_close(&ws3);
	free_wins(w, 3);
}

/* The view reads the file's mapping: the same cells as the sketch put,
 * and still so once the caller reuses that sketch. */
static void test_view_reads_mapping(void **state)
{
	struct state *st = *state;
	struct fsd_winstore ws;
	struct fsd_window_map m = { 0 };
	struct fs_sketch view;
	struct win *w;
	void *cms_copy, *hll_copy;

	prng_seed(2);
	w = new_win(st, 41, 120);
	assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, false), 0);
	assert_int_equal(fsd_winstore_put(&ws, w->seq, w->start_ns, w->end_ns,
					  &w->s, &w->c, &w->ever,
					  w->ever_windows, &view, &m), 0);
	assert_view_is(w, &view, &m);
	assert_true((void *)view.cms != (void *)w->s.cms);

	cms_copy = malloc(CMS_BYTES);
	hll_copy = malloc(HLL_BYTES);
	assert_non_null(cms_copy);
	assert_non_null(hll_copy);
	memcpy(cms_copy, w->s.cms, CMS_BYTES);
	memcpy(hll_copy, w->s.hll, HLL_BYTES);
	/* The spare is reset for the next window: the view must not care. */
	memset(w->s.cms, 0xa5, CMS_BYTES);
	memset(w->s.hll, 0x5a, HLL_BYTES);
	assert_memory_equal(view.cms, cms_copy, CMS_BYTES);
	assert_memory_equal(view.hll, hll_copy, HLL_BYTES);

	assert_int_equal(munmap(m.addr, m.len), 0);
	fsd_winstore_close(&ws);
	free(cms_copy);
	free(hll_copy);
	free_win(w);
}

/* The file on disk is the documented layout, and holds no secret. */
static void test_file_layout(void **state)
{
	struct state *st = *state;
	struct fsd_winstore ws;
	char dir[PATH_MAX], path[PATH_MAX], listing[4096];
	unsigned char pb[32], *file, *image;
	size_t len, ilen;
	struct stat sb;
	struct win *w;
	__u64 n;

	prng_seed(3);
	w = new_win(st, 5, 300);
	/* A directory that is not there yet, two levels deep: made 0700. */
	assert_true(snprintf(dir, sizeof(dir), "%s/state/sub", st->dir) < (int)sizeof(dir));
	assert_int_equal(fsd_winstore_open(&ws, dir, &st->p, false), 0);
	assert_true(ws.usable);
	assert_int_equal(stat(dir, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0700);
	put_win(&ws, w);
	fsd_winstore_close(&ws);

	/* The finished name only: no .tmp left behind. */
	dir_listing(dir, listing, sizeof(listing));
	assert_string_equal(listing, "window-00000000000000000005");
	win_name(path, sizeof(path), dir, 5);
	file = read_all(path, &len);
	n = 300;
	assert_int_equal(len, 4096 + CMS_BYTES + HLL_BYTES + 48 * n);

	assert_memory_equal(file, "FSWINDOW", 8);
	assert_int_equal(get32(file + 8), 1);
	assert_int_equal(get32(file + 12), 4096);
	params_bytes(pb, &st->p);
	assert_memory_equal(file + 16, pb, 32);
	assert_int_equal(get64(file + 48), fs_params_fingerprint(&secret));
	assert_int_equal(get64(file + 56), 5);
	assert_int_equal(get64(file + 64), w->start_ns);
	assert_int_equal(get64(file + 72), w->end_ns);
	assert_int_equal(get64(file + 80), w->s.totals.packets);
	assert_int_equal(get64(file + 88), w->s.totals.bytes);
	assert_int_equal(get64(file + 96), w->ever.packets);
	assert_int_equal(get64(file + 104), w->ever.bytes);
	assert_int_equal(get64(file + 112), w->ever_windows);
	assert_int_equal(get64(file + 120), CMS_BYTES);
	assert_int_equal(get64(file + 128), HLL_BYTES);
	assert_int_equal(get64(file + 136), n);

	/* Header, zeros, cells and registers byte for byte against the
	 * test's own image; the candidates (a hash table's order) as a set. */
	image = build_image(w, &ilen);
	assert_int_equal(ilen, len);
	assert_memory_equal(file, image, 4096 + CMS_BYTES + HLL_BYTES);
	assert_same_candidates(w, (const struct fsd_candidate *)
			       (file + 4096 + CMS_BYTES + HLL_BYTES), n);

	/* The secret, whole or either half, is nowhere in the file. */
	assert_null(memmem(file, len, &secret, sizeof(secret)));
	assert_null(memmem(file, len, &secret.k0, sizeof(secret.k0)));
	assert_null(memmem(file, len, &secret.k1, sizeof(secret.k1)));
	free(file);
	free(image);
	free_win(w);
}

/*
 * Files a reader must refuse, each removed and not restored, among good
 * ones (three put, one written here) that are restored.
 */
static void test_refusals(void **state)
{
	struct state *st = *state;
	struct fs_sketch_params p3;
	struct fsd_winstore ws;
	struct fsd_history h;
	char from[PATH_MAX], to[PATH_MAX], listing[4096];
	struct win *good[5], *bad, *bad3;
	unsigned char *img;
	size_t len;
	__u64 last_end = 0, seq;
	unsigned int i;

	prng_seed(4);
	make_params(&p3, DEPTH - 1, &secret);
	good[0] = new_win(st, 1, 100);
	good[1] = new_win(st, 2, 0);
	good[2] = new_win(st, 3, 60);
	good[3] = new_win(st, 4, 80);	/* written by the test */
	good[4] = new_win(st, 5, 30);	/* renamed to 7 */
	bad = new_win(st, 0, 40);	/* seq set per file */
	bad3 = make_win(&p3, 13, 40, &st->ever);

	assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, false), 0);
	put_win(&ws, good[0]);
	put_win(&ws, good[1]);
	put_win(&ws, good[2]);
	put_win(&ws, good[4]);
	fsd_winstore_close(&ws);

	/* A good file of the test's own making. */
	write_image(st->dir, 4, good[3], 0);

	/* Its name says 7, its header 5. */
	win_name(from, sizeof(from), st->dir, 5);
	win_name(to, sizeof(to), st->dir, 7);
	assert_int_equal(rename(from, to), 0);

	for (seq = 10; seq <= 20; seq++) {
		if (seq == 13) {	/* another depth, sizes to match it */
			write_image(st->dir, seq, bad3, 0);
			continue;
		}
		bad->seq = seq;
		img = build_image(bad, &len);
		switch (seq) {
		case 10:	/* another magic */
			img[7] = 'X';
			break;
		case 11:	/* version 2 */
			put32(img + 8, 2);
			break;
		case 12:	/* the cells elsewhere */
			put32(img + 12, 8192);
			break;
		case 14:	/* truncated by one byte */
			len--;
			break;
		case 15:	/* one byte longer (build_image left it zero) */
			len++;
			break;
		case 16:	/* another secret's fingerprint */
			put64(img + 48, fs_params_fingerprint(&other_secret));
			break;
		case 17:	/* one candidate more than the file holds */
			put64(img + 136, bad->n + 1);
			break;
		case 18:	/* length consistent, Count-Min size wrong */
			put64(img + 120, CMS_BYTES - 48);
			put64(img + 136, bad->n + 1);
			break;
		case 19:	/* shorter than the header */
			len = 100;
			break;
		case 20:	/* a header, but no page of cells */
			len = 4095;
			break;
		}
		write_win_file(st->dir, seq, img, len);
		free(img);
	}
	/* At or after before_seq: not a finished window's. */
	bad->seq = 25;
	write_image(st->dir, 25, bad, 0);
	bad->seq = 30;
	img = build_image(bad, &len);
	write_win_file(st->dir, 30, img, len);
	/* A writer's leftover, whole or not. */
	touch(st->dir, "window-00000000000000000009.tmp", "half a window");
	write_all(strcat(strcpy(from, st->dir), "/window-00000000000000000031.tmp"),
		  img, len);
	free(img);
	touch(st->dir, "notes.txt", "not a window");

	assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, true), 0);
	/* The leftovers go at open, before any load. */
	assert_false(exists(from));
	assert_true(snprintf(from, sizeof(from), "%s/window-00000000000000000009.tmp",
			     st->dir) < (int)sizeof(from));
	assert_false(exists(from));

	assert_int_equal(fsd_history_init(&h, &st->p, 32, CAND_LIMIT, 25), 0);
	assert_int_equal(fsd_winstore_load(&ws, &h, 25, &last_end), 4);
	assert_int_equal(h.count, 4);
	for (i = 0; i < 4; i++)
		assert_window_is(fsd_history_window(&h, i), good[3 - i]);
	assert_int_equal(h.totals.packets, good[3]->ever.packets);
	assert_int_equal(h.totals.bytes, good[3]->ever.bytes);
	assert_int_equal(h.windows_before + h.windows_finished, good[3]->ever_windows);
	assert_int_equal(last_end, good[3]->end_ns);

	dir_listing(st->dir, listing, sizeof(listing));
	assert_string_equal(listing, "notes.txt "
			    "window-00000000000000000001 "
			    "window-00000000000000000002 "
			    "window-00000000000000000003 "
			    "window-00000000000000000004");
	fsd_history_free(&h);
	fsd_winstore_close(&ws);
	free_wins(good, 5);
	free_win(bad);
	free_win(bad3);
}

/* A store of another secret refuses (and removes) every window. */
static void test_other_secret_refused(void **state)
{
	struct state *st = *state;
	struct fs_sketch_params q;
	struct fsd_winstore ws;
	struct fsd_history h;
	char listing[4096];
	struct win *w[2];
	__u64 last_end = 777;

	prng_seed(5);
	make_params(&q, DEPTH, &other_secret);
	w[0] = new_win(st, 5, 50);
	w[1] = new_win(st, 6, 70);
	store_wins(st->dir, &st->p, w, 2);

	assert_int_equal(fsd_winstore_open(&ws, st->dir, &q, true), 0);
	assert_true(win_exists(st->dir, 5));
	assert_int_equal(fsd_history_init(&h, &q, 10, CAND_LIMIT, 7), 0);
	assert_int_equal(fsd_winstore_load(&ws, &h, 7, &last_end), 0);
	assert_int_equal(h.count, 0);
	assert_int_equal(last_end, 0);
	assert_int_equal(h.windows_before + h.windows_finished, 0);
	dir_listing(st->dir, listing, sizeof(listing));
	assert_string_equal(listing, "");
	fsd_history_free(&h);
	fsd_winstore_close(&ws);
	free_wins(w, 2);
}

/* keep_files=false: every window file goes at open, nothing else does. */
static void test_open_without_keep(void **state)
{
	struct state *st = *state;
	struct fsd_winstore ws;
	struct fsd_history h;
	char listing[4096];
	struct win *w[3];
	__u64 last_end = 1;
	unsigned int i;

	prng_seed(6);
	for (i = 0; i < 3; i++)
		w[i] = new_win(st, 2 + i, 90);
	store_wins(st->dir, &st->p, w, 3);
	touch(st->dir, "window-00000000000000000005.tmp", "half a window");
	touch(st->dir, "other", "not a window");

	assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, false), 0);
	dir_listing(st->dir, listing, sizeof(listing));
	assert_string_equal(listing, "other");
	assert_int_equal(fsd_history_init(&h, &st->p, 10, CAND_LIMIT, 5), 0);
	assert_int_equal(fsd_winstore_load(&ws, &h, 5, &last_end), 0);
	assert_int_equal(h.count, 0);
	assert_int_equal(last_end, 0);
	fsd_history_free(&h);
	fsd_winstore_close(&ws);
	free_wins(w, 3);
}

/* Twelve windows into a history of five: the newest five. */
static void test_capacity(void **state)
{
	struct state *st = *state;
	struct fsd_winstore ws;
	struct fsd_history h;
	struct win *w[12];
	__u64 last_end = 0;
	unsigned int i;

	prng_seed(7);
	for (i = 0; i < 12; i++)
		w[i] = new_win(st, 1 + i, 20 + 3 * i);
	store_wins(st->dir, &st->p, w, 12);

	assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, true), 0);
	assert_int_equal(fsd_history_init(&h, &st->p, 5, CAND_LIMIT, 13), 0);
	assert_int_equal(fsd_winstore_load(&ws, &h, 13, &last_end), 5);
	assert_int_equal(h.count, 5);
	for (i = 0; i < 5; i++)
		assert_window_is(fsd_history_window(&h, i), w[11 - i]);
	assert_null(fsd_history_window(&h, 5));
	assert_int_equal(h.totals.packets, w[11]->ever.packets);
	assert_int_equal(h.totals.bytes, w[11]->ever.bytes);
	assert_int_equal(h.windows_before + h.windows_finished, w[11]->ever_windows);
	assert_int_equal(last_end, w[11]->end_ns);
	for (i = 0; i < 12; i++)
		assert_int_equal(win_exists(st->dir, w[i]->seq), i >= 7);
	fsd_history_free(&h);
	fsd_winstore_close(&ws);
	free_wins(w, 12);
}

/*
 * Files that fail the checks take no room: with good windows 1-3 and bad
 * newer ones 4 (a candidate of no family) and 5 (truncated) in a history
 * of 3, windows 1-3 all come back.  A name that is not 20 digits
 * ("+" and 19 digits, which strtoull would read as 2) is no window.
 */
static void test_bad_files_take_no_room(void **state)
{
	struct state *st = *state;
	struct fsd_winstore ws;
	struct fsd_history h;
	struct win *w[5];
	unsigned char *img;
	char path[4096], odd[4200];
	size_t len;
	__u64 last_end = 0;
	unsigned int i;

	prng_seed(11);
	for (i = 0; i < 5; i++)
		w[i] = new_win(st, 1 + i, 10 + 2 * i);
	for (i = 0; i < 3; i++)
		write_image(st->dir, w[i]->seq, w[i], 0);
	img = build_image(w[3], &len);
	assert_true(w[3]->n > 0);
	memset(img + len - 48, 0, 40);		/* last record: family 0 */
	write_win_file(st->dir, 4, img, len);
	free(img);
	write_image(st->dir, 5, w[4], 1);
	img = build_image(w[1], &len);
	assert_true(snprintf(odd, sizeof(odd), "%s/window-+0000000000000000002", st->dir) < (int)sizeof(odd));
	write_all(odd, img, len);
	free(img);

	assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, true), 0);
	assert_int_equal(fsd_history_init(&h, &st->p, 3, CAND_LIMIT, 6), 0);
	assert_int_equal(fsd_winstore_load(&ws, &h, 6, &last_end), 3);
	for (i = 0; i < 3; i++)
		assert_window_is(fsd_history_window(&h, i), w[2 - i]);
	assert_int_equal(last_end, w[2]->end_ns);
	assert_false(win_exists(st->dir, 4));
	assert_false(win_exists(st->dir, 5));
	win_name(path, sizeof(path), st->dir, 2);
	assert_true(exists(path));
	assert_true(exists(odd));		/* not ours to read or remove */
	fsd_history_free(&h);
	fsd_winstore_close(&ws);
	free_wins(w, 5);
}

/*
 * Span queries see what was restored.  The history names windows by
 * generation and finds one at ring[gen % capacity]; restored windows
 * that carried the predecessor's count as their generation (1001-1003
 * in a ring of 4) sat where no query looked.  Every capacity and count
 * of windows: a span over all of them sums them all, with their totals,
 * and one more window committed after them joins the span.
 */
static void test_span_after_restore(void **state)
{
	struct state *st = *state;
	struct fsd_query_scratch q;
	struct fsd_winstore ws;
	struct fs_sketch_params hp;
	struct win *w[7];
	unsigned int cap, n, i;

	prng_seed(13);
	/* The history's parameters carry no secret, as the daemon's
	 * (options.h): the store reads windows back without it. */
	hp = st->p;
	memset(&hp.secret, 0, sizeof(hp.secret));
	for (i = 0; i < 7; i++)
		w[i] = new_win(st, 1 + i, 3);
	assert_int_equal(fsd_query_scratch_init(&q, &hp), 0);
	for (cap = 1; cap <= 5; cap++)
		for (n = 1; n <= 7; n++) {
			struct fsd_span_select all = { 0 };
			double distinct[FS_HLL_NSKETCH];
			struct fsd_history h;
			struct fsd_span span;
			struct fs_sketch *s;
			__u64 last_end, pk = 0;
			unsigned int got = n < cap ? n : cap, k;

			store_wins(st->dir, &st->p, w, n);
			assert_int_equal(fsd_winstore_open(&ws, st->dir, &st->p, true), 0);
			assert_int_equal(fsd_history_init(&h, &hp, cap, CAND_LIMIT, 100), 0);
			assert_int_equal(fsd_winstore_load(&ws, &h, 100, &last_end), (int)got);
			assert_int_equal(fsd_history_distinct(&h, &all, &q, distinct, &span), 0);
			assert_int_equal(span.windows, got);
			for (k = n - got; k < n; k++)
				pk += w[k]->s.totals.packets;
			assert_int_equal(span.totals.packets, pk);
			/* A window of this daemon after them. */
			assert_int_equal(fsd_history_begin(&h, &s), 0);
			s->totals.packets = 7;
			assert_int_equal(fsd_history_commit(&h, 100, last_end, last_end + 1,
							    NULL, NULL, NULL), 0);
			assert_int_equal(fsd_history_distinct(&h, &all, &q, distinct, &span), 0);
			assert_int_equal(span.windows, got < cap ? got + 1 : cap);
			assert_int_equal(h.windows_before + h.windows_finished,
					 w[n - 1]->ever_windows + 1);
			fsd_history_free(&h);
			fsd_winstore_close(&ws);
		}
	fsd_query_scratch_free(&q);
	free_wins(w, 7);
}

/*
 * A full file system: a tmpfs of its own (root only, as the whole suite)
 * with room for two windows.  The third fails with ENOSPC and leaves no
 * file; the next FSD_WINSTORE_BACKOFF windows are not even tried (the
 * directory does not change, each counts as an error), and the one after
 * is tried again and stored once there is room.
 */
static void test_full_disk_backoff(void **state)
{
	struct state *st = *state;
	struct fsd_winstore ws;
	struct fsd_window_map m;
	struct fs_sketch view;
	char mnt[PATH_MAX + 16], path[PATH_MAX + 64];
	struct win *w;
	size_t one;
	unsigned int i;
	int err;

	prng_seed(17);
	w = new_win(st, 1, 10);
	one = file_len(w);
	snprintf(mnt, sizeof(mnt), "%s/fs", st->dir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	snprintf(path, sizeof(path), "size=%zu", 2 * one + one / 2 + 8192);
	if (mount("tmpfs", mnt, "tmpfs", 0, path)) {
		rmdir(mnt);
		skip();		/* not root: nothing to test here */
	}
	assert_int_equal(fsd_winstore_open(&ws, mnt, &st->p, false), 0);
	for (i = 0; i < 2; i++) {
		w->seq = 1 + i;
		put_win(&ws, w);
	}
	w->seq = 3;
	err = fsd_winstore_put(&ws, 3, w->start_ns, w->end_ns, &w->s, &w->c,
			       &w->ever, w->ever_windows, &view, &m);
	assert_int_equal(err, -ENOSPC);
	assert_false(win_exists(mnt, 3));
	/* Room again: the backoff still holds the next ones off. */
	snprintf(path, sizeof(path), "%s/window-%020u", mnt, 1);
	assert_int_equal(unlink(path), 0);
	for (i = 0; i < FSD_WINSTORE_BACKOFF; i++)
		assert_int_equal(fsd_winstore_put(&ws, 10 + i, w->start_ns, w->end_ns,
						  &w->s, &w->c, &w->ever, w->ever_windows,
						  &view, &m), -ENOSPC);
	assert_int_equal(ws.errors, 1 + FSD_WINSTORE_BACKOFF);
	assert_false(win_exists(mnt, 10));
	w->seq = 100;
	put_win(&ws, w);
	assert_true(win_exists(mnt, 100));
	fsd_winstore_close(&ws);
	assert_int_equal(umount(mnt), 0);
	rmdir(mnt);
	free_win(w);
}

/* clear: the window files and the directory they leave empty; a
 * directory that holds anything else stays, with it. */
static void test_clear(void **state)
{
	struct state *st = *state;
	char a[PATH_MAX], b[PATH_MAX], listing[4096];
	struct win *w[2];

	prng_seed(8);
	w[0] = new_win(st, 3, 25);
	w[1] = new_win(st, 4, 35);
	assert_true(snprintf(a, sizeof(a), "%s/a", st->dir) < (int)sizeof(a));
	assert_true(snprintf(b, sizeof(b), "%s/b", st->dir) < (int)sizeof(b));

	store_wins(a, &st->p, w, 2);
	touch(a, "window-00000000000000000005.tmp", "half a window");
	assert_true(win_exists(a, 3));
	fsd_winstore_clear(a);
	assert_false(exists(a));

	store_wins(b, &st->p, w, 2);
	touch(b, "keep-me", "not a window");
	fsd_winstore_clear(b);
	assert_true(exists(b));
	dir_listing(b, listing, sizeof(listing));
	assert_string_equal(listing, "keep-me");
	free_wins(w, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_reads_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_secret_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_without_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files_take_no_room, setup, teardown),
		cmocka_unit_test_setup_teardown(test_span_after_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_disk_backoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clear, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
