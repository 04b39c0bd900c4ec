// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* tp_frontend.c - the tracepoint frontends' filter and counters (tp_frontend.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "flowsketch/maps.h"
#include "tp_frontend.h"

static int own_netns(__u32 *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	*ino = (__u32)st.st_ino;
	return 0;
}

int fsd_tp_iface_set(int map_fd, int ifindex, __u32 slot, bool on)
{
	struct fs_tp_iface key = { .ifindex = (__u32)ifindex };
	int err = own_netns(&key.netns_ino);

	if (err)
		return err;
	if (on)
		return bpf_map_update_elem(map_fd, &key, &slot, BPF_ANY) ? -errno : 0;
	return bpf_map_delete_elem(map_fd, &key) && errno != ENOENT ? -errno : 0;
}

int fsd_tp_iface_keep_only(int map_fd, const int *keep, unsigned int n)
{
	struct fs_tp_iface key, next;
	__u32 ino;
	int err = own_netns(&ino), removed = 0;
	bool first = true;

	if (err)
		return err;
	/* Deleting the entry just returned is safe for a hash map's
	 * get_next_key: it restarts from the first entry when the key is
	 * gone, and the ones kept are passed over again. */
	while (!bpf_map_get_next_key(map_fd, first ? NULL : &key, &next)) {
		bool ours = false;
		unsigned int i;

		first = false;
		key = next;
		for (i = 0; i < n && next.netns_ino == ino; i++)
			ours |= keep[i] && (__u32)keep[i] == next.ifindex;
		if (ours)
			continue;
		if (bpf_map_delete_elem(map_fd, &next))
			return -errno;
		removed++;
		first = true;
	}
	return removed;
}

/* The program link_fd holds: its fd, or -errno. */
static int link_prog(int link_fd)
{
	struct bpf_link_info li;
	__u32 len = sizeof(li);
	int fd;

	if (link_fd < 0)
		return -ENOENT;
	memset(&li, 0, sizeof(li));
	if (bpf_obj_get_info_by_fd(link_fd, &li, &len))
		return -errno;
	fd = bpf_prog_get_fd_by_id(li.prog_id);
	return fd < 0 ? -errno : fd;
}

int fsd_tp_recursion_misses(int link_fd, __u64 *misses)
{
	struct bpf_prog_info pi;
	__u32 len = sizeof(pi);
	int fd = link_prog(link_fd), err = 0;

	*misses = 0;
	if (fd < 0)
		return fd;
	memset(&pi, 0, sizeof(pi));
	if (bpf_obj_get_info_by_fd(fd, &pi, &len))
		err = -errno;
	close(fd);
	*misses = pi.recursion_misses;
	return err;
}

int fsd_tp_link_uses_map(int link_fd, int map_fd)
{
	struct bpf_map_info mi;
	struct bpf_prog_info pi;
	__u32 ids[64], len = sizeof(mi), i;
	int fd, err = 0;

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(map_fd, &mi, &len))
		return -errno;
	fd = link_prog(link_fd);
	if (fd < 0)
		return fd;
	memset(&pi, 0, sizeof(pi));
	pi.nr_map_ids = FS_ARRAY_SIZE(ids);
	pi.map_ids = (__u64)(unsigned long)ids;
	len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(fd, &pi, &len))
		err = -errno;
	close(fd);
	if (err)
		return err;
	for (i = 0; i < pi.nr_map_ids && i < FS_ARRAY_SIZE(ids); i++)
		if (ids[i] == mi.id)
			return 1;
	return 0;
}
