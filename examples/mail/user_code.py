# SPDX-License-Identifier: Apache-2.0
# A weekly note, as a model would write it: sum up a week of covers, write
# the note as a declared output and mail it to the manager through the
# governed mail.send tool.  The message id names the week, so a platform
# that retries this whole run does not send the note twice: the second call
# gets the first call's answer.  `tools` is the stubs module cordon run
# generates from the policy (it calls cordon_tools underneath).
import json
import statistics

import tools

week = "2026-W49"
covers = {"Mon": 112, "Tue": 98, "Wed": 131, "Thu": 125, "Fri": 170, "Sat": 204, "Sun": 156}

total = sum(covers.values())
busiest = max(covers, key=covers.get)
quietest = min(covers, key=covers.get)
body = (
    f"Covers for {week}: {total} in all, {statistics.mean(covers.values()):.1f} a day.\n"
    f"Busiest day: {busiest} ({covers[busiest]}); quietest: {quietest} ({covers[quietest]}).\n"
    "\n"
    + "".join(f"{day}  {n:4d}\n" for day, n in covers.items())
)
with open("/workspace/out/note.txt", "w") as f:
    f.write(body)

answer = tools.mail.send(
    to="manager@example.org",
    subject=f"Weekly covers, {week}",
    body=body,
    message_id=f"weekly-covers-{week}",
)

with open("/workspace/out/result.json", "w") as f:
    json.dump({"week": week, "totalCovers": total, "busiestDay": busiest, "mail": answer}, f)
print("sent:", answer)
