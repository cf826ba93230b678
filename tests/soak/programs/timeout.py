# SPDX-License-Identifier: Apache-2.0
# runs past the timeout (10 s) with a child that sleeps too: timed_out, and
# both processes must be gone afterwards
import os
import time
if os.fork() == 0:
    time.sleep(60)
    os._exit(0)
time.sleep(60)
