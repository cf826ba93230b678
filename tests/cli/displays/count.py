# SPDX-License-Identifier: Apache-2.0
# More bundles than the supervisor reads.
import cordon_display as cd

for i in range(cd.MAX_BUNDLES + 8):
    cd.display(i)
