/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec_request.c - the POST /v1/executions body (exec_request.h).
 *
 * The body comes from any client of the socket or any token holder, so it
 * is judged whole before anything is acted on: one JSON object, no
 * duplicate key anywhere (cJSON keeps both and finds the first, another
 * reader might take the last), no \u0000 (cJSON would cut the string
 * short), only known keys, each of its type and within its bound.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "runtime/context.h"
#include "runtime/json_strict.h"
#include "runtime/serve/exec_request.h"

/* The keys each kind of body takes, and those it needs. */
static const struct {
	const char *keys;
	const char *need;
} exec_request_kinds[] = {
	[EXEC_REQ_EXECUTION] = { "app, agent, code, inputs, context, requestId", "app, code" },
	[EXEC_REQ_SESSION] = { "app, agent, inputs, context", "app, agent" },
	[EXEC_REQ_CELL] = { "code, context, requestId", "code" },
};

/* Whether key is one of list's ", "-separated names. */
static int key_in(const char *list, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = list; *p != '\0';) {
		size_t l = strcspn(p, ",");

		if (l == kl && strncmp(p, key, kl) == 0)
			return 1;
		p += l;
		p += strspn(p, ", ");
	}
	return 0;
}

int exec_request_name_ok(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];

		if (i == max)
			return 0;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return 0;
	}
	return i > 0;
}

void serve_exec_req_free(struct serve_exec_req *r)
{
	if (r == NULL)
		return;
	free(r->app);
	free(r->agent);
	free(r->code);
	for (unsigned i = 0; i < r->ninputs; i++) {
		free((void *)r->inputs[i].name);
		free((void *)r->inputs[i].data);
	}
	cJSON_Delete(r->context);
	memset(r, 0, sizeof(*r));
}

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}

static char *dup_string(const cJSON *s, size_t *len)
{
	size_t l = strlen(s->valuestring);
	char *d = malloc(l + 1);

	if (d != NULL)
		memcpy(d, s->valuestring, l + 1);
	if (len != NULL)
		*len = l;
	return d;
}

/* "app" and "agent": [A-Za-z0-9._-]{1,128}. */
static int parse_name(const cJSON *it, int nullable, char **dst, char *err, size_t n)
{
	if (nullable && cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsString(it))
		return fail(err, n, "%s: must be a string%s", it->string, nullable ? " or null" : "");
	if (!exec_request_name_ok(it->valuestring, EXEC_REQUEST_NAME_MAX))
		return fail(err, n, "%s: must match [A-Za-z0-9._-]{1,%d}", it->string, EXEC_REQUEST_NAME_MAX);
	*dst = dup_string(it, NULL);
	return *dst ? 0 : fail(err, n, "out of memory");
}

/* A base name in the workspace's work/: the loader's own two files are
 * not the client's to replace. */
static int input_name_ok(const char *s, const char **why)
{
	size_t len = strlen(s);

	if (len == 0)
		*why = "is empty";
	else if (len > EXEC_REQUEST_INPUT_NAME_MAX)
		*why = "is over 255 bytes";
	else if (strchr(s, '/') != NULL)
		*why = "has a '/' (a base name is needed)";
	else if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		*why = "is '.' or '..'";
	else if (strcmp(s, "main.py") == 0 || strcmp(s, "user_code.py") == 0)
		*why = "is reserved (main.py and user_code.py are the loader's)";
	else
		return 1;
	return 0;
}

static int parse_input(const cJSON *in, unsigned idx, struct serve_exec_req *out, char *err, size_t n)
{
	const cJSON *name = NULL, *content = NULL, *b64 = NULL;
	struct sandbox_file *f = &out->inputs[out->ninputs];
	const char *why = NULL;
	char *data = NULL;
	size_t len = 0;

	if (!cJSON_IsObject(in))
		return fail(err, n, "inputs[%u]: must be an object {\"name\", \"content\" or \"contentBase64\"}", idx);
	for (const cJSON *it = in->child; it != NULL; it = it->next) {
		if (strcmp(it->string, "name") == 0)
			name = it;
		else if (strcmp(it->string, "content") == 0)
			content = it;
		else if (strcmp(it->string, "contentBase64") == 0)
			b64 = it;
		else
			return fail(err, n, "inputs[%u]: unknown key '%.64s' (known: name, content, contentBase64)", idx,
				    it->string);
	}
	if (name == NULL)
		return fail(err, n, "inputs[%u]: 'name' is missing", idx);
	if (!cJSON_IsString(name))
		return fail(err, n, "inputs[%u].name: must be a string", idx);
	if (!input_name_ok(name->valuestring, &why))
		return fail(err, n, "inputs[%u].name: '%.64s' %s", idx, name->valuestring, why);
	for (unsigned j = 0; j < out->ninputs; j++)
		if (strcmp(out->inputs[j].name, name->valuestring) == 0)
			return fail(err, n, "inputs[%u].name: '%.64s' given twice (also inputs[%u])", idx,
				    name->valuestring, j);
	if ((content == NULL) == (b64 == NULL))
		return fail(err, n, "inputs[%u]: needs exactly one of 'content' and 'contentBase64'", idx);
	if (content != NULL) {
		if (!cJSON_IsString(content))
			return fail(err, n, "inputs[%u].content: must be a string", idx);
		data = dup_string(content, &len);
		if (data == NULL)
			return fail(err, n, "out of memory");
	} else {
		size_t blen, cap;
		const char *end = NULL;

		if (!cJSON_IsString(b64))
			return fail(err, n, "inputs[%u].contentBase64: must be a string", idx);
		blen = strlen(b64->valuestring);
		cap = blen / 4 * 3 + 3;
		data = malloc(cap);
		if (data == NULL)
			return fail(err, n, "out of memory");
		if (sodium_base642bin((unsigned char *)data, cap, b64->valuestring, blen, NULL, &len, &end,
				      sodium_base64_VARIANT_ORIGINAL) != 0 ||
		    end != b64->valuestring + blen) {
			free(data);
			return fail(err, n, "inputs[%u].contentBase64: not padded standard base64 (RFC 4648 section 4)",
				    idx);
		}
	}
	f->name = dup_string(name, NULL);
	if (f->name == NULL) {
		free(data);
		return fail(err, n, "out of memory");
	}
	f->data = data;
	f->len = len;
	out->ninputs++;
	return 0;
}

static int parse_inputs(const cJSON *it, struct serve_exec_req *out, char *err, size_t n)
{
	unsigned idx = 0;

	if (cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsArray(it))
		return fail(err, n, "inputs: must be an array or null");
	for (const cJSON *in = it->child; in != NULL; in = in->next, idx++) {
		if (idx == SANDBOX_MAX_INPUTS)
			return fail(err, n, "inputs: more than %d files", SANDBOX_MAX_INPUTS);
		if (parse_input(in, idx, out, err, n) != 0)
			return -1;
	}
	return 0;
}

/* context.h judges the context: the same check `cordon run --context`
 * makes after its parse, so both paths accept exactly the same contexts.
 * The object is judged as parsed, not printed and parsed again: a print
 * turns 1e999 (infinity to cJSON) into null and hides what was sent.
 * \u0000 and duplicate keys were refused for the whole body already. */
static int parse_context(const cJSON *it, struct serve_exec_req *out, char *err, size_t n)
{
	char why[256] = "";

	if (cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsObject(it))
		return fail(err, n, "context: must be an object or null");
	if (context_check(it, why, sizeof(why)) != 0)
		return fail(err, n, "context: %s", why);
	out->context = cJSON_Duplicate(it, 1);
	return out->context ? 0 : fail(err, n, "out of memory");
}

static int parse_request_id(const cJSON *it, struct serve_exec_req *out, char *err, size_t n)
{
	if (cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsString(it))
		return fail(err, n, "requestId: must be a string or null");
	if (!exec_request_name_ok(it->valuestring, SERVE_REQUEST_ID_MAX))
		return fail(err, n, "requestId: must match [A-Za-z0-9._-]{1,%d}", SERVE_REQUEST_ID_MAX);
	memcpy(out->request_id, it->valuestring, strlen(it->valuestring) + 1);
	return 0;
}

/* A cell's context names only who asks: the rest (roles, tools) is the
 * session's, bound to its bridge when it was created. */
static int parse_cell_context(const cJSON *it, struct serve_exec_req *out, char *err, size_t n)
{
	for (const cJSON *k = cJSON_IsObject(it) ? it->child : NULL; k != NULL; k = k->next)
		if (strcmp(k->string, "tenant") != 0 && strcmp(k->string, "user") != 0)
			return fail(err, n,
				    "context.%.64s: a cell's context names only who asks (tenant, user); the session "
				    "keeps the rest of the context it was created with",
				    k->string);
	return parse_context(it, out, err, n);
}

static int parse_member(const cJSON *it, enum exec_request_kind kind, struct serve_exec_req *out, char *err,
			size_t n)
{
	if (!key_in(exec_request_kinds[kind].keys, it->string))
		return fail(err, n, "unknown key '%.64s' (known: %s)", it->string, exec_request_kinds[kind].keys);
	if (kind == EXEC_REQ_CELL && strcmp(it->string, "context") == 0)
		return parse_cell_context(it, out, err, n);
	if (strcmp(it->string, "app") == 0)
		return parse_name(it, 0, &out->app, err, n);
	if (strcmp(it->string, "agent") == 0)
		return parse_name(it, 1, &out->agent, err, n);
	if (strcmp(it->string, "code") == 0) {
		if (!cJSON_IsString(it))
			return fail(err, n, "code: must be a string");
		out->code = dup_string(it, &out->code_len);
		return out->code ? 0 : fail(err, n, "out of memory");
	}
	if (strcmp(it->string, "inputs") == 0)
		return parse_inputs(it, out, err, n);
	if (strcmp(it->string, "context") == 0)
		return parse_context(it, out, err, n);
	return parse_request_id(it, out, err, n);
}

int exec_request_parse(const char *body, size_t len, struct serve_exec_req *out, char *err, size_t n)
{
	return exec_request_parse_kind(body, len, EXEC_REQ_EXECUTION, out, err, n);
}

int exec_request_parse_kind(const char *body, size_t len, enum exec_request_kind kind, struct serve_exec_req *out,
			    char *err, size_t n)
{
	const char *nul, *end = NULL, *dkey = NULL;
	char where[256];
	cJSON *doc = NULL;
	char *buf = NULL;
	int rc = -1, d;

	memset(out, 0, sizeof(*out));
	nul = memchr(body, '\0', len);
	if (nul != NULL) {
		fail(err, n, "NUL byte at offset %zu", (size_t)(nul - body));
		goto out;
	}
	if (json_nul_escape_at(body, len) != len) {
		fail(err, n, "\\u0000 in a string at offset %zu (send binary input as contentBase64)",
		     json_nul_escape_at(body, len));
		goto out;
	}
	buf = malloc(len + 1);
	if (buf == NULL) {
		fail(err, n, "out of memory");
		goto out;
	}
	memcpy(buf, body, len);
	buf[len] = '\0';
	doc = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
	if (doc == NULL) {
		fail(err, n, "malformed JSON at byte offset %zu", end && end >= buf ? (size_t)(end - buf) : (size_t)0);
		goto out;
	}
	if (!cJSON_IsObject(doc)) {
		fail(err, n, "the body must be a JSON object");
		goto out;
	}
	d = json_find_duplicate(doc, &dkey, where, sizeof(where));
	if (d != 0) {
		if (d < 0)
			fail(err, n, "out of memory");
		else
			fail(err, n, "key '%.64s' given twice in %s", dkey, where);
		goto out;
	}
	for (const cJSON *it = doc->child; it != NULL; it = it->next)
		if (parse_member(it, kind, out, err, n) != 0)
			goto out;
	if (out->app == NULL && key_in(exec_request_kinds[kind].need, "app")) {
		fail(err, n, "app: missing");
		goto out;
	}
	if (out->agent == NULL && key_in(exec_request_kinds[kind].need, "agent")) {
		fail(err, n, "agent: missing (a session is held by an agent)");
		goto out;
	}
	if (out->code == NULL && key_in(exec_request_kinds[kind].need, "code")) {
		fail(err, n, "code: missing");
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		serve_exec_req_free(out);
	cJSON_Delete(doc);
	free(buf);
	return rc;
}
