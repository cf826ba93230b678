# SPDX-License-Identifier: Apache-2.0
# check.py KIND RESULT: the displays of one program's result are what
# tests/cli/test_displays.sh expects of that program (see each *.py).
import base64
import json
import struct
import sys

kind, r = sys.argv[1], json.load(open(sys.argv[2]))
ds = r['displays']


def fail(msg):
    sys.exit('%s: %s\n%s' % (kind, msg, json.dumps(ds)[:1500]))


def good(d):
    return d['error'] is None


def png_size(b64):
    raw = base64.b64decode(b64, validate=True)
    if raw[:8] != b'\x89PNG\r\n\x1a\n' or raw[12:16] != b'IHDR':
        fail('not a PNG: %r' % raw[:16])
    return struct.unpack('>II', raw[16:24])


def codes():
    return {d['name']: (d['error'] or {}).get('code') for d in ds}


if r['status'] != 'succeeded':
    fail('status %s (stderr %s)' % (r['status'], r['stderr'][-400:]))
names = [d['name'] for d in ds if d['name'] != '.']
if kind != 'attacks' and names != sorted(names):
    fail('not in name order')
for d in ds:
    if not good(d) and (d['data'] != {} or set(d['error']) != {'code', 'message'} or not d['error']['message']):
        fail('a refused bundle keeps data or lacks its code and message: %r' % d)

if kind == 'kinds':
    if names != ['%06d.json' % i for i in range(6)] or not all(map(good, ds)):
        fail('six bundles, all accepted (show_last(None) shows nothing)')
    d = [x['data'] for x in ds]
    if d[0] != {'text/plain': "'plain \u00fc'"}:
        fail('a str is text/plain only')
    if d[1] != {'text/plain': "{'a': [1, None]}", 'application/json': {'a': [1, None]}}:
        fail('a dict is application/json too')
    want = {'text/plain', 'text/html', 'text/markdown', 'text/latex', 'image/svg+xml', 'image/png', 'image/jpeg'}
    if set(d[2]) != want or d[2]['text/html'] != '<b>html</b>' or png_size(d[2]['image/png']) != (3, 2):
        fail('the _repr_*_ methods: %r' % sorted(d[2]))
    if base64.b64decode(d[2]['image/jpeg'])[:3] != b'\xff\xd8\xff':
        fail('image/jpeg')
    if set(d[3]) != {'text/plain', 'text/html', 'application/json', 'image/png'} or \
            d[3]['application/json'] != {'k': [1, 2]} or png_size(d[3]['image/png']) != (1, 1):
        fail('_repr_mimebundle_')
    if d[4] != {'text/plain': '42'} or any(x['truncated'] for x in ds):
        fail('show_last(42)')
    if d[5] != {'text/plain': 'Surrogate()', 'text/html': 'a?b'}:
        fail('a lone surrogate')
elif kind == 'mpl':
    if len(ds) != 2 or not all(map(good, ds)):
        fail('two figures, each once, accepted')
    sizes = [png_size(x['data']['image/png']) for x in ds]
    if sizes != [(100, 50), (120, 80)]:
        fail('figure sizes %r, want figsize * dpi' % sizes)
elif kind == 'nompl':
    if 'no matplotlib' not in r['stdout']:
        fail('matplotlib was importable')
    if [x['data'] for x in ds] != [{'text/plain': "'text'"},
                                   {'text/plain': "{'j': 1}", 'application/json': {'j': 1}},
                                   {'text/plain': '7'}] or not all(map(good, ds)):
        fail('the non-figure displays without matplotlib')
    if r['error'] is not None:
        fail('an error without matplotlib: %r' % r['error'])
elif kind == 'count':
    if len(ds) != 33 or not all(map(good, ds[:32])) or [x['data']['text/plain'] for x in ds[:32]] != \
            [str(i) for i in range(32)]:
        fail('the first 32 bundles read')
    if ds[32]['name'] != '.' or ds[32]['error']['code'] != 'too_many' or '8 more' not in ds[32]['error']['message']:
        fail('the marker of the 8 not read')
elif kind == 'big':
    if len(ds) != 2 or not good(ds[0]) or not ds[0]['truncated'] or list(ds[0]['data']) != ['text/plain']:
        fail('an oversized bundle is cut to text/plain and says truncated')
    if not ds[0]['data']['text/plain'].startswith('Huge') or len(ds[0]['data']['text/plain']) > 4096:
        fail('the cut text/plain')
    if codes()['000001.json'] != 'too_large':
        fail('a file over the bound written around the helper')
elif kind == 'total':
    if len(ds) != 9 or not all(map(good, ds[:8])) or codes()['000008.json'] != 'too_large':
        fail('eight of 1,000,000 bytes fit the total bound, the ninth not')
    if 'in all' not in ds[8]['error']['message']:
        fail('the total bound is named')
elif kind == 'attacks':
    want = {'000000.json': 'symlink', '000001.json': 'not_regular', '000002.json': 'hard_link',
            '000003.json': 'too_large', '000004.json': 'not_regular', '000005.json': 'bad_image',
            '000006.json': 'bad_mime', '000007.json': 'bad_json', '000008.json': 'bad_json',
            '000009.json': 'bad_bundle', '000010.json': 'bad_json', '000011.json': 'bad_base64',
            '000012.json': 'bad_bundle', '000013.json': 'bad_text', '000014.json': None,
            'odd\nname\ufffd.json': 'bad_name'}
    if codes() != want:
        fail('codes %r' % codes())
    if ds[-2]['data'] != {'text/plain': 'still read'}:
        fail('a good bundle among bad ones')
    if 'twice' not in ds[8]['error']['message'] or 'UTF-8' not in ds[10]['error']['message']:
        fail('the reasons of bad_json')
elif kind == 'cells':
    if [(x['name'], x['data']) for x in ds] != [('000000.json', {'text/plain': "'cell 3'"})]:
        fail('cell_begin() leaves only the new cell, numbered from 000000')
elif kind == 'dirlink':
    if codes() != {'.': 'symlink'}:
        fail('a linked bundles directory')
else:
    fail('unknown kind')
