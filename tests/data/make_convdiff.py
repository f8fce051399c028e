#!/usr/bin/env python3
"""Writes convdiff.mtx: -lap(u) + c . grad(u) on a 16 x 16 grid, 5-point
diffusion and first-order upwind convection with c = (20, 10), Dirichlet
boundaries, scaled by h^2. Nonsymmetric, nonsingular (an M-matrix): a
BiCGStab test case. Run from tests/data to regenerate it."""
m, cx, cy = 16, 20.0, 10.0
h = 1.0 / (m + 1)
entries = []
for j in range(m):
    for i in range(m):
        row = j * m + i + 1
        entries.append((row, row, 4.0 + (cx + cy) * h))
        for di, dj, v in ((-1, 0, -1.0 - cx * h), (1, 0, -1.0), (0, -1, -1.0 - cy * h), (0, 1, -1.0)):
            ii, jj = i + di, j + dj
            if 0 <= ii < m and 0 <= jj < m:
                entries.append((row, jj * m + ii + 1, v))
with open("convdiff.mtx", "w") as f:
    f.write("%%MatrixMarket matrix coordinate real general\n")
    f.write("% convection-diffusion, 16 x 16, upwind; written by make_convdiff.py\n")
    f.write(f"{m * m} {m * m} {len(entries)}\n")
    for r, c, v in entries:
        f.write(f"{r} {c} {v:.17g}\n")
