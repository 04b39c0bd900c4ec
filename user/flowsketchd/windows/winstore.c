// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* winstore.c - finished windows in files (winstore.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>
#include "base/crashpoint.h"
#include "base/log.h"
#include "winstore.h"

#define WINFILE_PREFIX "window-"
#define JOURNAL_PREFIX "pending-"

static int win_path(const struct fsd_winstore *ws, char *buf, size_t len,
		    __u64 seq, bool tmp)
{
	if (snprintf(buf, len, "%s/" WINFILE_PREFIX "%020llu%s", ws->dir,
		     (unsigned long long)seq, tmp ? ".tmp" : "") >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p, each made 0700: the files hold the windows' flows. */
static int make_dir(const char *dir)
{
	char path[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		path[i] = dir[i];
	}
	return 0;
}

/* Remove window files (all, or only .tmp leftovers). */
static void remove_files(const char *dir, bool tmp_only)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		bool tmp = n > 4 && !strcmp(e->d_name + n - 4, ".tmp");

		if ((strncmp(e->d_name, WINFILE_PREFIX, strlen(WINFILE_PREFIX)) &&
		     strncmp(e->d_name, JOURNAL_PREFIX, strlen(JOURNAL_PREFIX))) ||
		    (tmp_only && !tmp))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
}

void fsd_winstore_clear(const char *dir)
{
	remove_files(dir, false);
	rmdir(dir);	/* only if it is empty: never anything else's */
}

int fsd_winstore_clear_locked(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;	/* nothing there */
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		fsd_err("a flowsketchd keeps its windows in %s: stop it first", dir);
		close(fd);
		return -EBUSY;
	}
	fsd_winstore_clear(dir);
	close(fd);
	return 0;
}

bool fsd_winstore_has(const struct fsd_winstore *ws, __u64 seq)
{
	char path[PATH_MAX];
	struct stat st;

	return ws->usable && !win_path(ws, path, sizeof(path), seq, false) &&
	       !lstat(path, &st) && S_ISREG(st.st_mode);
}

void fsd_winstore_discard(struct fsd_winstore *ws)
{
	ws->nnote = 0;
}

int fsd_winstore_open(struct fsd_winstore *ws, const char *dir,
		      const struct fs_sketch_params *params, bool keep_files)
{
	int err;

	memset(ws, 0, sizeof(*ws));
	ws->lock_fd = -1;
	if (strlen(dir) >= sizeof(ws->dir)) {
		fsd_warn("--state-dir %s is too long: windows will not survive a restart", dir);
		return 0;
	}
	strcpy(ws->dir, dir);
	ws->params = *params;
	ws->fingerprint = fs_params_fingerprint(&params->secret);
	memset(&ws->params.secret, 0, sizeof(ws->params.secret));
	err = make_dir(dir);
	if (!err) {
		ws->lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = ws->lock_fd < 0 ? -errno : 0;
	}
	if (err) {
		fsd_warn("cannot make the state directory %s (%s): windows will not survive a restart",
			 dir, strerror(-err));
		return 0;
	}
	/* Two daemons on one directory would delete each other's windows. */
	if (flock(ws->lock_fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (err == -EBUSY)
			fsd_err("another flowsketchd keeps its windows in %s: give each its own --state-dir",
				dir);
		else
			fsd_fail(err, "cannot lock the state directory %s", dir);
		fsd_winstore_close(ws);
		return err;
	}
	remove_files(dir, keep_files);
	ws->usable = true;
	return 0;
}

void fsd_winstore_close(struct fsd_winstore *ws)
{
	fsd_winstore_flush(ws);
	free(ws->note);
	free(ws->note_seq);
	ws->note = NULL;
	ws->note_seq = NULL;
	if (ws->lock_fd >= 0)
		close(ws->lock_fd);
	ws->lock_fd = -1;
}

/* s is exactly n decimal digits: names are written %020llu, and
 * strtoull alone would take "+5" or " 5" for the same window. */
static bool all_digits(const char *s, size_t n)
{
	return strlen(s) == n && strspn(s, "0123456789") == n;
}

static int journal_path(const struct fsd_winstore *ws, char *buf, size_t len,
			__u64 seq)
{
	if (snprintf(buf, len, "%s/" JOURNAL_PREFIX "%020llu", ws->dir,
		     (unsigned long long)seq) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

void fsd_winstore_note(struct fsd_winstore *ws, __u64 seq,
		       const struct fs_flow_key *key, __u64 hash)
{
	if (!ws || !ws->usable)
		return;
	if (!ws->note) {
		ws->note = calloc(FSD_WINSTORE_NOTES, sizeof(*ws->note));
		ws->note_seq = calloc(FSD_WINSTORE_NOTES, sizeof(*ws->note_seq));
		if (!ws->note || !ws->note_seq) {
			ws->journal_errors++;
			return;
		}
	}
	if (ws->nnote == FSD_WINSTORE_NOTES)
		fsd_winstore_flush(ws);
	ws->note[ws->nnote].key = *key;
	ws->note[ws->nnote].hash = hash;
	ws->note_seq[ws->nnote] = seq;
	ws->nnote++;
}

/* A file of size bytes is now taken (sign 1) or given back (-1): charged
 * to the budget, if any, rounded to its block. */
static void charge_file(struct fsd_winstore *ws, unsigned long long size, int sign)
{
	if (ws->budget)
		ws->budget->charge(ws->budget, sign * (long long)ws->budget->round(ws->budget, size));
}

/* Remove path, giving its rounded size back to the budget. */
static void remove_charged(struct fsd_winstore *ws, const char *path)
{
	struct stat st;
	bool charged = ws->budget && !lstat(path, &st) && S_ISREG(st.st_mode);

	if (!unlink(path) && charged)
		charge_file(ws, (unsigned long long)st.st_size, -1);
}

/*
 * Append records [i, j) (one window's) to its journal.  A write cut short
 * (the file system full) is cut back to the records before it, so that
 * the journal stays whole records.
 */
static void journal_append(struct fsd_winstore *ws, __u32 i, __u32 j)
{
	char path[PATH_MAX];
	size_t len = (size_t)(j - i) * sizeof(*ws->note);
	struct stat st;
	unsigned long long grow = 0;
	ssize_t w = -1;
	int fd = -1, err = 0;

	if (!journal_path(ws, path, sizeof(path), ws->note_seq[i]))
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
			  O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = fd < 0 ? errno : EINVAL;
	} else if (ws->budget &&
		   (grow = ws->budget->round(ws->budget, (unsigned long long)st.st_size + len) -
			   ws->budget->round(ws->budget, (unsigned long long)st.st_size)) &&
		   ws->budget->reserve(ws->budget, grow)) {
		err = ENOSPC;	/* nothing left to evict: these records go */
	} else {
		w = write(fd, ws->note + i, len);
		fsd_crash_point("journaled");
		if (w != (ssize_t)len) {
			err = w < 0 ? errno : ENOSPC;
			if (ftruncate(fd, st.st_size))
				err = errno;
		} else if (ws->budget) {
			ws->budget->charge(ws->budget, (long long)grow);
		}
	}
	if (fd >= 0)
		close(fd);
	if (err) {
		ws->journal_errors += j - i;
		if (ws->journal_errors == j - i || ws->journal_errors % 10000 < j - i)
			fsd_warn("cannot journal the candidates of window %llu in %s: %s (%llu records lost so far)",
				 (unsigned long long)ws->note_seq[i], ws->dir, strerror(err),
				 (unsigned long long)ws->journal_errors);
	}
}

void fsd_winstore_flush(struct fsd_winstore *ws)
{
	__u32 i = 0, j;

	if (!ws || !ws->nnote)
		return;
	/* Runs of one window: reports arrive grouped by window. */
	while (i < ws->nnote) {
		for (j = i + 1; j < ws->nnote && ws->note_seq[j] == ws->note_seq[i]; j++)
			;
		journal_append(ws, i, j);
		i = j;
	}
	ws->nnote = 0;
}

void fsd_winstore_forget(struct fsd_winstore *ws, __u64 seq)
{
	char path[PATH_MAX];

	if (!ws || !ws->usable)
		return;
	fsd_winstore_flush(ws);
	if (!journal_path(ws, path, sizeof(path), seq)) {
		remove_charged(ws, path);
	}
}

/*
 * File one journal's records into h's pending window seq.  A record cut
 * short at the end (a write the kill stopped) is cut off the file, so
 * that the records this daemon appends start on a record's boundary.
 */
static __u64 replay_one(struct fsd_winstore *ws, struct fsd_history *h,
			__u64 seq, const char *path)
{
	struct fsd_candidate rec;
	struct stat st;
	__u64 n = 0;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (st.st_size % sizeof(rec) && ftruncate(fd, st.st_size - st.st_size % (off_t)sizeof(rec)))
		fsd_warn("cannot cut the partial record off %s: %s", path, strerror(errno));
	else if (st.st_size % sizeof(rec))
		st.st_size -= st.st_size % (off_t)sizeof(rec);
	charge_file(ws, (unsigned long long)st.st_size, 1);
	while (read(fd, &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
		if (rec.key.family != FS_FAMILY_IPV4 && rec.key.family != FS_FAMILY_IPV6)
			continue;
		if (fsd_history_add_candidate(h, seq, &rec.key, rec.hash) >= 0)
			n++;
	}
	close(fd);
	return n;
}

__u64 fsd_winstore_replay(struct fsd_winstore *ws, struct fsd_history *h,
			  __u64 first_seq)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	__u64 n = 0;

	if (!ws->usable || !(d = opendir(ws->dir)))
		return 0;
	while ((e = readdir(d))) {
		const char *digits = e->d_name + strlen(JOURNAL_PREFIX);
		char *end;
		__u64 seq;

		if (strncmp(e->d_name, JOURNAL_PREFIX, strlen(JOURNAL_PREFIX)) ||
		    !all_digits(digits, 20) ||
		    snprintf(path, sizeof(path), "%s/%s", ws->dir, e->d_name) >= (int)sizeof(path))
			continue;
		errno = 0;
		seq = strtoull(digits, &end, 10);
		if (!errno && !*end && (seq == first_seq || seq == first_seq + 1))
			n += replay_one(ws, h, seq, path);
		else
			unlink(path);	/* a finished window's, or not ours */
	}
	closedir(d);
	return n;
}

size_t fsd_winfile_bytes(const struct fs_sketch_params *p, __u64 ncandidates)
{
	return FSD_WINFILE_DATA + fs_sketch_bytes(p) +
	       (size_t)ncandidates * sizeof(struct fsd_candidate);
}

/* Kind k's part size in a header: C and H where version 1 always had
 * them, P and S after the candidate count (winstore.h). */
static __u64 part_size(const struct fsd_winfile_header *hd, int k)
{
	return k < 2 ? hd->part_bytes[k] : hd->detect_bytes[k - 2];
}

static void set_part_size(struct fsd_winfile_header *hd, int k, __u64 bytes)
{
	if (k < 2)
		hd->part_bytes[k] = bytes;
	else
		hd->detect_bytes[k - 2] = bytes;
}

/*
 * The sketch whose parts are in a mapping of a file of this layout (the
 * kinds' parts one after the other, in their order); the candidates
 * after them.
 */
static const struct fsd_candidate *view_of(const struct fsd_winstore *ws,
					   const struct fsd_winfile_header *hd,
					   void *addr, struct fs_sketch *view)
{
	char *at = (char *)addr + FSD_WINFILE_DATA;
	int k;

	memset(view, 0, sizeof(*view));
	view->params = ws->params;
	for (k = 0; k < FS_NKINDS; k++) {
		view->part[k] = at;
		at += part_size(hd, k);
	}
	view->totals = hd->totals;
	return (const struct fsd_candidate *)at;
}

/* A window file's pieces: header, zeros, the kinds' parts, candidates. */
#define WINFILE_IOV (3 + FS_NKINDS)

/* write() all of iov, or -errno. */
static int write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Create tmp and write iov into it: the open descriptor, or -errno with
 * nothing left behind. */
static int write_tmp(const char *tmp, const struct iovec *iov_in)
{
	struct iovec iov[WINFILE_IOV];
	int fd, err;

	memcpy(iov, iov_in, sizeof(iov));	/* write_all() consumes it */
	/* A .tmp of an earlier try is ours to replace; a symlink there is
	 * not followed. */
	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, iov, WINFILE_IOV);
	if (err) {
		close(fd);
		unlink(tmp);
		return err;
	}
	return fd;
}

static bool no_room(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

/* The set is a hash table: its keys, packed (*n of them; NULL: no memory). */
static struct fsd_candidate *pack_candidates(const struct fsd_candidates *c, __u32 *n)
{
	struct fsd_candidate *cand = malloc(((size_t)c->count + 1) * sizeof(*cand));
	__u32 i;

	for (i = 0, *n = 0; cand && i < c->capacity && *n < c->count; i++)
		if (c->slots[i].key.family)
			cand[(*n)++] = c->slots[i];
	return cand;
}

/* A window file's pieces: header hd (its window's fields set, the rest
 * set here), zeros up to the data, each kind's part of s, candidates. */
static void file_pieces(const struct fsd_winstore *ws, struct fsd_winfile_header *hd,
			const struct fs_sketch *s, const struct fsd_candidate *cand,
			__u32 n, struct iovec *iov)
{
	static const char zeros[FSD_WINFILE_DATA];
	int k;

	memcpy(hd->magic, FSD_WINFILE_MAGIC, sizeof(hd->magic));
	hd->version = FSD_WINFILE_VERSION;
	hd->data_offset = FSD_WINFILE_DATA;
	hd->params = ws->params;
	hd->fingerprint = ws->fingerprint;
	hd->candidates = n;
	iov[0] = (struct iovec){ hd, sizeof(*hd) };
	iov[1] = (struct iovec){ (void *)zeros, FSD_WINFILE_DATA - sizeof(*hd) };
	for (k = 0; k < FS_NKINDS; k++) {
		set_part_size(hd, k, fs_kind_slot_bytes(k, &ws->params));
		iov[2 + k] = (struct iovec){ s->part[k], part_size(hd, k) };
	}
	iov[2 + k] = (struct iovec){ (void *)cand, (size_t)n * sizeof(*cand) };
}

/* Room for a file of len bytes, first, so that neither the budget nor
 * the file system is passed even while it is written: 0 with *need what
 * to charge once written, or -ENOSPC. */
static int make_room(struct fsd_winstore *ws, size_t len, unsigned long long *need)
{
	if (!ws->budget)
		return 0;
	*need = ws->budget->round(ws->budget, len);
	return ws->budget->reserve(ws->budget, *need);
}

int fsd_winstore_put(struct fsd_winstore *ws, __u64 seq, __u64 start_ns,
		     __u64 end_ns, const struct fs_sketch *s,
		     const struct fsd_candidates *c,
		     const struct fs_window_totals *ever, __u64 ever_windows,
		     struct fs_sketch *view, struct fsd_window_map *m)
{
	struct fsd_winfile_header hd;
	struct fsd_candidate *cand = NULL;
	char tmp[PATH_MAX], path[PATH_MAX];
	struct iovec iov[WINFILE_IOV];
	unsigned long long need = 0;
	size_t len;
	void *addr;
	__u32 n = 0;
	int fd = -1, err;

	if (!ws->usable)
		return -ENOENT;
	if (ws->backoff) {
		ws->backoff--;
		ws->errors++;
		return -ENOSPC;
	}
	/* The file says the store's parameters: the sketch must have them. */
	if (s->params.cms_depth != ws->params.cms_depth ||
	    s->params.cms_log2_width != ws->params.cms_log2_width ||
	    s->params.hll_p != ws->params.hll_p)
		return -EINVAL;
	err = win_path(ws, tmp, sizeof(tmp), seq, true);
	if (!err)
		err = win_path(ws, path, sizeof(path), seq, false);
	if (err)
		goto fail;
	cand = pack_candidates(c, &n);
	if (!cand) {
		err = -ENOMEM;
		goto fail;
	}
	memset(&hd, 0, sizeof(hd));
	hd.seq = seq;
	hd.start_ns = start_ns;
	hd.end_ns = end_ns;
	hd.totals = s->totals;
	hd.ever = *ever;
	hd.ever_windows = ever_windows;
	file_pieces(ws, &hd, s, cand, n, iov);
	len = fsd_winfile_bytes(&ws->params, n);
	err = make_room(ws, len, &need);
	if (err)
		goto fail;
	/* Full after all (another writer took the room since the check):
	 * the oldest window makes way and the write is tried again, until
	 * none is left.  Each try evicts one window, so this ends. */
	while ((fd = write_tmp(tmp, iov)) < 0 && ws->budget && no_room(fd) &&
	       !ws->budget->evict_one(ws->budget))
		;
	if (fd < 0) {
		err = fd;
		fd = -1;
		goto fail;
	}
	addr = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		err = -errno;
		goto fail_unlink;
	}
	fsd_crash_point("written");
	if (rename(tmp, path)) {
		err = -errno;
		munmap(addr, len);
		goto fail_unlink;
	}
	close(fd);
	free(cand);
	view_of(ws, &hd, addr, view);
	m->addr = addr;
	m->len = len;
	ws->stored++;
	ws->files++;
	if (ws->budget)
		ws->budget->charge(ws->budget, (long long)need);
	return 0;

fail_unlink:
	unlink(tmp);
fail:
	if (fd >= 0)
		close(fd);
	free(cand);
	if (no_room(err))
		ws->backoff = FSD_WINSTORE_BACKOFF;
	/* Once per error streak would be quieter; every window says which. */
	if (!ws->errors++ || ws->errors % 1000 == 0 || ws->backoff)
		fsd_warn("cannot store window %llu in %s: %s (kept in memory only; %llu so far)",
			 (unsigned long long)seq, ws->dir, strerror(-err),
			 (unsigned long long)ws->errors);
	return err;
}

void fsd_winstore_drop(struct fsd_winstore *ws, __u64 seq)
{
	char path[PATH_MAX];

	struct stat st;

	if (!ws->usable || seq == FSD_NO_SEQ ||
	    win_path(ws, path, sizeof(path), seq, false) ||
	    lstat(path, &st) || !S_ISREG(st.st_mode))
		return;
	if (unlink(path))
		return;
	charge_file(ws, (unsigned long long)st.st_size, -1);
	if (ws->files)
		ws->files--;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return (x > y) - (x < y);
}

/* The window files' sequence numbers below before_seq, ascending. */
static int list_seqs(const struct fsd_winstore *ws, __u64 before_seq,
		     __u64 **out, size_t *n)
{
	struct dirent *e;
	DIR *d = opendir(ws->dir);
	__u64 *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		const char *digits = e->d_name + strlen(WINFILE_PREFIX);
		char *end;
		__u64 seq;

		if (strncmp(e->d_name, WINFILE_PREFIX, strlen(WINFILE_PREFIX)) ||
		    !all_digits(digits, 20))
			continue;
		errno = 0;
		seq = strtoull(digits, &end, 10);
		if (errno || *end)
			continue;
		if (seq >= before_seq) {
			/* A window the datapath has not finished cannot have
			 * a file: not ours. */
			char path[PATH_MAX];

			if (snprintf(path, sizeof(path), "%s/%s", ws->dir, e->d_name) < (int)sizeof(path))
				unlink(path);
			continue;
		}
		if (*n == cap) {
			__u64 *g = realloc(v, (cap ? 2 * cap : 64) * sizeof(*v));

			if (!g) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = g;
			cap = cap ? 2 * cap : 64;
		}
		v[(*n)++] = seq;
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), cmp_u64);
	*out = v;
	return 0;
}

static bool candidates_valid(const struct fsd_candidate *c, __u64 n)
{
	__u64 i;

	for (i = 0; i < n; i++)
		if (c[i].key.family != FS_FAMILY_IPV4 && c[i].key.family != FS_FAMILY_IPV6)
			return false;
	return true;
}

/* Each kind's part as large as the parameters make it, and the file as
 * long as its parts and candidates. */
static bool sizes_agree(const struct fsd_winstore *ws,
			const struct fsd_winfile_header *hd, __u64 file_bytes)
{
	int k;

	for (k = 0; k < FS_NKINDS; k++)
		if (part_size(hd, k) != fs_kind_slot_bytes(k, &ws->params))
			return false;
	return hd->candidates <= (1ULL << 32) &&
	       file_bytes == fsd_winfile_bytes(&ws->params, hd->candidates);
}

/* Map and check one file: 0 with r filled; -EINVAL for a file that is
 * not a window of ours (message given: the caller removes it); another
 * -errno when it could not be read now (it stays). */
static int load_one(struct fsd_winstore *ws, const char *path, __u64 seq,
		    struct fsd_window_restore *r)
{
	const struct fsd_winfile_header *hd;
	struct stat st;
	const char *why = NULL;
	void *addr;
	/* Not following links, not waiting on a FIFO: only regular files
	 * the daemon wrote are windows. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		fsd_warn("ignoring %s: not a regular file", path);
		return -EINVAL;
	}
	if ((size_t)st.st_size < FSD_WINFILE_DATA) {
		close(fd);
		fsd_warn("ignoring %s: shorter than its header", path);
		return -EINVAL;
	}
	addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (addr == MAP_FAILED) {
		int err = -errno;

		fsd_warn("cannot map %s now: %s (left for the next start)", path,
			 strerror(-err));
		return err == -EINVAL ? -ENOMEM : err;
	}
	hd = addr;
	if (memcmp(hd->magic, FSD_WINFILE_MAGIC, sizeof(hd->magic)))
		why = "not a window file";
	else if (hd->version != FSD_WINFILE_VERSION)
		why = "another version";
	else if (hd->data_offset != FSD_WINFILE_DATA)
		why = "another layout";
	else if (memcmp(&hd->params, &ws->params, sizeof(hd->params)) ||
		 hd->fingerprint != ws->fingerprint)
		why = "another datapath's parameters or secret";
	else if (hd->seq != seq)
		why = "its name and sequence disagree";
	else if (!sizes_agree(ws, hd, (__u64)st.st_size))
		why = "sizes that disagree with its parameters or its length";
	else if (!hd->ever_windows)
		why = "no history count";
	else if (!candidates_valid((const struct fsd_candidate *)
				   ((const char *)addr + fsd_winfile_bytes(&ws->params, 0)),
				   hd->candidates))
		why = "a candidate of no address family";
	if (why) {
		fsd_warn("ignoring %s: %s", path, why);
		munmap(addr, (size_t)st.st_size);
		return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	r->seq = seq;
	r->start_ns = hd->start_ns;
	r->end_ns = hd->end_ns;
	r->candidates = view_of(ws, hd, addr, &r->view);
	r->m.addr = addr;
	r->m.len = (size_t)st.st_size;
	r->ncandidates = hd->candidates;
	r->ever = hd->ever;
	r->ever_windows = hd->ever_windows;
	return 0;
}

int fsd_winstore_load(struct fsd_winstore *ws, struct fsd_history *h,
		      __u64 before_seq, __u64 *last_end_ns)
{
	struct fsd_window_restore *r = NULL;
	__u64 *seqs = NULL;
	size_t n = 0, i, got = 0;
	int err, restored = 0;

	*last_end_ns = 0;
	if (!ws->usable)
		return 0;
	err = list_seqs(ws, before_seq, &seqs, &n);
	if (err)
		return err;
	r = calloc(h->capacity, sizeof(*r));
	if (!r) {
		free(seqs);
		return -ENOMEM;
	}
	/* Newest first, until the history is full of windows that pass the
	 * checks; older ones are removed, bad ones too. */
	for (i = n; i-- > 0;) {
		char path[PATH_MAX];

		if (win_path(ws, path, sizeof(path), seqs[i], false))
			continue;
		if (got == h->capacity) {
			unlink(path);
			continue;
		}
		err = load_one(ws, path, seqs[i], &r[got]);
		if (err == -EINVAL)
			unlink(path);
		if (!err)
			got++;
	}
	err = 0;
	/* Oldest first into the ring. */
	for (i = got; i-- > 0;) {
		if (!err)
			err = fsd_history_restore(h, &r[i]);
		if (err) {
			munmap(r[i].m.addr, r[i].m.len);
			continue;
		}
		*last_end_ns = r[i].end_ns;
		restored++;
		ws->files++;
		charge_file(ws, r[i].m.len, 1);
	}
	if (err)
		fsd_warn("could read back only %d of %zu windows: %s", restored, got,
			 strerror(-err));
	free(r);
	free(seqs);
	return restored;
}
