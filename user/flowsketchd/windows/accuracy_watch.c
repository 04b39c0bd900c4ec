// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* accuracy_watch.c - every finished window's sample check (accuracy_watch.h). */
#include <string.h>
#include "base/log.h"
#include "accuracy_watch.h"

void fsd_accuracy_watch_init(struct fsd_accuracy_watch *w, const struct fs_sketch_params *p)
{
	memset(w, 0, sizeof(*w));
	w->on = p->sample_log2b != 0;
	w->delta = fs_cms_delta(p);
}

void fsd_accuracy_watch_window(struct fsd_accuracy_watch *w, const struct fs_sketch *const *s,
			       size_t n, const struct fs_hash_key *hk)
{
	struct fs_sample_check one;
	unsigned int was, i;
	size_t j;
	int err;

	if (!w->on || !n)
		return;
	for (j = 0; j < n; j++) {
		err = fs_sample_check(s[j], fs_sample_estimate_hashed, (void *)hk, NULL, NULL,
				      j ? &one : &w->last);
		if (err) {
			fsd_warn("accuracy: cannot check a window: %s", strerror(-err));
			return;
		}
		if (j)
			fs_sample_check_add(&w->last, &one);
	}
	w->windows++;
	w->undercounts += w->last.c[0].undercounts + w->last.c[1].undercounts;
	if (w->last.tells) {
		w->z[w->next] = w->last.z;
		w->next = (w->next + 1) % FSD_WATCH_WINDOWS;
		if (w->nz < FSD_WATCH_WINDOWS)
			w->nz++;
	}
	w->within = fs_sample_share_within(w->z, w->nz, 2);
	was = w->alarms;
	w->alarms = fs_sample_alarms(w->last.c, w->delta, w->last.z, w->last.tells);
	for (i = 0; i < FS_SAMPLE_NALARMS; i++) {
		if (!(w->alarms & (1U << i)))
			continue;
		w->alarm_windows[i]++;
		if (!(was & (1U << i)))
			fsd_warn("accuracy: %s alarm: the sketches' measured error left its design (flowsketch accuracy)",
				 fs_sample_alarm_names[i]);
	}
}
