/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent_doc.c - runtime/client/agent_doc.h: the description and the
 * tool definitions `cordon serve` hands out, and `cordonc describe` prints.
 *
 * A policy is compiled from YAML with every parameter type, nested arrays
 * and objects, bounds the schema clamps (an integer beyond 2^53), an
 * object without properties, a constraint, a side effect, budgets, two ids
 * whose function names meet, an agent with no tools, and a preload list.
 * Then the tool array is walked as a client would read it: its shape, each
 * schema keyword against the signature, the words for what JSON Schema
 * cannot say; and the Markdown is held to describe's own rendering of the
 * same document.  tests/cli/test_describe_jsonschema.sh validates the cafe
 * example's output against the 2020-12 metaschema with python3-jsonschema.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"
#include "runtime/client/agent_doc.h"

static const char app_yaml[] = "version: 1\n"
			       "app: doc\n"
			       "execution:\n"
			       "  runtime: { timeout: 5s }\n"
			       "  executor: { preload: [numpy, json], packages: [csv, email.mime] }\n"
			       "agents:\n"
			       "  a: { tools: [calc.add, mail.send, shape.all] }\n"
			       "  clash: { tools: [a_b.c, a.b_c] }\n"
			       "  none: { tools: [] }\n";

static const char tools_yaml[] =
	"version: 1\n"
	"tools:\n"
	"  - id: calc.add\n"
	"    description: Add two numbers.\n"
	"    params:\n"
	"      a: { type: number, required: true, min: -1e6, max: 1.5 }\n"
	"      b: { type: integer, required: false, min: -5, max: 5 }\n"
	"    constraints:\n"
	"      - '!has(b) || b != 0'\n"
	"      - 'a > -1000.0'\n"
	"    exec: [/bin/true]\n"
	"    max_calls: 3\n"
	"  - id: mail.send\n"
	"    description: Send one mail.\n"
	"    params:\n"
	"      to: { type: string, required: true, min_length: 3, max_length: 254 }\n"
	"      priority: { type: string, enum: [high, low] }\n"
	"    side_effect: true\n"
	"    exec: [/bin/true]\n"
	"    max_calls_per_day: 7\n"
	"  - id: shape.all\n"
	"    description: All shapes.\n"
	"    params:\n"
	"      big: { type: integer, min: 0, max: 1152921504606846976 }\n"
	"      free: { type: integer }\n"
	"      flag: { type: boolean, required: true }\n"
	"      rows:\n"
	"        type: array\n"
	"        max_items: 4\n"
	"        items:\n"
	"          type: object\n"
	"          properties:\n"
	"            k: { type: string, required: true, max_length: 8 }\n"
	"            inner: { type: object, properties: { deep: { type: array, items: { type: number } } } }\n"
	"      empty: { type: object, properties: {} }\n"
	"    returns: { type: object, properties: { n: { type: integer, required: true }, w: { type: string } } }\n"
	"    exec: [/bin/true]\n"
	"  - id: a_b.c\n"
	"    description: first\n"
	"    exec: [/bin/true]\n"
	"  - id: a.b_c\n"
	"    description: second\n"
	"    exec: [/bin/true]\n";

static void compile_policy(struct cpol_policy *p)
{
	struct src_file app, inv;
	const struct src_file *invs[1] = { &inv };
	struct diags d;

	diags_init(&d);
	assert_int_equal(src_from_mem("app.yaml", app_yaml, strlen(app_yaml), 1 << 20, &app, &d), 0);
	assert_int_equal(src_from_mem("tools.yaml", tools_yaml, strlen(tools_yaml), 1 << 20, &inv, &d), 0);
	if (compile_sources(&app, invs, 1, p, &d) != 0) {
		diags_print(&d, stderr);
		fail_msg("the test inventory does not compile");
	}
	diags_free(&d);
	src_free(&app);
	src_free(&inv);
}

static const cJSON *get(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (v == NULL)
		fail_msg("no \"%s\" in %s", key, cJSON_PrintUnformatted(o));
	return v;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

/* A number as written: raw (64-bit exact) or a double's text. */
static void assert_num(const cJSON *o, const char *key, const char *want)
{
	const cJSON *v = get(o, key);
	char *text = cJSON_PrintUnformatted(v);

	assert_non_null(text);
	if (strcmp(text, want) != 0)
		fail_msg("%s is %s, want %s", key, text, want);
	free(text);
}

static const cJSON *tool_named(const cJSON *arr, const char *id)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr) if (strcmp(str(it, "id"), id) == 0) return it;
	fail_msg("no tool %s", id);
	return NULL;
}

/* Every object schema, nested ones too, is closed, lists only properties
 * it declares as required, and names nothing outside its keywords. */
static void assert_closed(const cJSON *s)
{
	const cJSON *it, *props;

	if (strcmp(str(s, "type"), "array") == 0) {
		assert_closed(get(s, "items"));
		return;
	}
	if (strcmp(str(s, "type"), "object") != 0)
		return;
	assert_true(cJSON_IsFalse(get(s, "additionalProperties")));
	props = get(s, "properties");
	assert_true(cJSON_IsObject(props));
	cJSON_ArrayForEach(it, get(s, "required"))
	{
		assert_true(cJSON_IsString(it));
		assert_non_null(cJSON_GetObjectItemCaseSensitive(props, it->valuestring));
	}
	cJSON_ArrayForEach(it, props) assert_closed(it);
	assert_int_equal(cJSON_GetArraySize(s), 4); /* type, properties, required, additionalProperties */
}

static void test_tools_shape(void **state)
{
	struct cpol_policy p;
	cJSON *arr;
	const cJSON *it, *t, *pr, *x;

	(void)state;
	compile_policy(&p);
	/* A blob from elsewhere may hold an empty description: no blank line
	 * then leads the words. */
	p.tools[policy_find_tool(&p, "shape.all")].description = "";
	arr = agent_doc_tools_json(&p, "a");
	assert_non_null(arr);
	assert_true(cJSON_IsArray(arr));
	assert_int_equal(cJSON_GetArraySize(arr), 3);
	cJSON_ArrayForEach(it, arr)
	{
		char want[80];

		/* shape.all adds its result's schema, "returns" */
		assert_int_equal(cJSON_GetArraySize(it), strcmp(str(it, "id"), "shape.all") == 0 ? 5 : 4);
		snprintf(want, sizeof(want), "%s", str(it, "id"));
		*strchr(want, '.') = '_';
		assert_string_equal(str(it, "name"), want);
		(void)str(it, "description");
		assert_string_equal(str(get(it, "parameters"), "type"), "object");
		assert_closed(get(it, "parameters"));
	}

	/* Numbers: bounds as declared; the constraints in words, in order. */
	t = tool_named(arr, "calc.add");
	pr = get(get(t, "parameters"), "properties");
	assert_string_equal(str(get(pr, "a"), "type"), "number");
	assert_num(get(pr, "a"), "minimum", "-1000000");
	assert_num(get(pr, "a"), "maximum", "1.5");
	assert_string_equal(str(get(pr, "b"), "type"), "integer");
	assert_num(get(pr, "b"), "minimum", "-5");
	assert_num(get(pr, "b"), "maximum", "5");
	assert_int_equal(cJSON_GetArraySize(get(get(t, "parameters"), "required")), 1);
	assert_string_equal(cJSON_GetArrayItem(get(get(t, "parameters"), "required"), 0)->valuestring, "a");
	assert_non_null(strstr(str(t, "description"), "Add two numbers.\n\nEvery call must satisfy all of these "
							 "constraints, else it is refused (ToolDenied):\n"
							 "- !has(b) || b != 0\n- a > -1000.0\n\n"
							 "Budget: at most 3 calls per run (then BudgetExceeded)."));
	assert_null(strstr(str(t, "description"), "Side effect"));

	/* Strings: byte bounds as minLength/maxLength plus the words; enum. */
	t = tool_named(arr, "mail.send");
	pr = get(get(t, "parameters"), "properties");
	assert_num(get(pr, "to"), "minLength", "3");
	assert_num(get(pr, "to"), "maxLength", "254");
	assert_non_null(strstr(str(get(pr, "to"), "description"), "3 to 254 bytes of UTF-8"));
	x = get(get(pr, "priority"), "enum");
	assert_int_equal(cJSON_GetArraySize(x), 2);
	assert_string_equal(cJSON_GetArrayItem(x, 0)->valuestring, "high");
	assert_null(cJSON_GetObjectItemCaseSensitive(get(pr, "priority"), "description"));
	assert_non_null(strstr(str(t, "description"), "Side effect: each call needs a message_id"));
	assert_non_null(strstr(str(t, "description"), "Budget: at most 7 calls per user and day"));
	assert_null(strstr(str(t, "description"), "constraints"));

	/* Integers held to +-2^53; arrays, nested objects, an empty object. */
	t = tool_named(arr, "shape.all");
	assert_string_equal(str(t, "description"), "");
	pr = get(get(t, "parameters"), "properties");
	assert_num(get(pr, "big"), "minimum", "0");
	assert_num(get(pr, "big"), "maximum", "9007199254740992");
	assert_num(get(pr, "free"), "minimum", "-9007199254740992");
	assert_num(get(pr, "free"), "maximum", "9007199254740992");
	assert_int_equal(cJSON_GetArraySize(get(pr, "flag")), 1);
	assert_string_equal(str(get(pr, "flag"), "type"), "boolean");
	x = get(pr, "rows");
	assert_string_equal(str(x, "type"), "array");
	assert_num(x, "maxItems", "4");
	x = get(x, "items");
	assert_string_equal(str(x, "type"), "object");
	assert_num(get(get(x, "properties"), "k"), "maxLength", "8");
	x = get(get(get(x, "properties"), "inner"), "properties");
	assert_string_equal(str(get(get(x, "deep"), "items"), "type"), "number");
	x = get(pr, "empty");
	assert_int_equal(cJSON_GetArraySize(get(x, "properties")), 0);
	assert_int_equal(cJSON_GetArraySize(get(x, "required")), 0);
	/* returns: an object schema, closed, as the bridge checks it. */
	x = get(t, "returns");
	assert_string_equal(str(x, "type"), "object");
	assert_closed(x);
	assert_string_equal(str(get(get(x, "properties"), "n"), "type"), "integer");
	assert_int_equal(cJSON_GetArraySize(get(x, "required")), 1);
	assert_null(cJSON_GetObjectItemCaseSensitive(tool_named(arr, "calc.add"), "returns"));

	cJSON_Delete(arr);
	policy_free(&p);
}

/* "a_b.c" and "a.b_c" both read a_b_c: the later one is told apart. */
static void test_name_clash(void **state)
{
	struct cpol_policy p;
	cJSON *arr;

	(void)state;
	compile_policy(&p);
	arr = agent_doc_tools_json(&p, "clash");
	assert_non_null(arr);
	assert_int_equal(cJSON_GetArraySize(arr), 2);
	/* The blob's order: sorted by id, and "a.b_c" < "a_b.c". */
	assert_string_equal(str(cJSON_GetArrayItem(arr, 0), "id"), "a.b_c");
	assert_string_equal(str(cJSON_GetArrayItem(arr, 0), "name"), "a_b_c");
	assert_string_equal(str(cJSON_GetArrayItem(arr, 1), "id"), "a_b.c");
	assert_string_equal(str(cJSON_GetArrayItem(arr, 1), "name"), "a_b_c_2");
	cJSON_Delete(arr);
	policy_free(&p);
}

static void test_selection(void **state)
{
	struct cpol_policy p;
	cJSON *arr;
	size_t len = 7;

	(void)state;
	compile_policy(&p);
	arr = agent_doc_tools_json(&p, "none");
	assert_non_null(arr);
	assert_int_equal(cJSON_GetArraySize(arr), 0);
	cJSON_Delete(arr);
	arr = agent_doc_tools_json(&p, NULL);
	assert_int_equal(cJSON_GetArraySize(arr), (int)p.ntools);
	cJSON_Delete(arr);
	assert_null(agent_doc_tools_json(&p, "nosuch"));
	assert_null(agent_doc_markdown(&p, "nosuch", NULL, &len));
	assert_int_equal(len, 0);
	policy_free(&p);
}

/* The server's one call gives exactly what describe renders from its
 * document, and says what is preloaded. */
static void test_markdown(void **state)
{
	struct cpol_policy p;
	uint32_t *tools = NULL, n = 0;
	char err[256], *md, *ref;
	const char *ret;
	size_t len = 0;
	cJSON *d;
	const cJSON *pre;

	(void)state;
	compile_policy(&p);
	assert_int_equal(agent_doc_select(&p, "a", &tools, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	d = agent_doc_json(&p, "a", tools, n, "3.11.test", NULL);
	assert_non_null(d);
	pre = get(get(d, "python"), "preload");
	assert_int_equal(cJSON_GetArraySize(pre), 2);
	assert_string_equal(cJSON_GetArrayItem(pre, 0)->valuestring, "numpy");
	assert_string_equal(cJSON_GetArrayItem(pre, 1)->valuestring, "json");
	pre = get(get(d, "python"), "packages");
	assert_int_equal(cJSON_GetArraySize(pre), 2);
	assert_string_equal(cJSON_GetArrayItem(pre, 0)->valuestring, "csv");
	assert_string_equal(cJSON_GetArrayItem(pre, 1)->valuestring, "email.mime");
	ref = agent_doc_render(d);
	md = agent_doc_markdown(&p, "a", "3.11.test", &len);
	assert_non_null(ref);
	assert_non_null(md);
	assert_string_equal(md, ref);
	assert_int_equal(len, strlen(md));
	assert_non_null(strstr(md, "# Sandbox of app `doc`, agent `a`"));
	assert_non_null(strstr(md, "- **Python**: 3.11.test, `/usr/bin/python3`"));
	assert_non_null(strstr(md, "- **Preloaded modules**: `numpy`, `json`: imported before your program starts"));
	assert_non_null(strstr(md, "- **Packages you can import**: `csv`, `email.mime`: checked to import"));
	assert_non_null(strstr(md, "## Tools (3)"));
	/* returns: (issue 14): shape.all has one, the others none. */
	assert_non_null(strstr(md, ") -> ShapeAllResult\n"));
	assert_non_null(strstr(md, "tools.calc.add(*, a: float, b: int | None = None) -> Any\n"));
	ret = strstr(md, "Returns (checked: an answer that does not fit is `ToolFailed`, naming where):");
	assert_non_null(ret);
	assert_null(strstr(ret + 1, "Returns (checked"));
	assert_non_null(strstr(ret, "result: dict[str, Any]; an object with:\n    n: int, required\n    w: str, optional\n"));
	assert_string_equal(str(get(tool_named(get(d, "tools"), "shape.all"), "returns"), "type"), "object");
	assert_string_equal(str(get(get(get(tool_named(get(d, "tools"), "shape.all"), "returns"), "properties"), "n"),
			    "pythonType"),
			    "int");
	assert_true(cJSON_IsNull(get(tool_named(get(d, "tools"), "calc.add"), "returns")));
	assert_true(cJSON_IsNull(get(tool_named(get(d, "tools"), "calc.add"), "returnsText")));
	free(md);
	free(ref);
	cJSON_Delete(d);

	md = agent_doc_markdown(&p, "none", NULL, NULL);
	assert_non_null(md);
	assert_non_null(strstr(md, "- **Python**: version unknown"));
	assert_non_null(strstr(md, "None: this program can call no tool."));
	free(md);

	/* Without preloads the line is not there at all; nor the packages'
	 * line without packages. */
	p.exec.npreload = 0;
	md = agent_doc_markdown(&p, "a", "3.11.test", &len);
	assert_non_null(md);
	assert_null(strstr(md, "Preloaded"));
	assert_non_null(strstr(md, "Packages you can import"));
	free(md);
	p.exec.npackages = 0;
	md = agent_doc_markdown(&p, "a", "3.11.test", &len);
	assert_non_null(md);
	assert_null(strstr(md, "Packages"));
	free(md);
	free(tools);
	policy_free(&p);
}

/* The run's inputs (issue 14): named by their last path component, in
 * order, in the JSON and the Markdown; a name the sandbox would refuse, or
 * one given twice, is refused here too; without inputs nothing is said. */
static void test_inputs(void **state)
{
	static char *const good[] = { "/data/receipts.json", "prices.csv", "a/b/notes.txt" };
	static char *const reserved[] = { "x/main.py", "user_code.py", "dir/", ".." };
	static char *const twice[] = { "a/x.csv", "b/x.csv" };
	struct cpol_policy p;
	uint32_t *tools = NULL, n = 0;
	char err[256], *md;
	const cJSON *in;
	cJSON *d;

	(void)state;
	compile_policy(&p);
	assert_int_equal(agent_doc_select(&p, "a", &tools, &n, err, sizeof(err)), 0);
	d = agent_doc_json(&p, "a", tools, n, "3.11.test", NULL);
	assert_non_null(d);
	md = agent_doc_render(d);
	assert_null(strstr(md, "The input files of this run"));
	free(md);
	assert_null(cJSON_GetObjectItemCaseSensitive(d, "inputs"));
	assert_int_equal(agent_doc_add_inputs(d, good, 3, err, sizeof(err)), 0);
	in = get(d, "inputs");
	assert_int_equal(cJSON_GetArraySize(in), 3);
	assert_string_equal(cJSON_GetArrayItem(in, 0)->valuestring, "receipts.json");
	assert_string_equal(cJSON_GetArrayItem(in, 1)->valuestring, "prices.csv");
	assert_string_equal(cJSON_GetArrayItem(in, 2)->valuestring, "notes.txt");
	md = agent_doc_render(d);
	assert_non_null(strstr(md, "The input files of this run, in `/workspace/work` (the current directory): "
				   "`receipts.json`, `prices.csv`, `notes.txt`.\n"));
	free(md);
	cJSON_Delete(d);

	for (unsigned i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		d = agent_doc_json(&p, "a", tools, n, "3.11.test", NULL);
		err[0] = '\0';
		if (agent_doc_add_inputs(d, &reserved[i], 1, err, sizeof(err)) != -1)
			fail_msg("input %s taken", reserved[i]);
		assert_non_null(strstr(err, "cannot name an input"));
		assert_null(cJSON_GetObjectItemCaseSensitive(d, "inputs"));
		cJSON_Delete(d);
	}
	d = agent_doc_json(&p, "a", tools, n, "3.11.test", NULL);
	assert_int_equal(agent_doc_add_inputs(d, twice, 2, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "x.csv is given twice"));
	cJSON_Delete(d);
	free(tools);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tools_shape),
		cmocka_unit_test(test_name_clash),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_markdown),
		cmocka_unit_test(test_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
