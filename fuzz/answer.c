// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * answer.c - fuzz the CLI's reading of an answer: the text (answer.h),
 * then each command's check and table (show.h), then the --json printer.
 *
 * Every command's show() runs on the same answer, as if any of them had
 * asked: a status answer fed to top is exactly the mismatch to survive.
 * Aborts when the --json text is not the same JSON value as the answer,
 * or holds a character a terminal would obey (printable.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "answer.h"
#include "printable.h"
#include "reply.h"
#include "show.h"
#include "terminal_safe.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* The tables and the messages are not what is tested here. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

static void check_json_text(struct json_object *answer)
{
	const char *text = json_object_to_json_string_ext(answer,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	struct json_object *back;
	char *out = NULL;
	size_t len;
	FILE *f;

	f = open_memstream(&out, &len);
	if (!f)
		abort();
	fs_print_json_text(f, text);
	fclose(f);
	if (!terminal_safe(out, len, "\n"))	/* pretty-printing's newlines */
		abort();
	back = json_tokener_parse(out);
	if (!back || !json_object_equal(back, answer))
		abort();
	json_object_put(back);
	free(out);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static fs_show_fn *const shows[] = {
		fs_status_show, fs_flows_show, fs_top_show, fs_prefixes_show,
		fs_spread_show, fs_accuracy_show,
	};
	struct json_object *answer, *copy;
	size_t i;

	if (fs_answer_parse((const char *)data, size, &answer))
		return 0;
	check_json_text(answer);
	for (i = 0; i < sizeof(shows) / sizeof(shows[0]); i++) {
		copy = NULL;	/* deep_copy wants an empty target */
		if (json_object_deep_copy(answer, &copy, NULL))
			abort();
		shows[i](copy, true);
		json_object_put(copy);
	}
	fs_answer_check_error(answer);
	json_object_put(answer);
	return 0;
}
