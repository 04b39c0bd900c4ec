// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tp_kinds.c - the tracepoint frontends' kinds (tp_object.h):
 *
 *   egress  bpf/egress.bpf.c on tp_btf/net_dev_start_xmit, counting what
 *           the -i interfaces send (the "out" direction), with the
 *           interface filter fs_ifaces (tp_frontend.h);
 *   conn    bpf/conn.bpf.c on tp_btf/inet_sock_set_state, counting who
 *           opens TCP connections in the daemon's network namespace
 *           (attempts as packets, establishments as bytes; the object's
 *           header comment has the key and the events).
 */
#include <errno.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "tp_object.h"
#include "datapath_setup.h"
#include "egress.skel.h"	/* after tp_object.h: they need params.h's types */
#include "conn.skel.h"

/*
 * The ops of skeleton SKEL, whose program is PROG: open sets what every
 * datapath takes before load (datapath_setup.h) and the report ring's
 * size, after PREPARE(skel) set what else the kind's .rodata holds (0 or
 * -errno).
 */
#define TP_SKELETON(SKEL, PROG, PREPARE)					\
static void *SKEL##_open(const struct fs_sketch_params *p,			\
			 const struct fsd_options *o, bool kfunc,		\
			 struct bpf_object **obj, struct bpf_program **prog)	\
{										\
	struct SKEL *skel = SKEL##__open();					\
	int err;								\
										\
	if (!skel)								\
		return fsd_tp_open_failed(#SKEL, -errno);			\
	err = PREPARE(skel) ?: FS_DATAPATH_SETUP(skel, p, kfunc) ?:		\
	      bpf_map__set_max_entries(skel->maps.fs_reports,			\
				       o->ringbuf_kib * 1024U);			\
	if (err) {								\
		SKEL##__destroy(skel);						\
		return fsd_tp_open_failed(#SKEL, err);				\
	}									\
	*obj = skel->obj;							\
	*prog = skel->progs.PROG;						\
	return skel;								\
}										\
										\
static int SKEL##_load(void *skel)						\
{										\
	return SKEL##__load(skel);						\
}										\
										\
static void SKEL##_destroy(void *skel)						\
{										\
	SKEL##__destroy(skel);							\
}

static int egress_prepare(struct egress *skel)
{
	return 0;
}

/* The network namespace whose sockets it counts: the daemon's. */
static int conn_prepare(struct conn *skel)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	skel->rodata->fs_conn_netns = (__u32)st.st_ino;
	return 0;
}

TP_SKELETON(egress, fs_egress, egress_prepare)
TP_SKELETON(conn, fs_conn, conn_prepare)

const struct fsd_tp_kind fsd_tp_egress = {
	.name = "egress",
	.direction = "what the interfaces send",
	.hook = "tp_btf/net_dev_start_xmit",
	.ifaces = true,
	.ops = {
		.label = "egress ",
		.pins = fsd_tp_pins,
		.n_pins = FSD_TP_PINS_ALL,
		.open = egress_open,
		.load = egress_load,
		.destroy = egress_destroy,
	},
};

const struct fsd_tp_kind fsd_tp_conn = {
	.name = "conn",
	.direction = "TCP connections opened",
	.hook = "tp_btf/inet_sock_set_state",
	.ifaces = false,
	.ops = {
		.label = "conn ",
		.pins = fsd_tp_pins,
		.n_pins = FSD_TP_PINS_NO_IFACES,
		.open = conn_open,
		.load = conn_load,
		.destroy = conn_destroy,
	},
};
