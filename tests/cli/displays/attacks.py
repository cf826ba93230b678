# SPDX-License-Identifier: Apache-2.0
# What a hostile program plants where the supervisor reads its bundles.
import base64
import json
import os

import cordon_display as cd

D = cd.DIR
os.makedirs(D)


def put(n, raw):
    with open(os.path.join(D, '%06d.json' % n), 'wb') as f:
        f.write(raw if isinstance(raw, bytes) else json.dumps(raw).encode())


os.symlink('/etc/shadow', os.path.join(D, '000000.json'))
os.mkfifo(os.path.join(D, '000001.json'))
with open('/workspace/work/victim.json', 'w') as f:
    f.write('{"data": {"text/plain": "linked"}}')
os.link('/workspace/work/victim.json', os.path.join(D, '000002.json'))
with open(os.path.join(D, '000003.json'), 'wb') as f:
    f.truncate(100 << 30)
os.mkdir(os.path.join(D, '000004.json'))
put(5, {'data': {'text/plain': 'x', 'image/png': base64.b64encode(b'GIF89a not a png').decode()}})
put(6, {'data': {'text/plain': 'x', 'application/javascript': 'alert(1)'}})
put(7, b'{"data": {"text/plain": "x"}')
put(8, b'{"data": {"text/plain": "x", "text/plain": "y"}}')
put(9, {'data': {'text/html': '<b>no plain</b>'}})
put(10, b'{"data": {"text/plain": "\xff"}}')
put(11, {'data': {'text/plain': 'x', 'image/jpeg': '!!not base64!!'}})
put(12, {'data': {'text/plain': 'x'}, 'extra': 1})
put(13, {'data': {'text/plain': 'x', 'text/html': 7}})
put(14, {'data': {'text/plain': 'still read'}})
with open(os.path.join(os.fsencode(D), b'odd\nname\xff.json'), 'wb') as f:
    f.write(b'{"data": {"text/plain": "x"}}')
