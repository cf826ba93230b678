# SPDX-License-Identifier: Apache-2.0
# A seccomp filter must be in force (mode 2), inherited by everything this
# program starts.
import blib

st = blib.status()
ok = st.get("Seccomp") == "2" and int(st.get("Seccomp_filters", "0")) >= 1
blib.report("seccomp_status", ok, "seccomp" if ok else None,
            "Seccomp: %s, Seccomp_filters: %s" % (st.get("Seccomp"), st.get("Seccomp_filters")))
