# SPDX-License-Identifier: Apache-2.0
# Every MIME type cordon passes on, through display() and show_last().
import base64
import struct
import zlib

import cordon_display as cd


def png(w, h):
    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
    raw = b''.join(b'\x00' + b'\x00' * w * 3 for _ in range(h))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
            chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))


class Rich:
    def _repr_html_(self):
        return '<b>html</b>'

    def _repr_markdown_(self):
        return '*md*'

    def _repr_latex_(self):
        return '$x$'

    def _repr_svg_(self):
        return '<svg xmlns="http://www.w3.org/2000/svg"/>'

    def _repr_png_(self):
        return png(3, 2)

    def _repr_jpeg_(self):
        return b'\xff\xd8\xff\xe0' + b'\x00' * 16

    def __repr__(self):
        return 'Rich()'


class Surrogate:
    def _repr_html_(self):
        return 'a\udc80b'

    def __repr__(self):
        return 'Surrogate()'


class Bundle:
    # A type cordon does not pass on is dropped, not the bundle; base64
    # with line breaks (as IPython writes it) is made one line; an image
    # without its signature is dropped.
    def _repr_mimebundle_(self):
        b64 = base64.b64encode(png(1, 1)).decode()
        return {'text/html': '<i>mb</i>', 'application/json': {'k': [1, 2]},
                'application/vnd.plotly.v1+json': {'x': 1}, 'image/png': b64[:20] + '\n' + b64[20:],
                'image/jpeg': b'GIF89a'}

    def __repr__(self):
        return 'Bundle()'


cd.display('plain \u00fc')
cd.display({'a': [1, None]})
cd.display(Rich(), Bundle())
cd.show_last(None)
cd.show_last(42)
# A lone surrogate would make the file invalid UTF-8: the helper writes '?'.
cd.display(Surrogate())
