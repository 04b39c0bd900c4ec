// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* flow_json.c - a flow key's fields in an answer (flow_json.h). */
#include "keys.h"
#include "flow_fmt.h"
#include "flow_json.h"

struct json_object *fs_flow_key_json(const struct fs_flow_key *key)
{
	struct json_object *f = json_object_new_object();
	char src[FS_ADDR_STR_MAX] = "?", dst[FS_ADDR_STR_MAX] = "?", num[4];

	fs_addr_str(key->family, key->src, src, sizeof(src));
	fs_addr_str(key->family, key->dst, dst, sizeof(dst));
	json_object_object_add(f, FS_KEY_SRC, json_object_new_string(src));
	json_object_object_add(f, FS_KEY_DST, json_object_new_string(dst));
	json_object_object_add(f, FS_KEY_SPORT, json_object_new_uint64(fs_flow_sport(key)));
	json_object_object_add(f, FS_KEY_DPORT, json_object_new_uint64(fs_flow_dport(key)));
	json_object_object_add(f, FS_KEY_PROTO, json_object_new_string(
			fs_proto_str(key->proto, num, sizeof(num))));
	json_object_object_add(f, FS_KEY_PROTO_NUM, json_object_new_uint64(key->proto));
	json_object_object_add(f, FS_KEY_FAMILY, json_object_new_uint64(key->family));
	return f;
}
