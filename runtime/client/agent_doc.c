/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_doc.c - the description of a sandbox and its tools for the model
 * (agent_doc.h): `cordonc describe` and `cordon serve`'s capabilities.
 *
 * Everything said here is read from the loaded blob: limits, mounts,
 * outputs, preloaded modules, each tool's signature (tool_doc.c, shared
 * with the stubs), its constraints decompiled from the verified bytecode
 * (constraint_text.c), and the stub signatures that `cordon run` writes.
 * The Python version is the one thing not in the blob: the caller asks the
 * policy's interpreter (agent_doc_probe_python) and passes the answer in.
 * tests/cli/test_describe.sh compares the JSON with `cordonc inspect
 * --json` field by field and compiles the constraint texts back to the
 * same blob.
 *
 * Runtime code: it links into `cordon` as well as `cordonc`, so nothing
 * here may need libyaml or libseccomp (tests/cli/test_ldd.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cordon/paths.h"
#include "common/utf8.h"
#include "runtime/client/agent_doc.h"
#include "runtime/client/constraint_text.h"
#include "runtime/client/policy_json.h"
#include "runtime/client/textbuf.h"
#include "runtime/client/stubs.h"
#include "runtime/client/tool_doc.h"
#include "runtime/constraint_eval.h"

/* Fixed by the runtime (runtime/run.c, docs/runtime.md). */
#define AGENT_DOC_OUT SANDBOX_OUT
#define AGENT_DOC_WORK SANDBOX_WORK
#define AGENT_DOC_LOGS SANDBOX_LOGS
#define AGENT_DOC_LIB SANDBOX_CLIENT /* cordon_tools.py and tools.py, on sys.path */
#define AGENT_DOC_PROBE_MS 10000

/* ---- which tools -------------------------------------------------------- */

int agent_doc_select(const struct cpol_policy *p, const char *agent, uint32_t **tools, uint32_t *n, char *err,
		    size_t errlen)
{
	const struct cpol_agent *a = NULL;
	uint32_t i, count;

	*tools = NULL;
	*n = 0;
	if (agent != NULL) {
		a = policy_find_agent(p, agent);
		if (a == NULL) {
			struct textbuf names;

			textbuf_init(&names);
			for (i = 0; i < p->nagents; i++)
				textbuf_printf(&names, "%s%s", i ? ", " : "", p->agents[i].name);
			snprintf(err, errlen, "no agent '%s' in this policy (agents: %s)", agent,
				 names.n ? names.s : "none");
			textbuf_free(&names);
			return -1;
		}
	}
	count = a ? a->ntools : p->ntools;
	if (count == 0)
		return 0;
	*tools = calloc(count, sizeof(**tools));
	if (*tools == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < count; i++)
		(*tools)[i] = a ? a->tools[i] : i;
	*n = count;
	return 0;
}

/* ---- the Python version ------------------------------------------------- */

static long agent_doc_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int agent_doc_probe_python(const char *interp, char *version, size_t n, char *err, size_t errlen)
{
	char *const argv[] = { (char *)interp, (char *)"-I", (char *)"-c", (char *)"import sys;print(sys.version)",
			       NULL };
	char *const envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	char buf[AGENT_DOC_VERSION_MAX];
	struct timespec t0;
	size_t got = 0;
	int fds[2] = { -1, -1 }, fa_made = 0, status = 0, rc = -1, e;
	pid_t pid = -1;

	if (n == 0)
		return -1;
	version[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	if ((e = posix_spawn_file_actions_init(&fa)) != 0) {
		snprintf(err, errlen, "posix_spawn: %s", strerror(e));
		goto out;
	}
	fa_made = 1;
	if ((e = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) != 0 ||
	    (e = posix_spawn_file_actions_adddup2(&fa, fds[1], 1)) != 0 ||
	    (e = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0)) != 0) {
		snprintf(err, errlen, "posix_spawn: %s", strerror(e));
		goto out;
	}
	if ((e = posix_spawn(&pid, interp, &fa, NULL, argv, envp)) != 0) {
		pid = -1;
		snprintf(err, errlen, "cannot run %s: %s", interp, strerror(e));
		goto out;
	}
	close(fds[1]);
	fds[1] = -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		long left = AGENT_DOC_PROBE_MS - agent_doc_ms_since(&t0);
		ssize_t k;

		if (left <= 0) {
			snprintf(err, errlen, "%s did not answer within %d s", interp, AGENT_DOC_PROBE_MS / 1000);
			goto out;
		}
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			goto out;
		}
		k = read(fds[0], buf + got, sizeof(buf) - 1 - got);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k < 0) {
			snprintf(err, errlen, "read: %s", strerror(errno));
			goto out;
		}
		if (k == 0 || (got += (size_t)k) == sizeof(buf) - 1)
			break;
	}
	buf[got] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "%s -I -c 'import sys;print(sys.version)' failed (status 0x%x)", interp, status);
		goto out;
	}
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
		buf[--got] = '\0';
	for (size_t i = 0; i < got; i++)
		if (buf[i] == '\n' || buf[i] == '\r')
			buf[i] = ' ';
	if (got == 0 || got >= n) {
		snprintf(err, errlen, "%s printed no usable version", interp);
		goto out;
	}
	memcpy(version, buf, got + 1);
	rc = 0;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (fa_made)
		posix_spawn_file_actions_destroy(&fa);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return rc;
}

/* ---- the JSON document -------------------------------------------------- */

/* The signature as inspect --json shows it (the test compares the two),
 * plus the Python type the stub gives it. */
static void agent_doc_pytype(cJSON *o, const struct cpol_policy *p, const struct cpol_param *prm)
{
	struct textbuf ty;

	textbuf_init(&ty);
	tool_doc_pytype(&ty, p, prm);
	cJSON_AddStringToObject(o, "pythonType", ty.oom ? "?" : ty.s);
	textbuf_free(&ty);
}

static cJSON *agent_doc_tool(const struct cpol_policy *p, uint32_t ti)
{
	const struct cpol_tool *t = &p->tools[ti];
	cJSON *o = cJSON_CreateObject(), *cons;
	struct textbuf tb, ret;
	const char *why = NULL;
	const struct cpol_param *spec = policy_tool_returns(p, ti);
	uint32_t nc = constraint_count(p, ti);
	int stub = tool_doc_py_ok(p, t, &why);

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", t->id);
	cJSON_AddStringToObject(o, "description", t->description);
	textbuf_init(&tb);
	if (stub) {
		textbuf_init(&ret);
		stubs_result_type(NULL, &ret, p, ti);
		textbuf_printf(&tb, "tools.%s", t->id);
		tool_doc_py_signature(&tb, p, t, ret.oom ? NULL : ret.s);
		textbuf_free(&ret);
		cJSON_AddStringToObject(o, "stub", tb.oom ? "?" : tb.s);
	} else {
		cJSON_AddNullToObject(o, "stub");
		cJSON_AddStringToObject(o, "noStubBecause", why);
	}
	textbuf_free(&tb);
	cJSON_AddBoolToObject(o, "sideEffect", (t->flags & CPOL_TOOL_F_SIDE_EFFECT) != 0);
	cJSON_AddBoolToObject(o, "messageIdRequired", (t->flags & CPOL_TOOL_F_SIDE_EFFECT) != 0);
	cJSON_AddBoolToObject(o, "replay", (t->flags & CPOL_TOOL_F_REPLAY) != 0);
	cJSON_AddItemToObject(o, "timeoutMs", policy_json_u64(t->timeout_ms));
	if (t->max_calls != 0)
		cJSON_AddNumberToObject(o, "maxCalls", t->max_calls);
	else
		cJSON_AddNullToObject(o, "maxCalls");
	if (t->max_calls_per_day != 0)
		cJSON_AddNumberToObject(o, "maxCallsPerDay", t->max_calls_per_day);
	else
		cJSON_AddNullToObject(o, "maxCallsPerDay");
	textbuf_init(&tb);
	tool_doc_budget(&tb, t);
	cJSON_AddStringToObject(o, "budget", tb.oom ? "?" : tb.n ? tb.s : "none");
	textbuf_free(&tb);
	cJSON_AddItemToObject(o, "params", policy_json_params(p, t->params, agent_doc_pytype));
	textbuf_init(&tb);
	tool_doc_params(&tb, p, t->params, 0);
	cJSON_AddStringToObject(o, "paramsText", tb.oom ? "?" : tb.n ? tb.s : "");
	textbuf_free(&tb);
	/* The result's spec, checked by the supervisor on every answer. */
	if (spec != NULL) {
		cJSON_AddItemToObject(o, "returns", policy_json_param(p, spec, agent_doc_pytype));
		textbuf_init(&tb);
		tool_doc_result(&tb, p, spec, 0);
		cJSON_AddStringToObject(o, "returnsText", tb.oom ? "?" : tb.s);
		textbuf_free(&tb);
	} else {
		cJSON_AddNullToObject(o, "returns");
		cJSON_AddNullToObject(o, "returnsText");
	}
	cons = cJSON_AddArrayToObject(o, "constraints");
	for (uint32_t k = 0; k < nc; k++) {
		char err[256], msg[384];
		char *text = constraint_text(p, ti, k, err, sizeof(err));

		if (text == NULL) {
			snprintf(msg, sizeof(msg), "(constraint %u cannot be shown as text: %s; it is enforced all the same)",
				 k, err);
			cJSON_AddItemToArray(cons, cJSON_CreateString(msg));
		} else {
			cJSON_AddItemToArray(cons, cJSON_CreateString(text));
		}
		free(text);
	}
	return o;
}

static cJSON *agent_doc_limits(const struct cpol_limits *l)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "mode", policy_mode_name(l->mode));
	cJSON_AddItemToObject(o, "timeoutMs", policy_json_u64(l->timeout_ms));
	cJSON_AddItemToObject(o, "memoryBytes", policy_json_u64(l->memory_bytes));
	cJSON_AddNumberToObject(o, "pids", l->pids);
	cJSON_AddNumberToObject(o, "openFiles", l->open_files);
	if (l->cpu_milli != 0)
		cJSON_AddNumberToObject(o, "cpu", l->cpu_milli / 1000.0);
	else
		cJSON_AddNullToObject(o, "cpu");
	cJSON_AddItemToObject(o, "maxFileBytes", policy_json_u64(l->max_file_bytes));
	cJSON_AddItemToObject(o, "maxExecWorkspaceDeltaBytes", policy_json_u64(l->ws_delta_bytes));
	if (l->ws_max_bytes != 0)
		cJSON_AddItemToObject(o, "maxExecWorkspaceBytes", policy_json_u64(l->ws_max_bytes));
	else
		cJSON_AddNullToObject(o, "maxExecWorkspaceBytes");
	cJSON_AddNumberToObject(o, "maxExecWorkspaceEntries", l->ws_entries);
	cJSON_AddItemToObject(o, "workspaceMonitorIntervalMs", policy_json_u64(l->monitor_ms));
	cJSON_AddItemToObject(o, "maxOutputBytes", policy_json_u64(l->max_output_bytes));
	cJSON_AddItemToObject(o, "maxResultBytes", policy_json_u64(l->max_result_bytes));
	cJSON_AddItemToObject(o, "maxCodeBytes", policy_json_u64(l->max_code_bytes));
	cJSON_AddItemToObject(o, "maxToolRequestBytes", policy_json_u64(l->max_tool_request_bytes));
	return o;
}

static cJSON *agent_doc_path(cJSON *arr, const char *path, const char *holds, int writable)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddBoolToObject(o, "writable", writable);
	cJSON_AddStringToObject(o, "holds", holds);
	cJSON_AddItemToArray(arr, o);
	return o;
}

static cJSON *agent_doc_files(const struct cpol_policy *p)
{
	cJSON *arr = cJSON_CreateArray();

	agent_doc_path(arr, AGENT_DOC_OUT, "your results: result.json and the declared outputs, collected after the run",
		      1);
	agent_doc_path(arr, AGENT_DOC_WORK,
		      "the current directory and HOME: your program (user_code.py), its loader (main.py) and the "
		      "input files of this run",
		      1);
	agent_doc_path(arr, AGENT_DOC_LOGS, "logs of your own, kept with the run", 1);
	agent_doc_path(arr, AGENT_DOC_LIB,
		      "the tool client cordon_tools.py, the stubs tools.py and cordon_display.py (display(obj) "
		      "returns a value, an HTML table or a matplotlib figure with the result), on sys.path",
		      0);
	for (uint32_t i = 0; i < p->nmounts; i++) {
		const struct cpol_mount *m = &p->mounts[i];

		if (m->type == CPOL_MOUNT_TMPFS)
			cJSON_AddItemToObject(agent_doc_path(arr, m->target, "temporary files in memory (tmpfs), gone after the run",
							   1),
					      "sizeBytes", policy_json_u64(m->size));
		else
			agent_doc_path(arr, m->target, (m->flags & CPOL_MNT_F_RW) ? "a host directory" : "system files",
				      (m->flags & CPOL_MNT_F_RW) != 0);
	}
	return arr;
}

static cJSON *agent_doc_result(const struct cpol_policy *p)
{
	cJSON *o = cJSON_CreateObject(), *codes;

	cJSON_AddStringToObject(o, "path", AGENT_DOC_OUT "/result.json");
	cJSON_AddItemToObject(o, "maxBytes", policy_json_u64(p->limits.max_result_bytes));
	cJSON_AddStringToObject(o, "format",
				"one JSON value in UTF-8, no duplicate keys, nothing after it but white space");
	codes = cJSON_AddObjectToObject(o, "statuses");
	cJSON_AddStringToObject(codes, "succeeded", "exit 0 and every required output present within its size");
	cJSON_AddStringToObject(codes, "failed",
				"a non-zero exit, an uncaught exception or a signal; or exit 0 with a declared output "
				"missing, too large or not a regular file");
	cJSON_AddStringToObject(codes, "timed_out", "still running at the time limit: killed");
	cJSON_AddStringToObject(codes, "limit_exceeded", "the workspace or memory limit was passed: killed");
	return o;
}

/* The agent's code-interpreter sessions (cordon serve, docs/serve.md
 * "Sessions"), or null when it may hold none. */
static cJSON *agent_doc_session(const struct cpol_policy *p, const char *agent)
{
	const struct cpol_agent *a = agent ? policy_find_agent(p, agent) : NULL;
	cJSON *o;

	if (a == NULL || !(a->session.flags & CPOL_AGT_F_SESSION))
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "idleTimeoutMs", policy_json_u64(a->session.idle_ms));
	cJSON_AddItemToObject(o, "lifetimeMs", policy_json_u64(a->session.life_ms));
	cJSON_AddNumberToObject(o, "maxCells", a->session.max_cells);
	cJSON_AddItemToObject(o, "cpuMs", policy_json_u64(a->session.cpu_ms));
	cJSON_AddItemToObject(o, "workspaceBytes", policy_json_u64(a->session.ws_bytes));
	return o;
}

cJSON *agent_doc_json(const struct cpol_policy *p, const char *agent, const uint32_t *tools, uint32_t n,
		     const char *version, const char *probe_err)
{
	const struct cpol_strs pre = { p->exec.preload, p->exec.npreload };
	const struct cpol_strs pkg = { p->exec.packages, p->exec.npackages };
	cJSON *d = cJSON_CreateObject(), *o, *arr;
	char hex[65];
	int has_tmp = 0;

	if (d == NULL)
		return NULL;
	cJSON_AddStringToObject(d, "app", p->meta.app);
	sodium_bin2hex(hex, sizeof(hex), p->sha256, 32);
	cJSON_AddStringToObject(d, "policySha256", hex);
	if (agent != NULL)
		cJSON_AddStringToObject(d, "agent", agent);
	else
		cJSON_AddNullToObject(d, "agent");

	o = cJSON_AddObjectToObject(d, "python");
	cJSON_AddStringToObject(o, "interpreter", p->exec.interpreter);
	cJSON_AddStringToObject(o, "command", "python3 -I " SANDBOX_LOADER);
	if (version != NULL) {
		cJSON_AddStringToObject(o, "version", version);
	} else {
		cJSON_AddNullToObject(o, "version");
		cJSON_AddStringToObject(o, "probeError", probe_err ? probe_err : "not probed");
	}
	cJSON_AddItemToObject(o, "preload", policy_json_strs(&pre));
	cJSON_AddItemToObject(o, "packages", policy_json_strs(&pkg));

	cJSON_AddItemToObject(d, "limits", agent_doc_limits(&p->limits));
	cJSON_AddItemToObject(d, "session", agent_doc_session(p, agent));
	cJSON_AddStringToObject(d, "network", policy_network_name(p->exec.network));
	cJSON_AddNumberToObject(d, "uid", p->exec.uid);
	cJSON_AddNumberToObject(d, "gid", p->exec.gid);
	cJSON_AddItemToObject(d, "files", agent_doc_files(p));
	o = cJSON_AddObjectToObject(d, "env");
	for (uint32_t i = 0; i < p->nenv; i++)
		cJSON_AddStringToObject(o, p->env[i].key, p->env[i].value);
	for (uint32_t i = 0; i < p->nmounts; i++)
		if (p->mounts[i].type == CPOL_MOUNT_TMPFS && strcmp(p->mounts[i].target, "/tmp") == 0)
			has_tmp = 1;
	cJSON_AddStringToObject(o, "HOME", AGENT_DOC_WORK);
	cJSON_AddStringToObject(o, "TMPDIR", has_tmp ? "/tmp" : AGENT_DOC_WORK);

	arr = cJSON_AddArrayToObject(d, "outputs");
	for (uint32_t i = 0; i < p->noutputs; i++) {
		cJSON *oo = cJSON_CreateObject();

		cJSON_AddStringToObject(oo, "path", p->outputs[i].path);
		cJSON_AddItemToObject(oo, "maxBytes", policy_json_u64(p->outputs[i].max_bytes));
		cJSON_AddBoolToObject(oo, "required", (p->outputs[i].flags & CPOL_OUT_F_REQUIRED) != 0);
		cJSON_AddItemToArray(arr, oo);
	}
	cJSON_AddItemToObject(d, "result", agent_doc_result(p));

	o = cJSON_AddObjectToObject(d, "toolCalls");
	cJSON_AddStringToObject(o, "stubs", "import tools");
	cJSON_AddStringToObject(o, "client", "import cordon_tools");
	cJSON_AddStringToObject(o, "call", "cordon_tools.tool_call(tool, params, message_id=None, timeout=None)");
	cJSON_AddItemToObject(o, "maxRequestBytes", policy_json_u64(p->limits.max_tool_request_bytes));
	arr = cJSON_AddArrayToObject(d, "tools");
	for (uint32_t i = 0; i < n; i++)
		if (tools[i] < p->ntools)
			cJSON_AddItemToArray(arr, agent_doc_tool(p, tools[i]));
	return d;
}

int agent_doc_add_inputs(cJSON *d, char *const *paths, unsigned n, char *err, size_t errlen)
{
	cJSON *arr = cJSON_CreateArray();

	for (unsigned i = 0; arr != NULL && i < n; i++) {
		const char *slash = strrchr(paths[i], '/');
		const char *name = slash ? slash + 1 : paths[i];
		const cJSON *it;

		if (!policy_input_name_ok(name)) {
			snprintf(err, errlen, "%s: \"%s\" cannot name an input (empty, '.', '..', main.py, user_code.py "
				 "or over 255 bytes)", paths[i], name);
			goto fail;
		}
		cJSON_ArrayForEach(it, arr)
		{
			if (strcmp(it->valuestring, name) == 0) {
				snprintf(err, errlen, "%s: an input named %s is given twice", paths[i], name);
				goto fail;
			}
		}
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(name)))
			break;
	}
	if (arr == NULL || cJSON_GetArraySize(arr) != (int)n || !cJSON_AddItemToObject(d, "inputs", arr)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return 0;
fail:
	cJSON_Delete(arr);
	return -1;
}

/* ---- Markdown ----------------------------------------------------------- */

static const char *md_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A number that may be raw (64-bit exact) or a double. */
static uint64_t md_u64(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsRaw(v))
		return strtoull(v->valuestring, NULL, 10);
	if (cJSON_IsNumber(v) && v->valuedouble >= 0)
		return (uint64_t)v->valuedouble;
	return 0;
}

static void md_size(struct textbuf *b, uint64_t bytes)
{
	static const char *const unit[] = { "TiB", "GiB", "MiB", "KiB" };

	for (int i = 0; i < 4; i++) {
		uint64_t u = 1ull << (10 * (4 - i));

		if (bytes >= u && bytes % u == 0) {
			textbuf_printf(b, "%" PRIu64 " %s", bytes / u, unit[i]);
			return;
		}
	}
	textbuf_printf(b, "%" PRIu64 " byte%s", bytes, bytes == 1 ? "" : "s");
}

static void md_duration(struct textbuf *b, uint64_t ms)
{
	if (ms % 60000 == 0 && ms >= 60000)
		textbuf_printf(b, "%" PRIu64 " min", ms / 60000);
	else if (ms % 1000 == 0)
		textbuf_printf(b, "%" PRIu64 " s", ms / 1000);
	else
		textbuf_printf(b, "%" PRIu64 " ms", ms);
}

/* Text from the blob in running Markdown: control characters and
 * malformed UTF-8 shown as escapes, nothing else changed. */
static void md_text(struct textbuf *b, const char *s)
{
	size_t n, i = 0, k;

	if (s == NULL)
		return;
	n = strlen(s);
	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		k = utf8_char(s + i, n - i);
		if (c == '\n' || (k > 0 && c >= 0x20 && c != 0x7f)) {
			textbuf_put(b, s + i, k ? k : 1);
			i += k ? k : 1;
		} else {
			textbuf_printf(b, "\\x%02x", c);
			i++;
		}
	}
}

/* A fenced block that its text cannot close: the fence is longer than any
 * run of backticks inside. */
static void md_block(struct textbuf *b, const char *lang, const char *text)
{
	size_t run = 0, longest = 0, fence;

	for (const char *s = text; *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fence = longest < 3 ? 3 : longest + 1;
	for (size_t i = 0; i < fence; i++)
		textbuf_putc(b, '`');
	textbuf_printf(b, "%s\n", lang);
	md_text(b, text);
	if (text[0] != '\0' && text[strlen(text) - 1] != '\n')
		textbuf_putc(b, '\n');
	for (size_t i = 0; i < fence; i++)
		textbuf_putc(b, '`');
	textbuf_puts(b, "\n\n");
}

/* `lead`, then each name of the list as code, then `tail`; nothing at all
 * for an empty list, so a policy without one reads as it did before its
 * key existed. */
static void md_names(struct textbuf *b, const cJSON *list, const char *lead, const char *tail)
{
	const cJSON *it;
	int i = 0;

	if (cJSON_GetArraySize(list) == 0)
		return;
	textbuf_puts(b, lead);
	cJSON_ArrayForEach(it, list)
	{
		textbuf_puts(b, i++ ? ", `" : "`");
		md_text(b, cJSON_IsString(it) ? it->valuestring : "");
		textbuf_putc(b, '`');
	}
	textbuf_puts(b, tail);
}

/* Said only under a quota: without one the program has what the host
 * gives, as before the key existed. */
static void md_cpu(struct textbuf *b, const cJSON *cpu)
{
	if (!cJSON_IsNumber(cpu))
		return;
	textbuf_printf(b, "- **CPU**: at most %g CPUs' worth of time for all its processes together; beyond that "
			"they are paused until the next 100 ms period (slower, not killed).\n", cpu->valuedouble);
}

static void md_sandbox(struct textbuf *b, const cJSON *d)
{
	const cJSON *py = cJSON_GetObjectItemCaseSensitive(d, "python");
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(d, "limits");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(d, "files");
	const cJSON *env = cJSON_GetObjectItemCaseSensitive(d, "env");
	const cJSON *ws = cJSON_GetObjectItemCaseSensitive(l, "maxExecWorkspaceBytes");
	const cJSON *it;
	const char *net = md_str(d, "network");

	textbuf_puts(b, "## The sandbox\n\n");
	textbuf_puts(b, "- **Python**: ");
	if (md_str(py, "version") != NULL)
		md_text(b, md_str(py, "version"));
	else
		textbuf_puts(b, "version unknown");
	textbuf_puts(b, ", `");
	md_text(b, md_str(py, "interpreter"));
	textbuf_puts(b, "`, run as `python3 -I` (isolated: no user site-packages, PYTHON* variables ignored). "
			"Only the standard library and what is installed system-wide; nothing can be installed.\n");
	md_names(b, cJSON_GetObjectItemCaseSensitive(py, "packages"), "- **Packages you can import**: ",
		   ": checked to import in this sandbox before your program starts.\n");
	md_names(b, cJSON_GetObjectItemCaseSensitive(py, "preload"), "- **Preloaded modules**: ",
		   ": imported before your program starts, so importing them is instant. Any other "
		   "installed module can be imported as usual.\n");
	textbuf_puts(b, "- **Time limit**: ");
	md_duration(b, md_u64(l, "timeoutMs"));
	textbuf_puts(b, " of wall-clock time for the whole program, tool calls included; then it is killed.\n");
	textbuf_puts(b, "- **Memory**: ");
	md_size(b, md_u64(l, "memoryBytes"));
	textbuf_printf(b, " for all its processes together.\n- **Processes and threads**: at most %" PRIu64 ".\n",
		       md_u64(l, "pids"));
	textbuf_printf(b, "- **Open files**: at most %" PRIu64 " at a time.\n", md_u64(l, "openFiles"));
	md_cpu(b, cJSON_GetObjectItemCaseSensitive(l, "cpu"));
	textbuf_puts(b, "- **Largest file**: ");
	md_size(b, md_u64(l, "maxFileBytes"));
	textbuf_puts(b, "; writing past it fails (EFBIG).\n- **Disk**: at most ");
	md_size(b, md_u64(l, "maxExecWorkspaceDeltaBytes"));
	textbuf_puts(b, " written under /workspace in all");
	if (!cJSON_IsNull(ws)) {
		textbuf_puts(b, ", the workspace at most ");
		md_size(b, md_u64(l, "maxExecWorkspaceBytes"));
	}
	textbuf_puts(b, "; more ends the run.\n- **Output**: the first ");
	md_size(b, md_u64(l, "maxOutputBytes"));
	textbuf_puts(b, " of stdout and of stderr are kept.\n- **Program**: at most ");
	md_size(b, md_u64(l, "maxCodeBytes"));
	textbuf_puts(b, " of source.\n- **Network**: ");
	textbuf_puts(b, net && strcmp(net, "loopback") == 0
				? "loopback only (127.0.0.1 inside the sandbox); nothing outside can be reached.\n"
				: "none: no connection of any kind can be made.\n");
	textbuf_puts(b, "  The outside world is reached only through the tools below.\n");
	textbuf_printf(b, "- **User**: uid %" PRIu64 ", gid %" PRIu64 ", no privileges.\n", md_u64(d, "uid"),
		       md_u64(d, "gid"));
	textbuf_puts(b, "\nFiles: everything is read-only except\n\n");
	cJSON_ArrayForEach(it, files)
	{
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "writable")))
			continue;
		textbuf_puts(b, "- `");
		md_text(b, md_str(it, "path"));
		textbuf_puts(b, "`: ");
		md_text(b, md_str(it, "holds"));
		if (cJSON_GetObjectItemCaseSensitive(it, "sizeBytes") != NULL) {
			textbuf_puts(b, ", at most ");
			md_size(b, md_u64(it, "sizeBytes"));
		}
		textbuf_puts(b, "\n");
	}
	md_names(b, cJSON_GetObjectItemCaseSensitive(d, "inputs"), "\nThe input files of this run, in `" AGENT_DOC_WORK
		 "` (the current directory): ", ".\n");
	textbuf_puts(b, "\nEnvironment:");
	cJSON_ArrayForEach(it, env)
	{
		textbuf_puts(b, " `");
		md_text(b, it->string);
		textbuf_putc(b, '=');
		md_text(b, cJSON_IsString(it) ? it->valuestring : "");
		textbuf_putc(b, '`');
	}
	textbuf_puts(b, ".\n\n");
}

/* What a session changes for the program: state that persists, and the
 * limits that end it. */
static void md_session(struct textbuf *b, const cJSON *d)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(d, "session");

	if (!cJSON_IsObject(s))
		return;
	textbuf_puts(b, "## Sessions\n\n"
			"Your code may also run as a session of cells, like a notebook: each cell runs in the same "
			"interpreter, one after the other, and its globals persist from cell to cell (a DataFrame "
			"loaded in one cell is there in the next; so are imports, functions and the files you "
			"wrote). A cell whose last statement is an expression shows its value, as the Python prompt "
			"does. Each cell has the limits above (time, output); the session as a whole has these, and "
			"it ends when one is reached:\n\n- **Idle**: ");
	md_duration(b, md_u64(s, "idleTimeoutMs"));
	textbuf_puts(b, " without a cell.\n- **Lifetime**: ");
	md_duration(b, md_u64(s, "lifetimeMs"));
	textbuf_printf(b, " in all.\n- **Cells**: at most %" PRIu64 ".\n- **CPU**: ", md_u64(s, "maxCells"));
	md_duration(b, md_u64(s, "cpuMs"));
	textbuf_puts(b, " of CPU time over all cells.\n- **Workspace**: at most ");
	md_size(b, md_u64(s, "workspaceBytes"));
	textbuf_puts(b, " in use under /workspace.\n\nA cell that times out, crashes the interpreter or calls "
			"`sys.exit()` ends the session: the next cell would start from nothing.\n\n");
}

static void md_result(struct textbuf *b, const cJSON *d)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(d, "result");
	const cJSON *outs = cJSON_GetObjectItemCaseSensitive(d, "outputs");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "statuses");
	const cJSON *it;

	textbuf_puts(b, "## The result\n\n");
	textbuf_puts(b, "Write your answer to `");
	md_text(b, md_str(r, "path"));
	textbuf_puts(b, "` as ");
	md_text(b, md_str(r, "format"));
	textbuf_puts(b, ", at most ");
	md_size(b, md_u64(r, "maxBytes"));
	textbuf_puts(b, ". It is returned as the run's `result` (null when there is no such file); stdout and stderr "
			"are returned too.\n\n");
	if (cJSON_GetArraySize(outs) > 0) {
		textbuf_puts(b, "Declared output files (paths under /workspace/out; nothing else there is collected):\n\n");
		cJSON_ArrayForEach(it, outs)
		{
			textbuf_puts(b, "- `");
			md_text(b, md_str(it, "path"));
			textbuf_puts(b, "`: at most ");
			md_size(b, md_u64(it, "maxBytes"));
			textbuf_puts(b, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "required"))
						? ", **required**: the run fails without it\n"
						: ", optional\n");
		}
		textbuf_puts(b, "\n");
	}
	textbuf_puts(b, "How the run ends:\n\n");
	cJSON_ArrayForEach(it, st)
	{
		textbuf_printf(b, "- `%s`: ", it->string);
		md_text(b, it->valuestring);
		textbuf_puts(b, "\n");
	}
	textbuf_puts(b, "\n");
}

static const char md_calling[] =
	"## Calling tools\n\n"
	"Tools run outside the sandbox, on the trusted side; every call is checked against the rules below "
	"before it runs. Call them through the typed stubs:\n\n"
	"```python\n"
	"import tools\n"
	"answer = tools.<namespace>.<action>(param=value, ...)   # keyword arguments only\n"
	"```\n\n"
	"or the client they wrap: `cordon_tools.tool_call(\"namespace.action\", {params}, message_id=None, "
	"timeout=None)`. Both modules are in `/cordon`, already on `sys.path`. A call returns the tool's answer "
	"as Python values. An optional parameter left as `None` is not sent. Each refusal or failure raises a "
	"subclass of `cordon_tools.ToolError` with `.code`, `.check` and `.message`:\n\n"
	"- `InvalidParams`: a parameter is unknown, missing, of the wrong type or outside its limits: fix the call\n"
	"- `ToolDenied`: a constraint does not hold, or the caller's role may not use the tool: change the call\n"
	"- `BudgetExceeded`: the tool's call budget is used up: stop calling it\n"
	"- `UnknownTool`: no such tool for this program\n"
	"- `ToolFailed`, `ToolTimeout`: the tool ran and failed, or did not answer in time\n"
	"- `InDoubt`: an earlier call with this `message_id` may or may not have acted; it is not repeated\n"
	"- `BadRequest`, `Unauthenticated`, `InternalError`, `ProtocolError`: the request or the connection "
	"failed\n\n"
	"Constraints are written in cordon's constraint language: `&&`, `||`, `!` and comparisons as in C; "
	"`len(s)` is a string's length in UTF-8 bytes or an array's number of items; `has(p)` is true when `p` "
	"is given and not null; `x in [a, b]` is true when `x` equals one of them; `starts_with(s, \"x\")` and "
	"`ends_with(s, \"x\")` test a string's start and end. A constraint that reads an optional parameter the "
	"call leaves out fails.\n\n";

static void md_calls(struct textbuf *b, const cJSON *d)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(d, "toolCalls");

	textbuf_puts(b, md_calling);
	textbuf_puts(b, "One request (the tool's id and params as JSON) may be at most ");
	md_size(b, md_u64(tc, "maxRequestBytes"));
	textbuf_puts(b, "; a larger one is refused (`BadRequest`).\n\n");
}

static void md_tool(struct textbuf *b, const cJSON *t)
{
	const cJSON *cons = cJSON_GetObjectItemCaseSensitive(t, "constraints");
	const cJSON *it;
	const char *stub = md_str(t, "stub");
	int side = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "sideEffect"));

	textbuf_puts(b, "### `");
	md_text(b, md_str(t, "id"));
	textbuf_puts(b, "`\n\n");
	md_text(b, md_str(t, "description"));
	textbuf_puts(b, "\n\n");
	if (stub != NULL) {
		md_block(b, "python", stub);
	} else {
		textbuf_puts(b, "No stub (");
		md_text(b, md_str(t, "noStubBecause"));
		textbuf_puts(b, "): call `cordon_tools.tool_call(\"");
		md_text(b, md_str(t, "id"));
		textbuf_puts(b, "\", params)`.\n\n");
	}
	textbuf_puts(b, "Parameters (type, required or optional, limits):\n\n");
	md_block(b, "text", md_str(t, "paramsText")[0] ? md_str(t, "paramsText") : "none\n");
	if (md_str(t, "returnsText") != NULL) {
		textbuf_puts(b, "Returns (checked: an answer that does not fit is `ToolFailed`, naming where):\n\n");
		md_block(b, "text", md_str(t, "returnsText"));
	}
	if (cJSON_GetArraySize(cons) > 0) {
		textbuf_puts(b, "Constraints (every call must satisfy all of them, else `ToolDenied`):\n\n");
		cJSON_ArrayForEach(it, cons)
		{
			/* one line each: newlines inside string literals are
			 * written as \n by the decompiler */
			textbuf_puts(b, "    ");
			md_text(b, it->valuestring);
			textbuf_puts(b, "\n");
		}
		textbuf_puts(b, "\n");
	}
	if (side)
		textbuf_puts(b, "Side effect: yes. `message_id` is required: a string you choose that names this one "
				"action; calling again with the same id returns the first answer and does not act again.\n");
	else
		textbuf_puts(b, "Side effect: none.\n");
	textbuf_puts(b, "Budget: ");
	md_text(b, md_str(t, "budget"));
	textbuf_puts(b, strcmp(md_str(t, "budget"), "none") ? " (then `BudgetExceeded`).\nTimeout: "
							     : ".\nTimeout: ");
	md_duration(b, md_u64(t, "timeoutMs"));
	textbuf_puts(b, " (then `ToolTimeout`).\n\n");
}

char *agent_doc_render(const cJSON *d)
{
	const cJSON *tools = cJSON_GetObjectItemCaseSensitive(d, "tools"), *t;
	const char *agent = md_str(d, "agent");
	struct textbuf b;

	textbuf_init(&b);
	textbuf_puts(&b, "# Sandbox of app `");
	md_text(&b, md_str(d, "app"));
	textbuf_puts(&b, "`");
	if (agent != NULL) {
		textbuf_puts(&b, ", agent `");
		md_text(&b, agent);
		textbuf_puts(&b, "`");
	}
	textbuf_puts(&b, "\n\nYour Python program runs once, alone, in a sandbox. It can compute freely; "
			 "every action outside the sandbox goes through a governed tool. "
			 "Everything below is read from the policy the sandbox enforces (sha256 ");
	md_text(&b, md_str(d, "policySha256"));
	textbuf_puts(&b, ").\n\n");
	md_sandbox(&b, d);
	md_session(&b, d);
	md_result(&b, d);
	md_calls(&b, d);
	textbuf_printf(&b, "## Tools (%d)\n\n", cJSON_GetArraySize(tools));
	if (cJSON_GetArraySize(tools) == 0)
		textbuf_puts(&b, "None: this program can call no tool.\n\n");
	cJSON_ArrayForEach(t, tools) md_tool(&b, t);
	return textbuf_take(&b, NULL);
}

char *agent_doc_markdown(const struct cpol_policy *p, const char *agent, const char *python_version, size_t *len)
{
	uint32_t *tools = NULL, n = 0;
	char err[256], *text = NULL;
	cJSON *d = NULL;

	if (len != NULL)
		*len = 0;
	if (agent_doc_select(p, agent, &tools, &n, err, sizeof(err)) != 0)
		goto out;
	d = agent_doc_json(p, agent, tools, n, python_version, NULL);
	if (d == NULL)
		goto out;
	text = agent_doc_render(d);
	if (text != NULL && len != NULL)
		*len = strlen(text);
out:
	cJSON_Delete(d);
	free(tools);
	return text;
}
