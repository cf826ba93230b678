# SPDX-License-Identifier: Apache-2.0
# exits non-zero: failed (program_failed)
import sys
print("giving up")
sys.exit(3)
