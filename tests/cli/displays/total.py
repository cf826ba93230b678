# SPDX-License-Identifier: Apache-2.0
# Nine bundles of 1,000,000 bytes each: the ninth passes the total bound.
import json
import os

import cordon_display as cd

os.makedirs(cd.DIR)
for i in range(9):
    head = json.dumps({'data': {'text/plain': ''}})
    body = head.replace('""', '"' + 'a' * (1000000 - len(head)) + '"')
    assert len(body) == 1000000
    with open(os.path.join(cd.DIR, '%06d.json' % i), 'w') as f:
        f.write(body)
