# SPDX-License-Identifier: Apache-2.0
"""cordon_display: rich outputs (MIME bundles) from a program in cordon.

display(obj) turns obj into a bundle the way IPython does: text/plain
always (repr), then whatever obj's _repr_mimebundle_ / _repr_html_ /
_repr_markdown_ / _repr_svg_ / _repr_png_ / _repr_jpeg_ / _repr_json_
give; a dict or list is application/json too, a matplotlib Figure
image/png.  show_last(value) is a displayhook for an interpreter loop (a
cell's last expression); None shows nothing, as in Jupyter.  Figures of
matplotlib still open when the program ends are displayed then (the
loader calls _at_end()), except those display() already showed.

An interpreter loop that runs cells (sessions) calls cell_begin() before
each cell, show_last(value) with the cell's last expression, and
cell_end() after it (open figures displayed, then closed); the
supervisor reads the directory between cells, and cell_begin() empties
it, so each cell's result has that cell's bundles only.

Each bundle is one file, DIR/NNNNNN.json, {"data": {...}, "truncated":
bool}, which the supervisor reads after the run and checks on its own
(docs/result.md, "displays"): this module is a convenience, not a
boundary.  A bundle over MAX_BUNDLE_BYTES keeps only its text/plain, cut
short, and says truncated; past MAX_BUNDLES the supervisor keeps the
first ones and reports how many more there were.
"""
import base64
import json
import os
import sys

# The supervisor's own bounds (runtime/supervise/displays.h); repeated here
# only so that a program is told early, the supervisor checks them anyway.
MAX_BUNDLE_BYTES = 1 << 20
MAX_BUNDLES = 32
TEXT_SHOWN = 4096
DIR = '/workspace/work/.cordon-display'

_TEXT = (('text/html', '_repr_html_'), ('text/markdown', '_repr_markdown_'),
         ('text/latex', '_repr_latex_'), ('image/svg+xml', '_repr_svg_'))
_BINARY = (('image/png', '_repr_png_'), ('image/jpeg', '_repr_jpeg_'))
# The types the supervisor passes on (runtime/supervise/displays.c).
_TEXTS = ('text/plain',) + tuple(m for m, _ in _TEXT)
_IMAGES = tuple(m for m, _ in _BINARY)
_SIGNATURE = {'image/png': b'\x89PNG\r\n\x1a\n', 'image/jpeg': b'\xff\xd8\xff'}
# shown: the figures display() rendered, held so that an id is not reused.
_state = {'n': 0, 'shown': []}


def _call(obj, name):
    """obj.name() as IPython calls it: a missing or failing method, or
    None, gives nothing; a (data, metadata) pair gives the data."""
    f = getattr(obj, name, None)
    if not callable(f) or isinstance(obj, type):
        return None
    try:
        v = f()
    except Exception:
        return None
    if isinstance(v, tuple) and len(v) == 2:
        v = v[0]
    return v


def _figure_png(obj):
    """PNG bytes of a matplotlib Figure, else None; never imports
    matplotlib itself (a program without it has no figures)."""
    mpl = sys.modules.get('matplotlib.figure')
    if mpl is None or not isinstance(obj, mpl.Figure):
        return None
    import io
    buf = io.BytesIO()
    obj.savefig(buf, format='png')
    return buf.getvalue()


def _json_part(v):
    try:
        return json.loads(json.dumps(v, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        return None


def _image(mime, v):
    """An image's value as the supervisor takes it: base64 (standard,
    padded, one line) of bytes that begin with the format's signature;
    None otherwise.  IPython's base64 has line breaks; b64decode drops
    them."""
    if isinstance(v, str):
        try:
            v = base64.b64decode(v)
        except ValueError:
            return None
    if not isinstance(v, (bytes, bytearray)) or not bytes(v).startswith(_SIGNATURE[mime]):
        return None
    return base64.b64encode(bytes(v)).decode('ascii')


def bundle(obj):
    """The MIME bundle of obj: a dict from MIME type to str (base64 for
    images) or, for application/json, a JSON value.  Only the types the
    supervisor passes on are kept (a _repr_mimebundle_ may offer others,
    and one unknown type would cost the whole bundle)."""
    try:
        plain = repr(obj)
    except Exception as e:
        plain = '<unrepresentable %s: %s>' % (type(obj).__name__, e)
    data = {'text/plain': plain}
    mb = _call(obj, '_repr_mimebundle_')
    if isinstance(mb, dict):
        for k, v in mb.items():
            if isinstance(k, str) and k != 'text/plain' and v is not None:
                data[k] = v
    for mime, meth in _TEXT + _BINARY:
        if mime not in data:
            v = _call(obj, meth)
            if v is not None:
                data[mime] = v
    png = _figure_png(obj)
    if png is not None:
        data['image/png'] = png
        _state['shown'].append(obj)
    if 'application/json' not in data:
        j = _call(obj, '_repr_json_')
        if j is None and isinstance(obj, (dict, list)):
            j = obj
        if j is not None:
            data['application/json'] = j
    out = {}
    for k, v in data.items():
        if k in _IMAGES:
            v = _image(k, v)
        elif k == 'application/json':
            v = _json_part(v)
        elif k not in _TEXTS or not isinstance(v, str):
            v = None
        if v is not None:
            out[k] = v
    return out


def _encode(data, truncated):
    # A lone surrogate (a str from bytes decoded with surrogateescape) is
    # not UTF-8: the supervisor would refuse the whole bundle, so it
    # becomes '?'.
    return json.dumps({'data': data, 'truncated': truncated}, ensure_ascii=False,
                      allow_nan=False).encode('utf-8', 'replace')


def display(*objs):
    """Display each object: one bundle each, in order.  Returns the number
    of bundles written."""
    written = 0
    for obj in objs:
        data = bundle(obj)
        try:
            raw = _encode(data, False)
        except (TypeError, ValueError):
            raw = b''
        if not raw or len(raw) > MAX_BUNDLE_BYTES:
            raw = _encode({'text/plain': data['text/plain'][:TEXT_SHOWN]}, True)
        os.makedirs(DIR, mode=0o700, exist_ok=True)
        name = os.path.join(DIR, '%06d.json' % _state['n'])
        _state['n'] += 1
        with open(name, 'xb') as f:
            f.write(raw)
        written += 1
    return written


def show_last(value):
    """A displayhook: a cell's last expression becomes a bundle, None
    shows nothing.  Also binds builtins._ as the interactive hook does."""
    if value is None:
        return
    import builtins
    builtins._ = value
    display(value)


def cell_end():
    """Display the figures still open (plt.show() under the Agg backend
    leaves them open) that display() did not show already, then close
    them all."""
    plt = sys.modules.get('matplotlib.pyplot')
    if plt is not None:
        for num in plt.get_fignums():
            fig = plt.figure(num)
            if not any(fig is f for f in _state['shown']):
                display(fig)
        plt.close('all')
    _state['shown'].clear()


def cell_begin():
    """Start a cell: remove what the cell before left in the directory
    (the supervisor has read it; a program may have put a link, a file or
    a tree in its place) and number from 000000 again."""
    import shutil
    try:
        os.unlink(DIR)
    except IsADirectoryError:
        shutil.rmtree(DIR, ignore_errors=True)
    except FileNotFoundError:
        pass
    _state['n'] = 0
    _state['shown'].clear()


# The loader's name for the end of a one-shot program.
_at_end = cell_end
