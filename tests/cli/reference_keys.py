#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""reference_keys.py DOC.md YAML...: the keys of DOC's key tables (a table
whose first header cell is "key") that none of the YAML files writes as
`key:`; one a line, exit 1 when there is one."""
import re
import sys


def doc_keys(path):
    keys, in_table = [], False
    for line in open(path, encoding="utf-8"):
        if re.match(r"^\|\s*key\s*\|", line):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if in_table and not line.startswith("|---"):
            keys += re.findall(r"`([a-z_]+)`", line.split("|")[1])
    return keys


def main(doc, yamls):
    text = "".join(open(y, encoding="utf-8").read() for y in yamls)
    missing = [k for k in dict.fromkeys(doc_keys(doc)) if not re.search(r"(^|[\s{,])%s:" % re.escape(k), text, re.M)]
    for k in missing:
        print(k)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
