# SPDX-License-Identifier: Apache-2.0
"""examples/serve/chat_tools.py against the fake serve of test_client: it
asks for capabilities, builds the chat-completions body with every tool as
a function, and executes the recorded answer's code through the client.
(Against a real server the same script runs the café program for real.)"""
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

from test_client import TOOL, start_fake, stop_fake

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "..", "examples", "serve")
sys.path.insert(0, EXAMPLE)
import chat_tools  # noqa: E402


class TestExample(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.server, self.fake, self.target = start_fake(False, self.dir)

    def tearDown(self):
        try:
            stop_fake(self.server)
        finally:
            shutil.rmtree(self.dir)

    def run_example(self, *args):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = chat_tools.main(["--socket", self.target, "--show-request"] + list(args))
        return rc, out.getvalue()

    def test_recorded_answer_is_executed(self):
        rc, out = self.run_example()
        self.assertEqual(rc, 0, out)
        posts = [json.loads(b) for m, p, h, b in self.fake.seen if (m, p) == ("POST", "/v1/executions")]
        self.assertEqual(len(posts), 1)
        with open(os.path.join(EXAMPLE, "recorded_answer.json")) as f:
            call = json.load(f)["choices"][0]["message"]["tool_calls"][0]
        self.assertEqual(posts[0]["code"], json.loads(call["function"]["arguments"])["code"])
        self.assertEqual((posts[0]["app"], posts[0]["agent"], posts[0]["requestId"]),
                         ("cafe", "analyst", "call_cafe_1"))
        self.assertEqual(posts[0]["context"], chat_tools.CONTEXT)
        self.assertEqual([i["name"] for i in posts[0]["inputs"]], ["receipts.json"])
        self.assertIn("status succeeded", out)
        self.assertIn('"role": "tool", "tool_call_id": "call_cafe_1"', out)

    def test_request_body(self):
        caps = {"description": "# Sandbox\n", "tools": [TOOL]}
        body = chat_tools.build_request(caps, "q?", "m")
        self.assertEqual([t["function"]["name"] for t in body["tools"]], ["run_python", "calc_check"])
        self.assertEqual(body["tools"][1]["function"]["parameters"], TOOL["parameters"])
        self.assertTrue(body["messages"][0]["content"].endswith("# Sandbox\n"))
        self.assertEqual(body["messages"][1], {"role": "user", "content": "q?"})

    def test_direct_tool_call_becomes_a_program(self):
        caps = {"tools": [TOOL]}
        code = chat_tools.program_for({"function": {"name": "calc_check", "arguments": '{"unknowns": ["x"]}'}},
                                      caps)
        self.assertIn("tools.calc.check(**json.loads('{\"unknowns\": [\"x\"]}'))", code)
        compile(code, "direct", "exec")
        self.assertIsNone(chat_tools.program_for({"function": {"name": "rm_rf", "arguments": "{}"}}, caps))

    def test_unknown_agent(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc, _ = self.run_example("--agent", "nobody")
        self.assertEqual(rc, 1)
        self.assertIn("404", err.getvalue())


if __name__ == "__main__":
    unittest.main()
