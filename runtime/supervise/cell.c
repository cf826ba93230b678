/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cell.c - a code-interpreter cell (cell.h): the session loop the
 * sandbox runs, and the supervisor's side of one cell.
 *
 * The supervisor's loop is supervise.c's, narrowed to one cell: one poll()
 * over the executor's pidfd, the caller's cancel fd, the two output pipes
 * and the cell channel, the timeout and the monitor as deadlines on the
 * same clock, no process signal.  It ends at the loop's status byte, not
 * at the executor's end: the executor lives on for the next cell.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "runtime/supervise/cell.h"

/*
 * The loop (/cordon/cordon_session.py).  Each cell is parsed as a module;
 * when its last statement is an expression, that expression is evaluated
 * apart and shown through sys.displayhook, as the Python prompt shows it
 * (and sets _), so a cell that ends in `df.head()` shows the frame.  Every
 * cell runs in the loader's globals, which are __main__'s: what one cell
 * binds the next one sees, and pickle finds cell-defined classes in
 * __main__ as it does in a script.  A traceback starts at the cell's own
 * frame, with its lines (registered in linecache).  SystemExit ends the
 * interpreter the way the end of a program does (cordon_exit.end): the
 * session is over.  No import at the top: the loader imports this module
 * in every sandbox, and only a session pays for ast and traceback.
 *
 * Rich outputs (cordon_display, docs/displays.md): before each cell the
 * bundles of the one before are removed (the supervisor read them with
 * that cell's result), so a cell's result carries its own only.  A last
 * expression with a rich form (_repr_html_ and the like, a matplotlib
 * figure: a DataFrame's table) becomes a bundle as well as its repr on
 * stdout; plain values stay stdout only, as at the prompt.  After the
 * cell, figures it left open are displayed and closed, as an inline
 * notebook shows them.  cordon_display is imported only when a cell has
 * something to display or matplotlib is loaded.
 */
const char cell_loop_py[] =
	"def _read(posix, n):\n"
	"    b = b''\n"
	"    while len(b) < n:\n"
	"        c = posix.read(3, n - len(b))\n"
	"        if not c:\n"
	"            return None\n"
	"        b += c\n"
	"    return b\n"
	"def _show(sys, name, e):\n"
	"    tb = e.__traceback__.tb_next if e.__traceback__ is not None else None\n"
	"    if sys.excepthook is not sys.__excepthook__:\n"
	"        sys.excepthook(type(e), e, tb)\n"
	"        return\n"
	"    import traceback\n"
	"    traceback.print_exception(type(e), e, tb)\n"
	"_RICH = ('_repr_mimebundle_', '_repr_html_', '_repr_markdown_', '_repr_latex_', '_repr_svg_',\n"
	"         '_repr_png_', '_repr_jpeg_', '_repr_json_')\n"
	"def _rich(v):\n"
	"    try:\n"
	"        if type(v).__name__ == 'Figure' and type(v).__module__.startswith('matplotlib.'):\n"
	"            return True\n"
	"        return any(callable(getattr(v, a, None)) for a in _RICH)\n"
	"    except BaseException:\n"
	"        return False\n"
	"def _display(sys, os, how, *a):\n"
	"    if how == 'cell_begin' and not os.path.lexists('/workspace/work/.cordon-display'):\n"
	"        return\n"
	"    if how == 'cell_end' and 'cordon_display' not in sys.modules and 'matplotlib.pyplot' not in sys.modules:\n"
	"        return\n"
	"    try:\n"
	"        import cordon_display\n"
	"        getattr(cordon_display, how)(*a)\n"
	"    except BaseException as e:\n"
	"        _show(sys, 'cordon_display', e)\n"
	"def loop(g, posix, ex):\n"
	"    import ast, linecache, os, sys\n"
	"    n = 0\n"
	"    while True:\n"
	"        h = _read(posix, 4)\n"
	"        src = _read(posix, int.from_bytes(h, 'big')) if h is not None else None\n"
	"        if src is None:\n"
	"            posix._exit(0)\n"
	"        n += 1\n"
	"        name = '<cell %d>' % n\n"
	"        st = b'0'\n"
	"        _display(sys, os, 'cell_begin')\n"
	"        try:\n"
	"            text = src.decode('utf-8', 'replace')\n"
	"            linecache.cache[name] = (len(text), None, text.splitlines(True), name)\n"
	"            tree = ast.parse(src, name)\n"
	"            last = None\n"
	"            if tree.body and isinstance(tree.body[-1], ast.Expr):\n"
	"                last = ast.Expression(tree.body.pop().value)\n"
	"            exec(compile(tree, name, 'exec'), g)\n"
	"            if last is not None:\n"
	"                v = eval(compile(last, name, 'eval'), g)\n"
	"                sys.displayhook(v)\n"
	"                if v is not None and _rich(v):\n"
	"                    _display(sys, os, 'display', v)\n"
	"                del v\n"
	"        except SystemExit as e:\n"
	"            ex.end(e.code, posix)\n"
	"        except BaseException as e:\n"
	"            st = b'1'\n"
	"            try:\n"
	"                _show(sys, name, e)\n"
	"            except BaseException:\n"
	"                pass\n"
	"            del e\n"
	"        _display(sys, os, 'cell_end')\n"
	"        for f in (sys.stdout, sys.stderr):\n"
	"            try:\n"
	"                f.flush()\n"
	"            except BaseException:\n"
	"                st = b'1'\n"
	"        posix.write(3, st)\n";
const size_t cell_loop_py_len = sizeof(cell_loop_py) - 1;

int cell_end_continues(enum cell_end e)
{
	return e == CELL_DONE || e == CELL_RAISED;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Reads both pipes until they are empty: what the cell wrote before its
 * status byte is there already. */
static void cell_drain(struct capture *out, struct capture *err)
{
	for (int more = 1; more;) {
		struct pollfd pfd[2] = { { .fd = out->fd, .events = POLLIN }, { .fd = err->fd, .events = POLLIN } };

		more = 0;
		if (poll(pfd, 2, 0) <= 0)
			break;
		if (pfd[0].revents && out->fd >= 0)
			more |= capture_read(out) && (pfd[0].revents & POLLIN);
		if (pfd[1].revents && err->fd >= 0)
			more |= capture_read(err) && (pfd[1].revents & POLLIN);
	}
}

/* The bounds the monitor checks: the workspace (the execution's bound,
 * then the session's) and the session's CPU.  CELL_DONE when within. */
static enum cell_end cell_check(const struct cell_cfg *cfg, struct cell_out *res)
{
	struct ws_usage u;
	uint64_t cpu;

	if (cfg->ws != NULL && ws_usage(cfg->ws, &u) == 0) {
		if (u.bytes > res->ws_peak)
			res->ws_peak = u.bytes;
		if (u.inodes > res->ws_inodes_peak)
			res->ws_inodes_peak = u.inodes;
		if ((cfg->ws_bytes_max != 0 && u.bytes > cfg->ws_bytes_max) ||
		    (cfg->ws_inodes_max != 0 && u.inodes > cfg->ws_inodes_max))
			return CELL_WS_BREACH;
		if (cfg->session_ws_max != 0 && u.bytes > cfg->session_ws_max)
			return CELL_SESSION_WS;
	}
	if (cfg->cpu_now != NULL && cfg->cpu_now(cfg->cpu_arg, &cpu) == 0 && cpu > cfg->cpu_max_ms)
		return CELL_SESSION_CPU;
	return CELL_DONE;
}

/* The channel at EOF: the interpreter is ending.  Its pidfd should be
 * readable soon; if not, the program closed the channel and lives on. */
static enum cell_end cell_eof(const struct cell_cfg *cfg, struct capture *out, struct capture *err)
{
	uint64_t until = now_ms() + CELL_EXIT_WAIT_MS;

	for (uint64_t t = now_ms(); t < until; t = now_ms()) {
		struct pollfd p = { .fd = cfg->pidfd, .events = POLLIN };

		if (poll(&p, 1, 20) > 0)
			return CELL_EXITED;
		cell_drain(out, err);
	}
	return CELL_BROKEN;
}

int cell_run(const struct cell_cfg *cfg, const char *code, size_t len, struct capture *out, struct capture *err,
	     struct cell_out *res, char *msg, size_t n)
{
	uint64_t start = now_ms(), deadline = start + cfg->timeout_ms, every = cfg->monitor_ms ? cfg->monitor_ms : 500;
	uint64_t next_check = start + every;
	unsigned char hdr[CELL_LEN_BYTES] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16),
					      (unsigned char)(len >> 8), (unsigned char)len };
	size_t sent = 0, total = CELL_LEN_BYTES + len;
	struct ws_usage u0 = { 0, 0 };

	memset(res, 0, sizeof(*res));
	res->end = CELL_BROKEN;
	if (cfg->ws != NULL)
		ws_usage(cfg->ws, &u0);
	res->ws_baseline = res->ws_peak = u0.bytes;
	res->ws_inodes_baseline = res->ws_inodes_peak = u0.inodes;
	if (len > UINT32_MAX || fcntl(cfg->chan_fd, F_SETFL, O_NONBLOCK) != 0) {
		snprintf(msg, n, "cell channel: %s", len > UINT32_MAX ? "cell too large" : strerror(errno));
		return -1;
	}
	for (;;) {
		struct pollfd pfd[5];
		uint64_t t = now_ms(), wake;
		enum cell_end chk;

		if (t >= deadline) {
			res->end = CELL_TIMED_OUT;
			break;
		}
		if (t >= next_check) {
			if ((chk = cell_check(cfg, res)) != CELL_DONE) {
				res->end = chk;
				break;
			}
			next_check = t + every;
		}
		wake = deadline < next_check ? deadline : next_check;
		pfd[0] = (struct pollfd){ .fd = cfg->pidfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = cfg->cancel_fd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = cfg->chan_fd, .events = (short)(POLLIN | (sent < total ? POLLOUT : 0)) };
		pfd[3] = (struct pollfd){ .fd = out->fd, .events = POLLIN };
		pfd[4] = (struct pollfd){ .fd = err->fd, .events = POLLIN };
		if (poll(pfd, 5, (int)(wake - t)) < 0 && errno != EINTR) {
			snprintf(msg, n, "poll: %s", strerror(errno));
			return -1;
		}
		if (pfd[3].revents && out->fd >= 0)
			capture_read(out);
		if (pfd[4].revents && err->fd >= 0)
			capture_read(err);
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			res->end = CELL_CANCELLED;
			break;
		}
		if (pfd[0].revents) {
			cell_drain(out, err);
			res->end = CELL_EXITED;
			break;
		}
		if ((pfd[2].revents & POLLOUT) && sent < total) {
			const char *p = sent < CELL_LEN_BYTES ? (const char *)hdr + sent : code + (sent - CELL_LEN_BYTES);
			size_t want = sent < CELL_LEN_BYTES ? CELL_LEN_BYTES - sent : total - sent;
			ssize_t w = send(cfg->chan_fd, p, want, MSG_NOSIGNAL | MSG_DONTWAIT);

			if (w > 0)
				sent += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				res->end = cell_eof(cfg, out, err);
				break;
			}
		}
		if (pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			char st;
			ssize_t r = recv(cfg->chan_fd, &st, 1, MSG_DONTWAIT);

			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				res->end = cell_eof(cfg, out, err);
				break;
			}
			/* A status before the whole cell was sent answers no
			 * cell of ours. */
			res->end = sent < total ? CELL_BROKEN
				   : st == CELL_DONE_BYTE ? CELL_DONE
				   : st == CELL_RAISED_BYTE ? CELL_RAISED
				   : CELL_BROKEN;
			if (cell_end_continues(res->end)) {
				cell_drain(out, err);
				/* The last count catches a fill faster than
				 * one interval, and CPU spent since. */
				if ((chk = cell_check(cfg, res)) != CELL_DONE)
					res->end = chk;
			}
			break;
		}
	}
	res->duration_ms = now_ms() - start;
	return 0;
}
