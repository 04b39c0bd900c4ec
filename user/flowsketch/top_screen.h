/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * top_screen.h - `flowsketch top`'s full-screen view (top_screen.c): the
 * table of top_table.h drawn with ncurses, changed with keys.
 */
#ifndef FLOWSKETCH_CLI_TOP_SCREEN_H
#define FLOWSKETCH_CLI_TOP_SCREEN_H

#include "cli.h"
#include "top_table.h"

/* The full-screen view until q or SIGINT; its keys change o.  0, or
 * -ENOTTY when ncurses cannot drive the terminal (the caller shows the
 * plain view instead). */
int fs_top_screen(const struct fs_cli *cli, struct top_opts *o);

#endif /* FLOWSKETCH_CLI_TOP_SCREEN_H */
