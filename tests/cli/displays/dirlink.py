# SPDX-License-Identifier: Apache-2.0
# The bundles' directory itself a symbolic link to a directory of bundles.
import os

os.makedirs('/tmp/elsewhere')
with open('/tmp/elsewhere/000000.json', 'w') as f:
    f.write('{"data": {"text/plain": "through a link"}}')
os.symlink('/tmp/elsewhere', '/workspace/work/.cordon-display')
