// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* tp_object.c - a tracepoint frontend's object, pins and link (tp_object.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/log.h"
#include "tp_object.h"

/* The maps pinned, by their names under the pin directory and in the
 * object; ctl is pinned last (it says the datapath is whole), and ifaces,
 * ifslot and ifcount only by the kinds that count interfaces.  The
 * per-interface counts came after the egress frontend: an earlier
 * release's is adopted with fresh ones, pinned beside its maps. */
const struct fsd_pin fsd_tp_pins[FSD_TP_PINS_ALL] = {
	{ "ctl", "fs_ctl", 0 },
	FSD_PIN_KINDS
	{ "hot", "fs_hot", 0 },
	{ "stats", "fs_stats", 0 },
	{ "reports", "fs_reports", 0 },
	{ "barrier", "fs_barrier", 0 },
	{ "ifaces", "fs_ifaces", 0 },
	{ "ifslot", "fs_ifslot", FSD_PIN_NEW },
	{ "ifcount", "fs_ifcount", FSD_PIN_NEW },
};

void *fsd_tp_open_failed(const char *name, int err)
{
	fsd_fail(err, "cannot open or size the %s datapath", name);
	errno = -err;
	return NULL;
}

static int dir_of(char *buf, size_t len, const struct fsd_tp_kind *k,
		  const char *pin_dir)
{
	return fsd_object_path(buf, len, pin_dir, k->name);
}

bool fsd_tp_is_pinned(const struct fsd_tp_kind *k, const char *pin_dir)
{
	char dir[PATH_MAX];

	return !dir_of(dir, sizeof(dir), k, pin_dir) &&
	       fsd_object_is_pinned(&k->ops, dir);
}

int fsd_tp_load(struct fsd_tp_object *t, const struct fsd_tp_kind *k,
		const struct fsd_options *o, const struct fs_hash_secret *secret,
		bool adopt)
{
	char dir[PATH_MAX];
	int err = dir_of(dir, sizeof(dir), k, o->pin_dir);

	t->kind = k;
	t->dir_made = false;
	t->link_fd = -1;
	return err ? err : fsd_object_load(&t->bpf, &k->ops, dir, o, secret, adopt);
}

int fsd_tp_pin(struct fsd_tp_object *t)
{
	if (mkdir(t->bpf.dir, 0700) && errno != EEXIST)
		return fsd_fail(-errno, "cannot create %s", t->bpf.dir);
	t->dir_made = true;
	return fsd_object_pin(&t->bpf);
}

int fsd_tp_attach(struct fsd_tp_object *t)
{
	struct bpf_link *link;
	char path[PATH_MAX];
	int err = fsd_object_path(path, sizeof(path), t->bpf.dir, "link");

	if (err)
		return err;
	if (t->bpf.adopted) {
		int fd = bpf_obj_get(path);

		if (fd >= 0) {
			t->link_fd = fd;
			fsd_info("kept the pinned %s link: counting never stopped",
				 t->kind->name);
			return 0;
		}
	}
	unlink(path);	/* a discarded datapath's */
	link = bpf_program__attach(t->bpf.prog);
	if (!link)
		return fsd_fail(-errno, "cannot attach the %s program (%s)",
				t->kind->name, t->kind->hook);
	t->link_fd = dup(bpf_link__fd(link));
	err = t->link_fd < 0 ? -errno : 0;
	if (!err && bpf_obj_pin(t->link_fd, path))
		err = -errno;
	bpf_link__destroy(link);	/* the dup and the pin hold it */
	if (err) {
		fsd_fail(err, "cannot pin the %s link at %s", t->kind->name, path);
		if (t->link_fd >= 0) {
			bpf_link_detach(t->link_fd);
			close(t->link_fd);
		}
		t->link_fd = -1;
		return err;
	}
	fsd_info("counting %s (%s)", t->kind->direction, t->kind->hook);
	return 0;
}

static void remove_all(const struct fsd_object_ops *ops, const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (!fsd_object_path(path, sizeof(path), dir, "link")) {
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			bpf_link_detach(fd);
			close(fd);
		}
		unlink(path);
	}
	fsd_object_remove_pins(ops, dir);
	rmdir(dir);
}

void fsd_tp_close(struct fsd_tp_object *t, bool keep)
{
	if (t->link_fd >= 0) {
		if (!keep)
			bpf_link_detach(t->link_fd);
		close(t->link_fd);
	}
	t->link_fd = -1;
	if (!keep && t->dir_made)
		remove_all(&t->kind->ops, t->bpf.dir);
	t->bpf.pinned = 0;
	fsd_object_close(&t->bpf);
}

int fsd_tp_remove_pins(const struct fsd_tp_kind *k, const char *pin_dir)
{
	char dir[PATH_MAX];

	if (dir_of(dir, sizeof(dir), k, pin_dir))
		return -ENAMETOOLONG;
	if (access(dir, F_OK))
		return 0;
	remove_all(&k->ops, dir);
	fsd_info("removed the %s datapath under %s", k->name, dir);
	return 1;
}
