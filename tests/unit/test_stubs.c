/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_stubs.c - the typed stubs module (runtime/client/stubs.c) as
 * python3 sees it.
 *
 * A policy is compiled from YAML, then its strings are made as hostile as
 * a blob from elsewhere could make them (a description that tries to end
 * its docstring and add code, backslashes, control characters, invalid
 * UTF-8, bidirectional overrides; names that are Python keywords).  The
 * module stubs_python() writes must still be importable, and a Python
 * script (below) checks, with a fake cordon_tools that records calls:
 * every stub sends exactly the params it was given (optional None left
 * out, required ones always), the message id of side-effect tools, each
 * docstring holds the description (decoded exactly, or with U+FFFD for the
 * bytes that were not UTF-8), the constraint text and the param rules,
 * nothing was executed at import, and a tool that cannot be a stub is
 * named in the module's docstring instead.
 *
 * Result types (`returns:`): a second policy, in a namespace named like a
 * builtin (`str`), whose stubs python3 must import and type: an object
 * result is a TypedDict with the right required keys, nested objects are
 * TypedDicts of their own (two paths that would give one name get two
 * classes), other types are the plain type, no returns is Any.
 *
 * Needs python3 (a Debian 12 dependency of the project).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "runtime/client/stubs.h"

static const char app_yaml[] = "version: 1\n"
			       "app: stubs\n"
			       "execution: { runtime: { timeout: 5s } }\n"
			       "agents: { a: { tools: [calc.add, evil.run, kw.bad, mail.send, ping.now] } }\n";

static const char tools_yaml[] =
	"version: 1\n"
	"tools:\n"
	"  - id: calc.add\n"
	"    description: Add two numbers.\n"
	"    params:\n"
	"      a: { type: number, required: true, min: -1e6, max: 1e6 }\n"
	"      b: { type: integer, required: false, min: -5, max: 5 }\n"
	"      tags: { type: array, items: { type: string, enum: [xa, yb] }, max_items: 3 }\n"
	"    constraints:\n"
	"      - '!has(b) || b != 0'\n"
	"    exec: [/bin/true]\n"
	"    max_calls: 3\n"
	"  - id: evil.run\n"
	"    description: replaced below\n"
	"    params:\n"
	"      text: { type: string, required: true, enum: ['a\"\"\"b', 'c\\d'] }\n"
	"      _x: { type: object, properties: { k: { type: boolean } } }\n"
	"    constraints:\n"
	"      - 'text != \"\\\"\\\"\\\"\" && len(text) < 10'\n"
	"    exec: [/bin/true]\n"
	"  - id: kw.bad\n"
	"    description: a param renamed to a keyword below\n"
	"    params:\n"
	"      fine: { type: string }\n"
	"    exec: [/bin/true]\n"
	"  - id: mail.send\n"
	"    description: Send one mail.\n"
	"    params:\n"
	"      to: { type: string, required: true, min_length: 3, max_length: 254 }\n"
	"      priority: { type: string, enum: [low, high] }\n"
	"    side_effect: true\n"
	"    exec: [/bin/true]\n"
	"    max_calls_per_day: 7\n"
	"  - id: ping.now\n"
	"    description: No parameters at all.\n"
	"    exec: [/bin/true]\n";

/* What evil.run's description becomes: every trick in one string, and two
 * bytes that are not UTF-8 (0xFF, and a lone continuation byte 0x80). */
static const char evil_desc[] = "Ends here: \"\"\" + __import__('os').system('touch PWNED') + \"\"\"\n"
				"back\\slash at the end \\\n"
				"\"quoted\" \"\" \"\"\"\" tab\tcr\rctl\x01 del\x7f nel\xc2\x85 "
				"rlo\xe2\x80\xae ls\xe2\x80\xa8 bom\xef\xbb\xbf bad\xff\x80 caf\xc3\xa9 \xf0\x9d\x84\x9e\n"
				"last line ends with a quote\"";

/* The same as Python should read it back: the invalid bytes as U+FFFD. */
static const char evil_py[] =
	"'Ends here: \"\"\" + __import__(\\'os\\').system(\\'touch PWNED\\') + \"\"\"\\n"
	"back\\\\slash at the end \\\\\\n"
	"\"quoted\" \"\" \"\"\"\" tab\\tcr\\rctl\\x01 del\\x7f nel\\x85 "
	"rlo\\u202e ls\\u2028 bom\\ufeff bad\\ufffd\\ufffd caf\\xe9 \\U0001d11e\\n"
	"last line ends with a quote\"'";

static const char check_py[] =
	"import inspect, os, sys\n"
	"import cordon_tools\n"
	"import tools\n"
	"EVIL = %s\n"
	"assert not os.path.exists('PWNED'), 'code ran at import'\n"
	"assert sorted(tools.__all__) == ['calc', 'evil', 'mail', 'ping'], tools.__all__\n"
	"assert not hasattr(tools, 'kw'), 'kw.bad got a stub'\n"
	"try:\n"
	"    tools.nosuch\n"
	"    raise SystemExit('tools.nosuch did not raise')\n"
	"except AttributeError as e:\n"
	"    assert str(e).startswith('tools.nosuch: not a tool namespace of this run (agent a; its tools here: "
	"calc.add, evil.run, kw.bad, mail.send, ping.now)'), e\n"
	"assert 'kw.bad: a parameter name cannot be a Python keyword argument' in tools.__doc__, tools.__doc__\n"
	"calls = cordon_tools.calls\n"
	"assert tools.calc.add(a=1.5) == 'answer'\n"
	"assert calls[-1] == ('calc.add', {'a': 1.5}, None), calls[-1]\n"
	"tools.calc.add(a=2, b=None, tags=['xa'])\n"
	"assert calls[-1] == ('calc.add', {'a': 2, 'tags': ['xa']}, None), calls[-1]\n"
	"tools.calc.add(a=None)\n"
	"assert calls[-1] == ('calc.add', {'a': None}, None), 'a required param is sent even as None'\n"
	"tools.evil.run(text='t', _x={'k': True})\n"
	"assert calls[-1] == ('evil.run', {'text': 't', '_x': {'k': True}}, None), calls[-1]\n"
	"tools.mail.send(to='a@b.c', message_id='m-1')\n"
	"assert calls[-1] == ('mail.send', {'to': 'a@b.c'}, 'm-1'), calls[-1]\n"
	"tools.ping.now()\n"
	"assert calls[-1] == ('ping.now', {}, None), calls[-1]\n"
	"for bad in (lambda: tools.mail.send(to='x'), lambda: tools.calc.add(1.0),\n"
	"            lambda: tools.calc.add(a=1, c=2), lambda: tools.ping.now(x=1)):\n"
	"    try:\n"
	"        bad()\n"
	"    except TypeError:\n"
	"        pass\n"
	"    else:\n"
	"        raise AssertionError('a bad call was accepted')\n"
	"sig = inspect.signature(tools.mail.send)\n"
	"assert list(sig.parameters) == ['priority', 'to', 'message_id'], sig\n"
	"assert all(p.kind == p.KEYWORD_ONLY for p in sig.parameters.values())\n"
	"assert sig.parameters['priority'].default is None\n"
	"assert sig.parameters['to'].default is inspect.Parameter.empty\n"
	"assert str(sig.parameters['to'].annotation) == 'str', sig\n"
	"doc = tools.evil.run.__doc__.replace('\\n        ', '\\n')\n"
	"assert EVIL in doc, (EVIL, doc)\n"
	"assert 'text != \"\\\\\"\\\\\"\\\\\"\" && len(text) < 10' in doc, doc\n"
	"assert 'one of \"a\\\\\"\\\\\"\\\\\"b\", \"c\\\\\\\\d\"' in doc, doc\n"
	"add = tools.calc.add.__doc__\n"
	"for want in ('Add two numbers.', 'a: float, required; from -1000000 to 1000000',\n"
	"             'b: int, optional; from -5 to 5', 'tags: list[str], optional; at most 3 items',\n"
	"             '!has(b) || b != 0', 'at most 3 calls per run'):\n"
	"    assert want in add, (want, add)\n"
	"assert 'at most 7 calls per user and day' in tools.mail.send.__doc__\n"
	"assert 'message_id: str, required' in tools.mail.send.__doc__\n"
	"src = open(tools.__file__, encoding='utf-8').read()\n"
	"assert '\\u202e' not in src and '\\u2028' not in src and '\\x01' not in src, 'raw control text in the source'\n"
	"print('stubs ok')\n";

static const char fake_client_py[] = "calls = []\n"
				     "def tool_call(tool, params, message_id=None, timeout=None):\n"
				     "    calls.append((tool, dict(params), message_id))\n"
				     "    return 'answer'\n";

static void write_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void compile_yaml(struct cpol_policy *p, const char *app_text, const char *tools_text)
{
	struct src_file app, inv;
	const struct src_file *invs[1] = { &inv };
	struct diags d;

	diags_init(&d);
	assert_int_equal(src_from_mem("app.yaml", app_text, strlen(app_text), 1 << 20, &app, &d), 0);
	assert_int_equal(src_from_mem("tools.yaml", tools_text, strlen(tools_text), 1 << 20, &inv, &d), 0);
	if (compile_sources(&app, invs, 1, p, &d) != 0) {
		diags_print(&d, stderr);
		fail_msg("the test inventory does not compile");
	}
	diags_free(&d);
	src_free(&app);
	src_free(&inv);
}

static void compile_policy(struct cpol_policy *p)
{
	compile_yaml(p, app_yaml, tools_yaml);
}

/* Run python3 in dir on check.py; its exit status. */
static int run_python(const char *dir)
{
	pid_t pid = fork();
	int status = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (chdir(dir) != 0)
			_exit(126);
		execlp("python3", "python3", "-E", "-s", "-B", "check.py", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		assert_int_equal(errno, EINTR);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The module, a fake cordon_tools and a check script in a fresh folder:
 * python3 must run the check to its end. */
static void python_check(const char *mod, size_t len, const char *client, const char *check)
{
	char dir[] = "/tmp/test_stubs.XXXXXX";
	char cmd[600];

	assert_non_null(mkdtemp(dir));
	write_file(dir, "tools.py", mod, len);
	write_file(dir, "cordon_tools.py", client, strlen(client));
	write_file(dir, "check.py", check, strlen(check));
	if (run_python(dir) != 0) {
		fprintf(stderr, "%s\n", mod);
		fail_msg("python3 rejected the stubs (module and check in %s)", dir);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_hostile_strings(void **state)
{
	char script[8192];
	struct cpol_policy p;
	uint32_t all[5] = { 0, 1, 2, 3, 4 };
	size_t len = 0;
	char *mod;

	(void)state;
	compile_policy(&p);
	assert_int_equal(p.ntools, 5);
	assert_string_equal(p.tools[1].id, "evil.run");
	p.tools[1].description = evil_desc;
	assert_string_equal(p.tools[2].id, "kw.bad");
	assert_int_equal(p.tools[2].params.count, 1);
	p.params[p.tools[2].params.first].name = "lambda";

	mod = stubs_python(&p, "a", all, 5, &len);
	assert_non_null(mod);
	assert_int_equal(strlen(mod), len);
	snprintf(script, sizeof(script), check_py, evil_py);
	python_check(mod, len, fake_client_py, script);
	free(mod);
	policy_free(&p);
}

/* An agent with no tools, and indices out of range: still a module. */
static void test_no_tools(void **state)
{
	struct cpol_policy p;
	uint32_t bad[2] = { 99, 100 };
	size_t len = 0;
	char *mod;

	(void)state;
	compile_policy(&p);
	mod = stubs_python(&p, NULL, NULL, 0, &len);
	assert_non_null(mod);
	assert_non_null(strstr(mod, "Tools: none."));
	assert_non_null(strstr(mod, "__all__ = []"));
	/* Issue 14: without an agent, tools.<anything> says why there are
	 * none and names the app's agents (AttributeError: module 'tools'
	 * has no attribute 'calc' was all a program got). */
	assert_non_null(strstr(mod, "def __getattr__(name):"));
	assert_non_null(strstr(mod, "this run has no tools: no agent was selected"));
	assert_non_null(strstr(mod, "the app's agents: a\""));
	free(mod);
	mod = stubs_python(&p, "a", bad, 2, &len);
	assert_non_null(mod);
	assert_non_null(strstr(mod, "__all__ = []"));
	assert_non_null(strstr(mod, "not a tool namespace of this run (agent a; its tools here:"));
	free(mod);
	policy_free(&p);
}

static const char ret_app_yaml[] = "version: 1\n"
				   "app: ret\n"
				   "execution: { runtime: { timeout: 5s } }\n"
				   "agents: { a: { tools: [str.get, str.list, str.none] } }\n";

static const char ret_tools_yaml[] =
	"version: 1\n"
	"tools:\n"
	"  - id: str.get\n"
	"    description: An object result.\n"
	"    exec: [/bin/true]\n"
	"    returns:\n"
	"      type: object\n"
	"      properties:\n"
	"        id: { type: string, required: true }\n"
	"        rows: { type: array, items: { type: object, properties: { k: { type: integer, required: true } } } }\n"
	"        a: { type: object, properties: { b: { type: object, properties: { x: { type: integer } } } } }\n"
	"        a_b: { type: object, required: true, properties: { y: { type: string } } }\n"
	"  - id: str.list\n"
	"    description: A list result.\n"
	"    exec: [/bin/true]\n"
	"    returns: { type: array, items: { type: integer } }\n"
	"  - id: str.none\n"
	"    description: No result spec.\n"
	"    exec: [/bin/true]\n";

static const char ret_check_py[] =
	"import typing\n"
	"import tools\n"
	"H = typing.get_type_hints\n"
	"R = H(tools.str.get)['return']\n"
	"assert R is tools.StrGetResult, R\n"
	"assert R.__required_keys__ == {'id', 'a_b'}, R.__required_keys__\n"
	"assert R.__optional_keys__ == {'rows', 'a'}, R.__optional_keys__\n"
	"h = H(R)\n"
	"assert h['id'] is str and h['rows'] == list[tools.StrGetResult_rows_item], h\n"
	"assert H(tools.StrGetResult_rows_item) == {'k': int}\n"
	"assert h['a'] is tools.StrGetResult_a and h['a_b'] is tools.StrGetResult_a_b_2, h\n"
	"assert H(tools.StrGetResult_a) == {'b': tools.StrGetResult_a_b}\n"
	"assert H(tools.StrGetResult_a_b) == {'x': int} and H(tools.StrGetResult_a_b_2) == {'y': str}\n"
	"assert H(tools.str.list)['return'] == list[int]\n"
	"assert H(tools.str.none)['return'] is typing.Any\n"
	"assert 'result: dict[str, Any]; an object with:' in tools.str.get.__doc__\n"
	"assert tools.str.get() == {'id': 'x'}\n"
	"print('result types ok')\n";

static const char ret_fake_client_py[] = "def tool_call(tool, params, message_id=None, timeout=None):\n"
					 "    return {'id': 'x'}\n";

static void test_result_types(void **state)
{
	struct cpol_policy p;
	uint32_t all[3] = { 0, 1, 2 };
	size_t len = 0;
	char *mod;

	(void)state;
	compile_yaml(&p, ret_app_yaml, ret_tools_yaml);
	mod = stubs_python(&p, "a", all, 3, &len);
	assert_non_null(mod);
	assert_non_null(strstr(mod, "def get() -> StrGetResult:"));
	assert_non_null(strstr(mod, "def list() -> list[int]:"));
	assert_non_null(strstr(mod, "def none() -> Any:"));
	/* Every TypedDict before the namespace class that shadows str. */
	assert_true(strstr(mod, "StrGetResult = TypedDict(") < strstr(mod, "class str:"));
	python_check(mod, len, ret_fake_client_py, ret_check_py);
	free(mod);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_no_tools),
		cmocka_unit_test(test_result_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
