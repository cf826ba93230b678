# SPDX-License-Identifier: Apache-2.0
# What a session's cell loop does (cordon_display's docstring): the second
# cell's result must hold the second cell's bundles only.
import cordon_display as cd

cd.cell_begin()
cd.display('cell 1')
cd.show_last(1)
cd.cell_end()
# (the supervisor reads the first cell's bundles here)
cd.cell_begin()
cd.show_last('cell 2')
cd.cell_end()
