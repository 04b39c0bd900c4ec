// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* blockfile.c - the daemon's list file (blockfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/safedir.h"
#include "blockfile.h"

static int entry_cmp(const void *a, const void *b)
{
	const struct fsd_block_entry *x = a, *y = b;

	return fs_cidr_cmp(&x->c, &y->c);
}

/* "NAME=T" with T a whole number of seconds since the epoch, 1 to 2^62. */
static int parse_time(const char *tok, const char *name, __s64 *t)
{
	size_t len = strlen(name);
	unsigned long long v;
	char *end;

	if (strncmp(tok, name, len) || tok[len] != '=' ||
	    tok[len + 1] < '0' || tok[len + 1] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(tok + len + 1, &end, 10);
	if (errno || *end || !v || v > (1ULL << 62))
		return -EINVAL;
	*t = (__s64)v;
	return 0;
}

/*
 * One line's entry into *e (s: the line, comment and line end cut off,
 * blanks kept): 0, 1 for a line with no entry, or -EINVAL with *why.
 */
static int parse_line(char *s, struct fsd_block_origins *o,
		      struct fsd_block_entry *e, const char **why)
{
	char *save = NULL, *tok, *by = NULL;
	int origin;

	tok = strtok_r(s, " \t", &save);
	if (!tok)
		return 1;
	memset(e, 0, sizeof(*e));
	if (fs_cidr_parse(tok, &e->c, why))
		return -EINVAL;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (!strcmp(tok, "by")) {
			by = save + strspn(save, " \t");
			break;
		}
		if (!e->added_at && !parse_time(tok, "added", &e->added_at))
			continue;
		if (!e->expires_at && !parse_time(tok, "expires", &e->expires_at))
			continue;
		*why = "after the CIDR, only added=T, expires=T (seconds since the epoch, each once) and by RULE";
		return -EINVAL;
	}
	if (by) {
		by[strcspn(by, "\n")] = 0;
		while (*by && strchr(" \t", by[strlen(by) - 1]))
			by[strlen(by) - 1] = 0;
		origin = fsd_block_origin_intern(o, by);
		if (origin == -EINVAL) {
			*why = "by: a rule's text, printable, at most 127 bytes";
			return -EINVAL;
		}
		/* A full table keeps the entry, said to be the policy's. */
		e->origin = origin > 0 ? (__u32)origin : (origin ? FSD_BLOCK_ORIGINS_MAX : 0);
	}
	return 0;
}

/* e (count) sorted, one of each repeat kept (which one is not said:
 * the daemon writes none): how many are left. */
static size_t unique(struct fsd_block_entry *e, size_t count)
{
	size_t i, u = 0;

	if (!count)
		return 0;
	qsort(e, count, sizeof(*e), entry_cmp);
	for (i = 0; i < count; i++)
		if (!u || entry_cmp(&e[u - 1], &e[i]))
			e[u++] = e[i];
	return u;
}

/*
 * Room for one more entry in *e (*count of *cap): grown, up to 2 max + 2;
 * when that is full, repeats are squeezed out (they do not count against
 * max).  A squeeze that does not fail leaves at least max + 2 free, so
 * there is one sort per max lines at most: O(L log max) for L lines, and
 * the array O(max) however many lines repeat.
 * 0, -E2BIG (more than max distinct), -ENOMEM.
 */
static int make_room(struct fsd_block_entry **e, size_t *count, size_t *cap,
		     unsigned int max)
{
	struct fsd_block_entry *grown;
	size_t want;

	if (*count < *cap)
		return 0;
	if (*count == 2 * (size_t)max + 2) {
		*count = unique(*e, *count);
		if (*count > max)
			return -E2BIG;
		return 0;
	}
	want = *cap ? *cap * 2 : 256;
	if (want > 2 * (size_t)max + 2)
		want = 2 * (size_t)max + 2;
	grown = realloc(*e, want * sizeof(**e));
	if (!grown)
		return -ENOMEM;
	*e = grown;
	*cap = want;
	return 0;
}

int fsd_blockfile_read(const char *path, unsigned int max,
		       struct fsd_block_origins *o,
		       struct fsd_block_entry **out, size_t *n,
		       char *msg, size_t msg_len)
{
	unsigned long long limit = (unsigned long long)(max + 1) * (FSD_BLOCKFILE_LINE_MAX + 1);
	struct fsd_block_entry *e = NULL;
	size_t count = 0, cap = 0, line_no = 0, len, size = 0;
	char *line = NULL;
	struct stat st;
	FILE *f = NULL;
	ssize_t got_len;
	int fd, err = 0;

	*out = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(msg, msg_len, "%s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		snprintf(msg, msg_len, "%s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > limit) {
		snprintf(msg, msg_len, "%s: %s", path,
			 !S_ISREG(st.st_mode) ? "not a regular file" :
			 "larger than a list of --blocklist-max entries can be");
		close(fd);
		return -EINVAL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		snprintf(msg, msg_len, "%s: %s", path, strerror(-err));
		return err;
	}
	/* The file's size is capped above, so getline's line is too. */
	while ((got_len = getline(&line, &size, f)) > 0) {
		const char *why = NULL;
		int got;

		line_no++;
		len = (size_t)got_len;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (len && line[len - 1] == '\r')	/* a CRLF file */
			line[--len] = 0;
		/* A NUL inside ends strlen early: a binary file. */
		if (len > FSD_BLOCKFILE_LINE_MAX || strlen(line) != len) {
			snprintf(msg, msg_len, "%s:%zu: %s", path, line_no,
				 strlen(line) != len ? "the line holds a NUL byte (not a text file?)" :
				 "line longer than 256 bytes");
			err = -EINVAL;
			goto out;
		}
		line[strcspn(line, "#")] = 0;
		err = make_room(&e, &count, &cap, max);
		if (err) {
			snprintf(msg, msg_len, err == -E2BIG ?
				 "%s:%zu: more than %u entries (the blocklist's maximum)" :
				 "%s:%zu: out of memory (%u entries at most)", path, line_no, max);
			goto out;
		}
		got = parse_line(line, o, &e[count], &why);
		if (got < 0) {
			snprintf(msg, msg_len, "%s:%zu: %s", path, line_no, why);
			err = got;
			goto out;
		}
		if (!got)
			count++;
	}
	if (ferror(f)) {
		snprintf(msg, msg_len, "%s: read failed", path);
		err = -EIO;
		goto out;
	}
	count = unique(e, count);
	if (count > max) {
		snprintf(msg, msg_len, "%s: more than %u entries (the blocklist's maximum)",
			 path, max);
		err = -E2BIG;
		goto out;
	}
	*out = e;
	*n = count;
	e = NULL;
out:
	free(line);
	free(e);
	fclose(f);
	return err;
}

/* mkdir -p of path's directory (0755): /var/lib/flowsketch on first use. */
static int make_dirs(const char *path)
{
	char dir[PATH_MAX];
	size_t i;

	snprintf(dir, sizeof(dir), "%s", path);
	for (i = 1; dir[i]; i++) {
		if (dir[i] != '/')
			continue;
		dir[i] = 0;
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
		dir[i] = '/';
	}
	return 0;
}

static void write_entry(FILE *f, const struct fsd_block_entry *e,
			const struct fsd_block_origins *o)
{
	char text[FS_CIDR_TEXT_MAX];

	fs_cidr_format(&e->c, text, sizeof(text));
	fputs(text, f);
	if (e->added_at)
		fprintf(f, " added=%lld", (long long)e->added_at);
	if (e->expires_at)
		fprintf(f, " expires=%lld", (long long)e->expires_at);
	if (e->origin)
		fprintf(f, " by %s", fsd_block_origin_text(o, e->origin));
	fputc('\n', f);
}

int fsd_blockfile_write(const char *path, const struct fsd_block_entry *e,
			size_t n, const struct fsd_block_origins *o)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	FILE *f = NULL;
	int fd, dfd, err;
	size_t i;

	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	err = make_dirs(path);
	if (!err)	/* made now, or by someone else meanwhile */
		err = fsd_safedir_check_parent(path, "blocklist directory");
	if (err)
		return err;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	fprintf(f, "# flowsketch blocklist, written by flowsketchd: CIDR [added=T] [expires=T] [by RULE]\n");
	for (i = 0; i < n; i++)
		write_entry(f, &e[i], o);
	errno = 0;
	if (fflush(f) || ferror(f) || fsync(fd))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		goto fail;
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
fail:
	unlink(tmp);
	return err;
}
