# SPDX-License-Identifier: Apache-2.0
# The fleet suite's program: make the calls params.json lists ("calls":
# [{"tool", "messageId", "item"}]), one after the other, each on a
# connection of its own, and report every answer as the supervisor sent it.
# tlib.py is the bridge suite's wire client (tests/bridge/tlib.py), passed
# as an input beside this program.
import tlib

answers = []
for n, c in enumerate(tlib.params()["calls"]):
    answers.append(tlib.call(c["tool"], {"item": c["item"]}, req_id="r%d" % n, message_id=c["messageId"]))
tlib.report(answers=answers)
