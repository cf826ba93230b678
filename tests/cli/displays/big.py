# SPDX-License-Identifier: Apache-2.0
# One bundle over the bound cut short by the helper, one written around it.
import json
import os

import cordon_display as cd


class Huge:
    def _repr_html_(self):
        return '<p>' + 'x' * (2 << 20) + '</p>'

    def __repr__(self):
        return 'Huge' + 'y' * 10000


cd.display(Huge())
with open(os.path.join(cd.DIR, '000001.json'), 'w') as f:
    json.dump({'data': {'text/plain': 'z' * (cd.MAX_BUNDLE_BYTES + 100)}}, f)
