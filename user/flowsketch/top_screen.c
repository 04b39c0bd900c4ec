// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * top_screen.c - `flowsketch top` on a terminal: a full-screen view, like
 * top(1), redrawn after every window the daemon closes.
 *
 * Each screen is one request and the same table as the plain view
 * (fs_top_table(), top_table.c), drawn with ncurses: the header lines (span,
 * totals, the Count-Min bound, the distinct counts with their error), the
 * flows, and a last line with the view's state and its keys:
 *
 *   p b c    sort by packets, bytes, or TCP connections opened
 *   d        direction: both, in (received), out (sent); not with c
 *   + -      span: one window, 10 s, 1 min, 5 min, 15 min, 1 h
 *   space    redraw now
 *   q        quit (so does SIGINT)
 *
 * A daemon that does not answer (restarting, gone) is shown on the last
 * line and asked again at the next redraw: the view outlives a restart.
 * Messages that would go to stderr are kept for that line instead
 * (fs_error_capture()), so nothing writes over the screen.  A terminal
 * ncurses cannot drive (no TERM) gets the plain view (top.c).
 */
#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "args.h"
#include "top_screen.h"

/* Redraw this long after the window should have closed (as top.c). */
#define SCREEN_MARGIN_MS 200
/* Ask again this soon when the daemon did not answer. */
#define SCREEN_RETRY_MS 1000
/* The longest a key or SIGINT waits to be seen. */
#define SCREEN_SLICE_MS 100

static const __u32 spans[] = { 0, 10, 60, 300, 900, 3600 };
#define NSPANS (sizeof(spans) / sizeof(spans[0]))

static volatile sig_atomic_t screen_interrupted;

static void on_sigint(int sig)
{
	screen_interrupted = 1;
}

/* Milliseconds until shortly after the window following window_end. */
static int ms_to_next_window(__u64 window_end, __u64 window_seconds)
{
	struct timespec now;
	double left;

	if (!window_seconds)
		return SCREEN_RETRY_MS;
	clock_gettime(CLOCK_REALTIME, &now);
	left = (double)(window_end + window_seconds) -
	       (now.tv_sec + now.tv_nsec / 1e9);
	/* A clock stepped by more than a window: fall back to the period. */
	if (left <= 0 || left > (double)window_seconds + 1)
		left = (double)window_seconds;
	return (int)(left * 1000) + SCREEN_MARGIN_MS;
}

/* Draw text (lines) from the top, clipped to the screen. */
static void draw_lines(const char *text)
{
	int row = 0, rows = LINES - 1;
	const char *p = text, *nl;

	while (*p && row < rows) {
		int len;

		nl = strchr(p, '\n');
		len = (int)(nl ? (size_t)(nl - p) : strlen(p));
		mvaddnstr(row++, 0, p, len < COLS ? len : COLS);
		if (!nl)
			break;
		p = nl + 1;
	}
}

static void draw_state(const struct top_opts *o, unsigned int span_i,
		       const char *error)
{
	char line[320];

	if (error[0])
		snprintf(line, sizeof(line), "flowsketchd: %s (asking again)", error);
	else
		snprintf(line, sizeof(line),
			 "sort %s, direction %s, span %s%u s  |  p b c sort, d direction, +/- span, q quit",
			 o->sort, o->direction ? o->direction : "both",
			 spans[span_i] ? "" : "one window, ",
			 spans[span_i]);
	attron(A_REVERSE);
	mvaddnstr(LINES - 1, 0, line, COLS);
	attroff(A_REVERSE);
}

/* One request and its screen; *wait_ms until the next. */
static void screen_once(const struct fs_cli *cli, const struct top_opts *o,
			unsigned int span_i, int *wait_ms)
{
	char error[256], *text = NULL;
	__u64 end = 0, secs = 0;
	size_t len = 0;
	FILE *out;

	fs_error_capture(error, sizeof(error));
	*wait_ms = SCREEN_RETRY_MS;
	out = open_memstream(&text, &len);
	if (!out)
		snprintf(error, sizeof(error), "out of memory");
	else if (!fs_top_table(cli, o, out, &end, &secs))
		*wait_ms = ms_to_next_window(end, secs);
	if (out)
		fclose(out);
	fs_error_capture(NULL, 0);
	erase();
	if (text && !error[0])
		draw_lines(text);
	draw_state(o, span_i, error);
	refresh();
	free(text);
}

/* Apply key ch to o; false for q. */
static bool screen_key(int ch, struct top_opts *o, unsigned int *span_i)
{
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 'p':
		o->sort = "packets";
		break;
	case 'b':
		o->sort = "bytes";
		break;
	case 'c':
		/* Connections are keyed by who opened them, not by the
		 * direction of their packets (protocol.h). */
		o->sort = "connections";
		o->direction = NULL;
		break;
	case 'd':
		if (!strcmp(o->sort, "connections"))
			break;
		o->direction = !o->direction || !strcmp(o->direction, "both") ? "in" :
			       !strcmp(o->direction, "in") ? "out" : "both";
		break;
	case '+':
		if (*span_i + 1 < NSPANS)
			(*span_i)++;
		break;
	case '-':
		if (*span_i)
			(*span_i)--;
		break;
	}
	o->span = spans[*span_i];
	return true;
}

int fs_top_screen(const struct fs_cli *cli, struct top_opts *o)
{
	struct sigaction sa = { .sa_handler = on_sigint };
	unsigned int span_i = 0, i;
	int wait_ms, ch;
	SCREEN *scr;

	for (i = 0; i < NSPANS; i++)
		if (spans[i] <= o->span)
			span_i = i;
	/* No SA_RESTART: SIGINT cuts getch() short, and the loop ends. */
	sigaction(SIGINT, &sa, NULL);
	/* The table's UTF-8 (the ± of the error) as the terminal's locale
	 * says; ncurses writes bytes it cannot place as escapes otherwise. */
	setlocale(LC_CTYPE, "");
	/* newterm(), not initscr(): a terminal ncurses does not know (TERM
	 * unset, as under a service or CI) is an error to fall back from,
	 * not an exit. */
	scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return -ENOTTY;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	while (!screen_interrupted) {
		screen_once(cli, o, span_i, &wait_ms);
		/* In slices: ncurses may take a signal for EINTR and go on
		 * waiting, so SIGINT is looked for between them. */
		for (ch = ERR; ch == ERR && wait_ms > 0 && !screen_interrupted;
		     wait_ms -= SCREEN_SLICE_MS) {
			timeout(wait_ms < SCREEN_SLICE_MS ? wait_ms : SCREEN_SLICE_MS);
			ch = getch();
		}
		if (ch == ERR || ch == KEY_RESIZE || ch == ' ')
			continue;
		/* Keys typed while a screen was drawn wait their turn: each
		 * is one change and one request, none is lost. */
		if (!screen_key(ch, o, &span_i))
			break;
	}
	endwin();
	delscreen(scr);
	return 0;
}
