// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * test_btf.c - the module published its kfunc: /sys/kernel/btf/flowsketch
 * exists and its BTF (split on top of vmlinux's) has a FUNC named
 * bpf_flowsketch_update4 whose parameters carry the names the verifier
 * reads the ABI from (kfunc.h).  The names are written out here, not made
 * from FS_KFUNC_MAPS: they are the ABI, and a change to that list must
 * come with a new version (and a change here), not follow it silently.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "vmtest.h"

static const char *const fs_vm_kfunc_params[] = {
	"args", "args__sz", "cms", "cms_narrow", "hll_packed",
};

void fs_vm_test_btf(void)
{
	struct btf *vmlinux = NULL, *btf = NULL;
	const struct btf_param *param;
	const struct btf_type *t;
	bool names_ok = false, old;
	int id, i;

	fs_vm_tap(access(FS_KFUNC_BTF_PATH, R_OK) == 0, "%s exists",
		  FS_KFUNC_BTF_PATH);

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		fs_vm_tap(false, "module BTF lists %s (no vmlinux BTF: %s)",
			  FS_KFUNC_UPDATE, strerror(errno));
		return;
	}
	btf = btf__parse_split(FS_KFUNC_BTF_PATH, vmlinux);
	if (!btf) {
		fs_vm_tap(false, "module BTF lists %s (cannot parse: %s)",
			  FS_KFUNC_UPDATE, strerror(errno));
		goto out;
	}
	id = btf__find_by_name_kind(btf, FS_KFUNC_UPDATE, BTF_KIND_FUNC);
	/* The older versions' names must be gone: a program built for one
	 * must fail to load, not count with another ABI (kfunc.h). */
	old = btf__find_by_name_kind(btf, "bpf_flowsketch_update3", BTF_KIND_FUNC) > 0 ||
	      btf__find_by_name_kind(btf, "bpf_flowsketch_update2", BTF_KIND_FUNC) > 0 ||
	      btf__find_by_name_kind(btf, "bpf_flowsketch_update", BTF_KIND_FUNC) > 0;
	fs_vm_tap(id > 0 && !old && !strcmp(FS_KFUNC_UPDATE, "bpf_flowsketch_update4"),
		  "module BTF lists FUNC %s (ABI version 4) and no older version's", FS_KFUNC_UPDATE);
	if (id <= 0)
		goto out;

	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (t && btf_is_func_proto(t) &&
	    btf_vlen(t) == FS_ARRAY_SIZE(fs_vm_kfunc_params)) {
		names_ok = true;
		param = btf_params(t);
		for (i = 0; i < btf_vlen(t); i++)
			if (strcmp(btf__name_by_offset(btf, param[i].name_off),
				   fs_vm_kfunc_params[i]))
				names_ok = false;
	}
	fs_vm_tap(names_ok, "%s takes (args, args__sz, cms, cms_narrow, hll_packed)",
		  FS_KFUNC_UPDATE);
out:
	btf__free(btf);
	btf__free(vmlinux);
}
