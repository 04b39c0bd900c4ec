// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * plot.c - `flowsketch plot`: a span drawn with gnuplot, as a PNG.
 *
 * Two requests: "windows" (the span's windows one by one: each one's
 * packets, bytes and distinct flows, per direction; protocol.h) and "top"
 * by bytes over the same span (the top talkers and their share).  Their
 * figures go to tab-separated files in a private temporary directory,
 * and gnuplot (Debian's gnuplot-nox, pngcairo terminal) reads them with a
 * script this command writes to its standard input:
 *
 *   packets per window      one line per direction
 *   bytes per window        the same
 *   distinct flows          per window (HyperLogLog estimates)
 *   top talkers             their share of the span's bytes, as bars
 *
 * The series file (--data FILE keeps it) has one line per window:
 *
 *   direction  end (Unix s, wall clock)  seconds  packets  bytes  distinct_flows
 *
 * Nothing is drawn by hand: gnuplot does the drawing, axes and legends.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "keys.h"
#include "args.h"
#include "cli.h"
#include "client.h"
#include "reply.h"
#include "flowsketch/compat.h"

#define PLOT_DEFAULT_SPAN 300
#define PLOT_DEFAULT_TOP 8
#define PLOT_MAX_TOP 40

struct plot_opts {
	__u32 span;
	__u32 top;
	const char *direction;
	const char *out;
	const char *data;
};

#define OFF(field) offsetof(struct plot_opts, field)

static const struct fs_opt plot_opts[] = {
	{ "output", 'o', "FILE", NULL, OFF(out), 0, 0, NULL, "the PNG to write (required)" },
	{ "span", 't', "SECONDS", fs_opt_span, OFF(span), 0, 0, NULL,
	  "span to draw (default " FS_STR(PLOT_DEFAULT_SPAN) "); units s, m, h accepted" },
	{ "direction", 'd', "D", fs_opt_direction, OFF(direction), 0, 0, NULL,
	  "in, out or both (default)" },
	{ "number", 'n', "N", fs_opt_number, OFF(top), 1, PLOT_MAX_TOP, NULL,
	  "top talkers drawn (default " FS_STR(PLOT_DEFAULT_TOP) ", at most "
	  FS_STR(PLOT_MAX_TOP) ")" },
	{ "data", 0, "FILE", NULL, OFF(data), 0, 0, NULL,
	  "also keep the per-window figures, tab-separated" },
	{ "help", 'h', NULL, fs_opt_show_help, 0, 0, 0, NULL, "this text" },
	{ 0 }
};

const struct fs_optset fs_plot_optset = {
	.name = "plot",
	.usage =
	"Usage: flowsketch [--socket PATH] [--timeout SECONDS] plot -o FILE.png\n"
	"                  [--span SECONDS] [--direction in|out|both] [-n N] [--data FILE]\n"
	"\n"
	"Packets, bytes and distinct flows per window over a span, and the top\n"
	"talkers' share of its bytes, drawn with gnuplot into a PNG.\n"
	"\n",
	.opts = plot_opts,
	.help_col = FS_CLI_HELP_COL,
	.getopt_error = fs_cli_getopt_error,
};

static int parse_opts(int argc, char **argv, struct plot_opts *o)
{
	int ret = fs_cli_parse(&fs_plot_optset, argc, argv, o, NULL);

	if (ret)
		return ret;
	if (!o->out)
		return fs_usage_error("plot", "-o FILE.png is required");
	/* Any name is taken as it is: it never reaches gnuplot (plot()). */
	if (!*o->out)
		return fs_usage_error("plot", "-o needs a file name");
	return fs_no_operands("plot", argc, argv);
}

static struct json_object *request(const char *cmd, const struct plot_opts *o)
{
	struct json_object *req = fs_request_span(fs_request(cmd), o->span, o->direction);

	if (!strcmp(cmd, "top")) {
		json_object_object_add(req, FS_KEY_N, json_object_new_int64(o->top));
		json_object_object_add(req, FS_KEY_SORT, json_object_new_string("bytes"));
	}
	return req;
}

/* The series of the "windows" answer into f, checked; the window count
 * written, or -EPROTO. */
static int write_series(struct json_object *a, FILE *f)
{
	struct json_object *series, *windows, *s, *w;
	size_t i, j, n = 0;
	const char *dir;
	__u64 start, end, packets, bytes, flows;
	int err;

	if ((err = fs_reply_array(a, FS_KEY_SERIES, &series)))
		return err;
	for (i = 0; i < json_object_array_length(series); i++) {
		s = json_object_array_get_idx(series, i);
		if ((err = fs_reply_string(s, FS_KEY_DIRECTION, &dir)) ||
		    (err = fs_reply_array(s, FS_KEY_WINDOWS, &windows)))
			return err;
		if (strcmp(dir, "in") && strcmp(dir, "out"))
			return fs_bad_answer("flowsketchd's answer has a series of direction '%s'", dir);
		for (j = 0; j < json_object_array_length(windows); j++) {
			w = json_object_array_get_idx(windows, j);
			if ((err = fs_reply_u64(w, FS_KEY_START_NS, &start)) ||
			    (err = fs_reply_u64(w, FS_KEY_END_NS, &end)) ||
			    (err = fs_reply_u64(w, FS_KEY_PACKETS, &packets)) ||
			    (err = fs_reply_u64(w, FS_KEY_BYTES, &bytes)) ||
			    (err = fs_reply_u64(w, FS_KEY_DISTINCT_FLOWS, &flows)))
				return err;
			if (end < start)
				return fs_bad_answer("flowsketchd's answer has a window that ends before it starts");
			fprintf(f, "%s\t%.3f\t%.3f\t%llu\t%llu\t%llu\n", dir, end / 1e9,
				(end - start) / 1e9, (unsigned long long)packets,
				(unsigned long long)bytes, (unsigned long long)flows);
			n++;
		}
	}
	return (int)n;
}

/* The top talkers of the "top" answer into f: label and share in %. */
static int write_top(struct json_object *a, FILE *f)
{
	struct json_object *flows, *fl;
	const char *src, *dst, *proto;
	__u64 sport, dport;
	double share;
	size_t i;
	int err;

	if ((err = fs_reply_array(a, FS_KEY_FLOWS, &flows)))
		return err;
	for (i = 0; i < json_object_array_length(flows); i++) {
		fl = json_object_array_get_idx(flows, i);
		if ((err = fs_reply_string(fl, FS_KEY_SRC, &src)) ||
		    (err = fs_reply_string(fl, FS_KEY_DST, &dst)) ||
		    (err = fs_reply_string(fl, FS_KEY_PROTO, &proto)) ||
		    (err = fs_reply_u64(fl, FS_KEY_SPORT, &sport)) ||
		    (err = fs_reply_u64(fl, FS_KEY_DPORT, &dport)) ||
		    (err = fs_reply_double(fl, FS_KEY_SHARE, &share)))
			return err;
		/* No tab or quote can reach gnuplot: fs_reply_string() made
		 * the strings printable, and addresses have neither. */
		fprintf(f, "%s:%llu > %s:%llu %s\t%.4f\n", src, (unsigned long long)sport,
			dst, (unsigned long long)dport, proto, share * 100);
	}
	return (int)i;
}

/*
 * The gnuplot script for the files in dir, drawn into dir/plot.png.  No
 * user string is in it: dir is mkdtemp()'s (fixed characters), the
 * direction one of three words, the rest numbers.  gnuplot reads its
 * output name as a command when it starts with '|', and quotes or line
 * breaks in it would end the string: so the user's -o name is only
 * ever passed to rename(2) or open(2) (place_png()).
 */
static void write_script(FILE *f, const char *dir, int ntop,
			 const struct plot_opts *o)
{
	static const char *const panels[3][2] = {
		{ "4", "packets per window" },
		{ "5", "bytes per window" },
		{ "6", "distinct flows per window" },
	};
	bool in = strcmp(o->direction, "out"), both = !strcmp(o->direction, "both");
	int i;

	fprintf(f, "set terminal pngcairo size 1100,1000 noenhanced\n"
		   "set output '%s/plot.png'\n"
		   "set datafile separator '\\t'\n"
		   "set multiplot layout 4,1 title 'flowsketch: last %u s, direction %s'\n"
		   "set xdata time\nset timefmt '%%s'\nset format x '%%H:%%M:%%S'\n"
		   "set grid\nset key top left\nset yrange [0:*]\n", dir, o->span, o->direction);
	for (i = 0; i < 3; i++) {
		fprintf(f, "set ylabel '%s'\nplot ", panels[i][1]);
		if (in)
			fprintf(f, "'%s/series.tsv' using 2:(strcol(1) eq 'in' ? column(%s) : NaN) with linespoints title 'in'%s",
				dir, panels[i][0], both ? ", " : "\n");
		if (!in || both)
			fprintf(f, "'%s/series.tsv' using 2:(strcol(1) eq 'out' ? column(%s) : NaN) with linespoints title 'out'\n",
				dir, panels[i][0]);
	}
	fprintf(f, "unset xdata\nset format x '%%g'\nset ylabel 'share of bytes (%%)'\n"
		   "set key off\nset bmargin 7\nset style fill solid 0.6\nset boxwidth 0.7\n"
		   "set xtics rotate by 25 right font ',8'\n");
	if (ntop)
		fprintf(f, "plot '%s/top.tsv' using 0:2:xtic(1) with boxes\n", dir);
	else
		fprintf(f, "set label 1 'no flow above the report threshold in this span' at graph 0.3, 0.5\n"
			   "plot NaN notitle\n");
	fprintf(f, "unset multiplot\n");
}

/* Run gnuplot on script (its stdin), its messages kept in log and shown
 * only when it fails; 0 or -errno with a message. */
static int run_gnuplot(const char *script, const char *log)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		if (!freopen(script, "r", stdin) || !freopen(log, "w", stderr))
			_exit(127);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		_exit(errno == ENOENT ? 126 : 127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 126) {
		fs_error("gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
		return -ENOENT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		FILE *f = fopen(log, "r");
		char line[256];

		fs_error("gnuplot failed (exit %d): the plot was not written",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		while (f && fgets(line, sizeof(line), f))
			fprintf(stderr, "  gnuplot: %s", line);
		if (f)
			fclose(f);
		return -EIO;
	}
	return 0;
}

/* src's bytes into the open fd; 0 or -errno. */
static int copy_into(const char *src, int fd)
{
	char buf[65536];
	ssize_t n, w, off;
	int in = open(src, O_RDONLY | O_CLOEXEC), err = 0;

	if (in < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		for (off = 0; off < n; off += w) {
			w = write(fd, buf + off, n - off);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0) {
				err = -errno;
				goto out;
			}
		}
	}
out:
	close(in);
	return err;
}

/*
 * The drawn PNG (src, in the private directory) to the user's name dst:
 * renamed when both are on one file system, else copied to a temporary
 * file beside dst and renamed over it, so that dst is either the old file
 * or the whole new one.  The copy gets the mode gnuplot's file would have
 * had (0666 less the umask).  0 or -errno, with one message naming dst.
 */
static int place_png(const char *src, const char *dst)
{
	char *copy = strdup(dst), *tmp = NULL;
	int fd = -1, err = 0;
	mode_t mask;

	if (!copy) {
		err = -ENOMEM;
		goto out;
	}
	if (!rename(src, dst))
		goto out;
	err = -errno;
	if (err != -EXDEV)
		goto out;
	if (asprintf(&tmp, "%s/.flowsketch-plot.XXXXXX", dirname(copy)) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		tmp = NULL;
		goto out;
	}
	mask = umask(0);
	umask(mask);
	err = fchmod(fd, 0666 & ~mask) ? -errno : copy_into(src, fd);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	if (err)
		fs_error("cannot write %s: %s", dst, strerror(-err));
	free(tmp);
	free(copy);
	return err;
}

/* What plot() makes in its directory: the first three written by draw(). */
static const char *const plot_files[] = {
	"series.tsv", "top.tsv", "plot.gp", "gnuplot.log", "plot.png"
};

/* The answers' figures and gnuplot's script into dir, then the PNG drawn
 * and placed at o->out. */
static int draw(const char *dir, struct json_object *windows,
		struct json_object *top, const struct plot_opts *o)
{
	FILE *f[4] = { NULL };	/* series, top talkers, script, --data */
	char path[64], log[64];
	int err = 0, nwin, ntop, i;

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, plot_files[i]);
		f[i] = fopen(path, "w");
	}
	if (!f[0] || !f[1] || !f[2]) {
		err = -errno;
		fs_error("cannot write in %s: %s", dir, strerror(-err));
		goto out;
	}
	if (o->data && !(f[3] = fopen(o->data, "w"))) {
		err = -errno;
		fs_error("cannot write %s: %s", o->data, strerror(-err));
		goto out;
	}
	nwin = write_series(windows, f[0]);
	if (nwin > 0 && f[3])
		write_series(windows, f[3]);
	ntop = nwin < 0 ? 0 : write_top(top, f[1]);
	if (nwin < 0 || ntop < 0) {
		err = nwin < 0 ? nwin : ntop;
		goto out;
	}
	if (!nwin) {
		fs_error("no window has finished in the last %u s: nothing to plot", o->span);
		err = -ENODATA;
		goto out;
	}
	write_script(f[2], dir, ntop, o);
	for (i = 0; i < 4; i++) {
		if (f[i])
			err = fclose(f[i]) && !err ? -errno : err;
		f[i] = NULL;
	}
	if (err) {
		fs_error("cannot write the plot's data: %s", strerror(-err));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/plot.gp", dir);
	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	err = run_gnuplot(path, log);
	if (!err) {
		snprintf(path, sizeof(path), "%s/plot.png", dir);
		err = place_png(path, o->out);
	}
out:
	for (i = 0; i < 4; i++)
		if (f[i])
			fclose(f[i]);
	return err;
}

static int plot(const struct fs_cli *cli, const struct plot_opts *o)
{
	struct json_object *windows = NULL, *top = NULL;
	char dir[] = "/tmp/flowsketch-plot.XXXXXX", path[64];
	size_t i;
	int err;

	if (!mkdtemp(dir)) {
		err = -errno;
		fs_error("cannot make a temporary directory: %s", strerror(-err));
		return err;
	}
	err = fs_client_call(cli, request("windows", o), &windows);
	if (!err)
		err = fs_client_call(cli, request("top", o), &top);
	if (!err)
		err = draw(dir, windows, top, o);
	for (i = 0; i < FS_ARRAY_SIZE(plot_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, plot_files[i]);
		unlink(path);
	}
	rmdir(dir);
	json_object_put(windows);
	json_object_put(top);
	return err;
}

int fs_cmd_plot(const struct fs_cli *cli, int argc, char **argv)
{
	struct plot_opts o = { .span = PLOT_DEFAULT_SPAN, .top = PLOT_DEFAULT_TOP,
			       .direction = "both" };
	int ret = parse_opts(argc, argv, &o);

	if (ret)
		return ret == FS_HELP_SHOWN ? FS_EXIT_OK : ret;
	return plot(cli, &o) ? FS_EXIT_RUNTIME : FS_EXIT_OK;
}
