# SPDX-License-Identifier: Apache-2.0
# raises: failed (program_failed), exit 1 with a traceback
raise RuntimeError("soak: raised on purpose")
