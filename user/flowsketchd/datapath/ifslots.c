// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* ifslots.c - the per-interface counters' names (ifslots.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "ifslots.h"
#include "base/log.h"

#define BARRIER_TRIES 3

_Static_assert(FS_IFSLOTS == FSD_MAX_IFACES, "a slot for every -i");

int fsd_ifslots_open(struct fsd_ifslots *s, int slot_fd, int count_fd,
		     int barrier_fd, int barrier_inner_fd, unsigned int ncpus)
{
	long page = sysconf(_SC_PAGESIZE);
	void *t;

	memset(s, 0, sizeof(*s));
	_Static_assert(sizeof(struct fs_ifslots) <= 4096, "one page");
	t = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		 slot_fd, 0);
	if (t == MAP_FAILED)
		return -errno;
	s->t = t;
	s->count_fd = count_fd;
	s->barrier_fd = barrier_fd;
	s->barrier_inner_fd = barrier_inner_fd;
	s->ncpus = ncpus;
	return 0;
}

void fsd_ifslots_close(struct fsd_ifslots *s)
{
	if (s->t)
		munmap(s->t, (size_t)sysconf(_SC_PAGESIZE));
	s->t = NULL;
}

/* An RCU grace period (maps.h, "Windows and slots"): past it no program
 * still counts in a slot that nothing points at any more. */
static int barrier(const struct fsd_ifslots *s)
{
	__u32 zero = 0;
	int i;

	for (i = 0; i < BARRIER_TRIES; i++)
		if (!bpf_map_update_elem(s->barrier_fd, &zero,
					 &s->barrier_inner_fd, BPF_ANY))
			return 0;
	return -1;	/* errno set */
}

static int zero_slot(const struct fsd_ifslots *s, __u32 slot)
{
	struct fs_if_counts *v = calloc(s->ncpus, sizeof(*v));
	int err = 0;

	if (!v)
		return -ENOMEM;
	if (bpf_map_update_elem(s->count_fd, &slot, v, BPF_ANY))
		err = -errno;
	free(v);
	return err;
}

static int slot_of(const struct fs_ifslots *t, const char *name)
{
	int i;

	for (i = 0; i < FS_IFSLOTS; i++)
		if (t->name[i][0] && !strncmp(t->name[i], name, FS_IFNAME_LEN))
			return i;
	return -1;
}

static bool named(const struct fsd_iface *ifaces, unsigned int n,
		  const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strncmp(ifaces[i].name, name, FS_IFNAME_LEN))
			return true;
	return false;
}

/* The highest named slot + 1: how far XDP's scan goes. */
static void set_used(struct fs_ifslots *t)
{
	unsigned int i, used = 0;

	for (i = 0; i < FS_IFSLOTS; i++)
		if (t->name[i][0])
			used = i + 1;
	__atomic_store_n(&t->n, used, __ATOMIC_RELEASE);
}

int fsd_ifslots_release(struct fsd_ifslots *s, const struct fsd_iface *ifaces,
			unsigned int n)
{
	_Static_assert(FS_IFSLOTS <= 64, "released is a 64-bit mask");
	struct fs_ifslots *t = s->t;
	__u64 released = 0;
	unsigned int i;
	int err = 0;

	for (i = 0; i < FS_IFSLOTS; i++) {
		if (!t->name[i][0] || named(ifaces, n, t->name[i]))
			continue;
		__atomic_store_n(&t->ifindex[i], 0, __ATOMIC_RELEASE);
		released |= 1ULL << i;
	}
	if (!released)
		return 0;
	/* Zeroed only once no frame still counts there, and named "free"
	 * only once zeroed: a free slot is always a zero one.  Without a
	 * barrier the names stay, for the next start to give up. */
	if (barrier(s)) {
		err = -errno;
		fsd_warn("interface counters: no RCU barrier (%s): the slots of dropped interfaces are kept",
			 strerror(-err));
		return err;
	}
	for (i = 0; i < FS_IFSLOTS; i++) {
		if (!(released >> i & 1))
			continue;
		err = zero_slot(s, i);
		if (err)
			return err;
		memset(t->name[i], 0, FS_IFNAME_LEN);
	}
	set_used(t);
	return 0;
}

/* A free slot (no name: zero, fsd_ifslots_release()), or -1. */
static int free_slot(const struct fs_ifslots *t)
{
	int i;

	for (i = 0; i < FS_IFSLOTS; i++)
		if (!t->name[i][0])
			return i;
	return -1;
}

int fsd_ifslots_assign(struct fsd_ifslots *s, const struct fsd_iface *ifaces,
		       unsigned int n)
{
	struct fs_ifslots *t = s->t;
	unsigned int i;
	int slot, err;

	for (i = 0; i < n; i++) {
		slot = slot_of(t, ifaces[i].name);
		if (slot < 0) {
			slot = free_slot(t);
			/* Every slot named, some by names no -i gives now:
			 * theirs are given up first (more than FS_IFSLOTS
			 * names between two starts). */
			if (slot < 0 && !fsd_ifslots_release(s, ifaces, n))
				slot = free_slot(t);
			if (slot < 0)
				return -ENOSPC;
			/* Free means zero already; zeroed again in case a
			 * crash left one half given up. */
			err = zero_slot(s, (__u32)slot);
			if (err)
				return err;
			strncpy(t->name[slot], ifaces[i].name, FS_IFNAME_LEN);
		}
		s->slot[i] = (__u32)slot;
	}
	set_used(t);
	return 0;
}

void fsd_ifslots_set_ifindex(struct fsd_ifslots *s, __u32 slot, int ifindex)
{
	unsigned int i;

	if (!s->t || slot >= FS_IFSLOTS)
		return;
	/* One device, one slot: the ifindex another slot still has (a
	 * name's device recreated under another name while no daemon ran)
	 * is cleared first, so the scan cannot find the old one. */
	for (i = 0; ifindex && i < FS_IFSLOTS; i++)
		if (i != slot && s->t->ifindex[i] == (__u32)ifindex)
			__atomic_store_n(&s->t->ifindex[i], 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->t->ifindex[slot], (__u32)ifindex, __ATOMIC_RELEASE);
}

int fsd_ifslots_read(const struct fsd_ifslots *s, __u32 slot,
		     struct fs_if_counts *out)
{
	struct fs_if_counts *v = calloc(s->ncpus, sizeof(*v));
	unsigned int cpu;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(s->count_fd, &slot, v))
		err = -errno;
	for (cpu = 0; !err && cpu < s->ncpus; cpu++) {
		out->packets += v[cpu].packets;
		out->bytes += v[cpu].bytes;
	}
	free(v);
	return err;
}
