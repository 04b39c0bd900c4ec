// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * conn.c - the connection frontend's kind (tp_object.h): bpf/conn.bpf.c
 * on tp_btf/inet_sock_set_state, counting who opens TCP connections in
 * the daemon's network namespace (attempts as packets, establishments as
 * bytes; the object's header comment has the key and the events).
 */
#include <errno.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "tp_object.h"
#include "datapath_setup.h"
#include "conn.skel.h"	/* after tp_object.h: needs params.h's types */

static void *conn_open(const struct fs_sketch_params *p, const struct fsd_options *o,
		       bool kfunc, struct bpf_object **obj,
		       struct bpf_program **prog)
{
	struct conn *skel;
	struct stat st;
	int err;

	if (stat("/proc/self/ns/net", &st))
		return fsd_tp_open_failed("conn", -errno);
	skel = conn__open();
	if (!skel)
		return fsd_tp_open_failed("conn", -errno);
	skel->rodata->fs_conn_netns = (__u32)st.st_ino;
	err = FS_DATAPATH_SETUP(skel, p, kfunc);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.fs_reports,
					       o->ringbuf_kib * 1024U);
	if (err) {
		conn__destroy(skel);
		return fsd_tp_open_failed("conn", err);
	}
	*obj = skel->obj;
	*prog = skel->progs.fs_conn;
	return skel;
}

static int conn_load(void *skel)
{
	return conn__load(skel);
}

static void conn_destroy(void *skel)
{
	conn__destroy(skel);
}

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
