# SPDX-License-Identifier: Apache-2.0
# Run in app-nompl.yaml: matplotlib must really be missing.
try:
    import matplotlib  # noqa: F401
except ImportError:
    print('no matplotlib')
else:
    raise SystemExit('matplotlib was imported: the test app does not hide it')
import cordon_display as cd

cd.display('text', {'j': 1})
cd.show_last(7)
