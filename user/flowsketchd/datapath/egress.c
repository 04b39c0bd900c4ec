// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * egress.c - the transmit frontend's kind (tp_object.h): bpf/egress.bpf.c
 * on tp_btf/net_dev_start_xmit, counting what the -i interfaces send (the
 * "out" direction), with the interface filter fs_ifaces (tp_frontend.h).
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include "tp_object.h"
#include "datapath_setup.h"
#include "egress.skel.h"	/* after tp_object.h: needs params.h's types */

static void *egress_open(const struct fs_sketch_params *p, const struct fsd_options *o,
			 bool kfunc, struct bpf_object **obj,
			 struct bpf_program **prog)
{
	struct egress *skel = egress__open();
	int err;

	if (!skel)
		return fsd_tp_open_failed("egress", -errno);
	err = FS_DATAPATH_SETUP(skel, p, kfunc);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.fs_reports,
					       o->ringbuf_kib * 1024U);
	if (err) {
		egress__destroy(skel);
		return fsd_tp_open_failed("egress", err);
	}
	*obj = skel->obj;
	*prog = skel->progs.fs_egress;
	return skel;
}

static int egress_load(void *skel)
{
	return egress__load(skel);
}

static void egress_destroy(void *skel)
{
	egress__destroy(skel);
}

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
