# SPDX-License-Identifier: Apache-2.0
# What a session's cell loop does (cordon_display's docstring): each cell
# starts with cell_begin(), so the directory holds that cell's bundles only
# (a failed assert fails the run, which check.py sees); the result holds
# the last cell's.
import os

import cordon_display as cd

cd.cell_begin()
cd.display('cell 1')
os.makedirs(os.path.join(cd.DIR, '000005.json', 'deeper'))  # a tree: removed too
cd.show_last(1)
cd.cell_end()
# (a session's supervisor reads the cell's bundles here)
cd.cell_begin()
cd.show_last('cell 2')
cd.cell_end()
assert sorted(os.listdir(cd.DIR)) == ['000000.json'], os.listdir(cd.DIR)
# A link in the directory's place is removed, not followed.
os.rename(cd.DIR, '/workspace/work/moved')
os.symlink('/workspace/work/moved', cd.DIR)
cd.cell_begin()
assert os.listdir('/workspace/work/moved') == ['000000.json'], 'cell_begin followed a link'
cd.show_last('cell 3')
cd.cell_end()
