# SPDX-License-Identifier: Apache-2.0
"""Small linear systems in exact arithmetic, for the cafe's calc tools.

The params shape is the calc.* signature of examples/cafe/tools.yaml:
unknowns (names) and equations ({coefficients: one per unknown, equals}),
with the same bounds, checked again here.
"""
from fractions import Fraction

from cordon_example_tool import check_keys, get_list, get_number, get_string, invalid, show

MAX_UNKNOWNS = 8
MAX_EQUATIONS = 8
MAX_COEFFICIENT = 1000000
MAX_EQUALS = 1000000000


def read_system(params, extra=()):
    """(unknowns, rows) from params, rows as [coefficients..., equals] of
    Fractions; params must hold the extra keys too, and nothing else."""
    check_keys(params, "params", ("unknowns", "equations") + tuple(extra))
    unknowns = get_list(params["unknowns"], "unknowns", 1, MAX_UNKNOWNS)
    for i, name in enumerate(unknowns):
        get_string(name, f"unknowns[{i}]", 1, 32)
        if name in unknowns[:i]:
            raise invalid(f"unknowns[{i}]: {show(name)} is named twice")
    equations = get_list(params["equations"], "equations", 1, MAX_EQUATIONS)
    rows = []
    for i, eq in enumerate(equations):
        where = f"equations[{i}]"
        check_keys(eq, where, ("coefficients", "equals"))
        coefficients = get_list(eq["coefficients"], f"{where}.coefficients", len(unknowns), len(unknowns))
        row = [get_number(c, f"{where}.coefficients[{j}]", -MAX_COEFFICIENT, MAX_COEFFICIENT)
               for j, c in enumerate(coefficients)]
        row.append(get_number(eq["equals"], f"{where}.equals", -MAX_EQUALS, MAX_EQUALS))
        rows.append(row)
    return unknowns, rows


def residuals(rows, values):
    """sum(coefficients * values) - equals for each row, exactly."""
    return [sum((c * v for c, v in zip(row, values)), Fraction(0)) - row[-1] for row in rows]


def solve(rows, n):
    """Gauss-Jordan elimination on the augmented rows (copied).  Returns
    ("unique", [values]), ("inconsistent", None) or ("underdetermined",
    None).  Exact, so a pivot is any non-zero entry."""
    m = [list(r) for r in rows]
    pivot_row = 0
    for col in range(n):
        pick = next((r for r in range(pivot_row, len(m)) if m[r][col] != 0), None)
        if pick is None:
            continue
        m[pivot_row], m[pick] = m[pick], m[pivot_row]
        p = m[pivot_row][col]
        m[pivot_row] = [x / p for x in m[pivot_row]]
        for r in range(len(m)):
            if r != pivot_row and m[r][col] != 0:
                f = m[r][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[pivot_row])]
        pivot_row += 1
    # A row of zero coefficients with a non-zero right side: 0 = c.
    if any(all(x == 0 for x in row[:n]) and row[n] != 0 for row in m):
        return "inconsistent", None
    if pivot_row < n:
        return "underdetermined", None
    return "unique", [m[i][n] for i in range(n)]


def fraction_text(x):
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
