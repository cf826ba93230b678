# SPDX-License-Identifier: Apache-2.0
# A figure displayed explicitly (not again at the end) and one left open.
import matplotlib
import matplotlib.pyplot as plt

import cordon_display as cd

assert matplotlib.get_backend().lower() == 'agg', matplotlib.get_backend()
f1 = plt.figure(figsize=(2, 1), dpi=50)
plt.plot([1, 2])
cd.display(f1)
plt.figure(figsize=(3, 2), dpi=40)
plt.plot([2, 1])
plt.show()
