/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * reply.h - typed fields of a daemon answer, found by dotted path.
 *
 * fs_reply_u64(answer, "params.cms_width", &w) walks the nested objects
 * and checks the type.  A missing or mistyped field is a protocol error:
 * the getter prints one line naming the path and returns -EPROTO, so a
 * command reads every field it renders through these and stops at the
 * first failure, before printing anything on stdout.
 */
#ifndef FLOWSKETCH_CLI_REPLY_H
#define FLOWSKETCH_CLI_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include <linux/types.h>

/* Name the command in the messages that follow ("flowsketchd's answer to
 * status has no ..."); NULL for none. */
void fs_reply_context(const char *cmd);

/* A non-negative integer. */
int fs_reply_u64(struct json_object *obj, const char *path, __u64 *out);
/* An integer in [min, max]; outside it is a protocol error too. */
int fs_reply_u64_in(struct json_object *obj, const char *path, __u64 min,
		    __u64 max, __u64 *out);
/* Any finite number, integer or not. */
int fs_reply_double(struct json_object *obj, const char *path, double *out);
int fs_reply_bool(struct json_object *obj, const char *path, bool *out);
/* The string stays owned by obj, made printable there first
 * (printable.h): a caller may print it as it is. */
int fs_reply_string(struct json_object *obj, const char *path,
		    const char **out);
int fs_reply_array(struct json_object *obj, const char *path,
		   struct json_object **out);
int fs_reply_object(struct json_object *obj, const char *path,
		    struct json_object **out);

/*
 * A table's rows out of the array at path: *rows a fresh array (to free())
 * of its *n elements of size bytes, each filled by parse(element, row,
 * ctx).  0, or the first error (-EPROTO, -ENOMEM), having said it.
 */
typedef int fs_reply_row_fn(struct json_object *elem, void *row, void *ctx);
int fs_reply_rows(struct json_object *obj, const char *path, size_t size,
		  fs_reply_row_fn *parse, void *ctx, void **rows, size_t *n);

/* The path of key inside an answer's (or an entry's) "error_bound"; the
 * caller includes keys.h. */
#define FS_REPLY_BOUND(key) FS_KEY_ERROR_BOUND "." key

/* Print obj pretty, as the daemon sent it (for --json), with what a
 * terminal would obey escaped (fs_print_json_text()). */
void fs_reply_print_json(struct json_object *obj);

#endif /* FLOWSKETCH_CLI_REPLY_H */
