#!/usr/bin/env python3
"""Plot a coopsolve HDF5 output file as PNG images.

  coopplot.py FILE [--out PREFIX] [--what field,history] [--field NAME]
              [--problem I] [--dpi N] [--size W,H]

writes
  PREFIX-NAME.png     the field: a 2D grid as an image in physical coordinates
                      (x right, y up, equal scales); a 3D grid as its three
                      mid-slices (z, y and x through the middle point); a matrix
                      problem's vector against its row index. A heat run
                      written without fields (output.fields = false) gives
                      PREFIX-u.png of the last snapshot in /series/u
  PREFIX-history.png  the residual per check against the iteration, log scale
  PREFIX-batch.png    a [batch] run (the default --what there): each problem's
                      iterations and solve time against its rows, by reason
  PREFIX-problem-I.png  with --problem I: problem I's solution, as an image for
                      a generated 2D problem (mid-slice z for 3D), else
                      against its row index
PREFIX defaults to FILE without ".h5". Images are W x H inches at N dots per
inch (default 6.4,4.8 and 100: 640 x 480 pixels). Prints each file written.

Exit status: 0 ok, 1 the file lacks what was asked for, 2 bad usage or a file
that is not a readable coopsolve output (one line on stderr naming the file and
the group, dataset or attribute). Needs h5py, numpy and matplotlib (Debian:
python3-h5py python3-numpy python3-matplotlib) and h5check.py beside it; draws
with the Agg backend, so no display is needed.
"""
import argparse
import os
import sys

try:
    import h5py
    import numpy as np
    import matplotlib
except ImportError as e:  # the python3 on PATH is not always the one with h5py
    print(f"coopplot.py: needs h5py, numpy and matplotlib (Debian: python3-h5py python3-numpy "
          f"python3-matplotlib); {sys.executable or 'this python3'} cannot import {e.name or 'them'}",
          file=sys.stderr)
    sys.exit(2)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

# the checked accessors (h5check.py sits beside this file)
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from h5check import (BadFile, attr, dataset, field_names, group, is_scale, member,  # noqa: E402
                     open_h5, read, reason, reason_codes, same_length)

PROG = "coopplot.py"


class Failed(Exception):
    """The file lacks what was asked for (exit status 1)."""


def coordinates(f, shape):
    """Coordinates of the points along each dataset axis (slowest first): the
    /grid/<axis> datasets, or origin + i * spacing for files without them."""
    g = group(f, "grid")
    axes = attr(g, "axes", str) or "zyx"[3 - len(shape):]
    origin, spacing = attr(g, "origin", "floats", []), attr(g, "spacing", "floats", [])
    out = []
    for d, n in enumerate(shape):
        name = axes[d] if d < len(axes) and axes[d] in "zyx" else None
        c = member(g, name) if name else None
        if isinstance(c, h5py.Dataset) and c.shape == (n,) and c.dtype.kind == "f":
            out.append(read(c))
        elif d < min(len(origin), len(spacing)):
            out.append(origin[d] + np.arange(n) * spacing[d])
        else:
            out.append(np.arange(n, dtype=float))
    return axes, out


def edges(c):
    """Cell edges around points c (so each pixel is centred on its point)."""
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate(([2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]))


def image(ax, data, cx, cy, xlabel, ylabel, norm):
    """data[j, i] at (cx[i], cy[j]); y up."""
    ex, ey = edges(cx), edges(cy)
    im = ax.imshow(data, origin="lower", extent=(ex[0], ex[-1], ey[0], ey[-1]),
                   interpolation="nearest", norm=norm, aspect="equal")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return im


def title(f, what):
    s = group(f, "solver")
    return (f"{what}: {attr(s, 'solver', str, '?')}, {attr(s, 'reason', str, '?')} after "
            f"{attr(s, 'iterations', int, -1)} iterations")


def field_data(f, name):
    """(values, label) of /fields/name or, where a heat run wrote no fields
    (output.fields = false), of u's last snapshot in /series/u. A grid's
    /fields/x, y and z are its coordinates (dimension scales), not fields."""
    fields = group(f, "fields")
    if is_scale(member(fields, name)):
        raise Failed(f"/fields/{name} is a coordinate of the grid (a dimension scale), not a field")
    d = dataset(fields, name, "fiu", (1, 2, 3))
    if d is not None:
        return read(d), f"/fields/{name}"
    series = group(f, "series") if name == "u" else None
    u = dataset(series, "u", "fiu", (2, 3, 4))
    if u is None:
        raise Failed(f"no /fields/{name}")
    n = u.shape[0]
    if n == 0:
        raise Failed("no /fields/u, and /series/u has no snapshots")
    label = f"/series/u[{n - 1}]"
    step, time = dataset(series, "step", "iu"), dataset(series, "time", "f")
    if step is not None and time is not None and step.shape == time.shape == (n,):
        label += f" (step {int(read(step, n - 1))}, t = {float(read(time, n - 1)):.6g})"
    return read(u, n - 1), label


def save(fig, path, dpi):
    try:
        fig.savefig(path, dpi=dpi)
    except OSError as e:
        raise Failed(f"cannot write {path}: {e.strerror or e}")
    finally:
        plt.close(fig)


def plot_field(f, name, path, size, dpi):
    u, label = field_data(f, name)
    u = u.astype(np.float64)
    if u.size == 0:
        raise Failed(f"{label} is empty")
    fig = plt.figure(figsize=size, dpi=dpi, layout="constrained")
    fig.suptitle(title(f, label), fontsize="medium")
    if u.ndim == 1:
        ax = fig.add_subplot()
        ax.plot(np.arange(u.size), u, ".", markersize=2)
        ax.set_xlabel("row")
        ax.set_ylabel(name)
    elif u.ndim == 2:
        _, (cy, cx) = coordinates(f, u.shape)
        ax = fig.add_subplot()
        im = image(ax, u, cx, cy, "x", "y", None)
        fig.colorbar(im, ax=ax, label=name)
    else:
        _, (cz, cy, cx) = coordinates(f, u.shape)
        k, j, i = (n // 2 for n in u.shape)
        norm = matplotlib.colors.Normalize(np.nanmin(u), np.nanmax(u))
        axs = fig.subplots(1, 3)
        image(axs[0], u[k, :, :], cx, cy, "x", "y", norm).axes.set_title(f"z = {cz[k]:.4g}")
        image(axs[1], u[:, j, :], cx, cz, "x", "z", norm).axes.set_title(f"y = {cy[j]:.4g}")
        im = image(axs[2], u[:, :, i], cy, cz, "y", "z", norm)
        im.axes.set_title(f"x = {cx[i]:.4g}")
        fig.colorbar(im, ax=list(axs), label=name, orientation="horizontal", shrink=0.6, aspect=30)
    save(fig, path, dpi)


def plot_history(f, path, size, dpi):
    h = group(f, "history")
    it_d, res_d = dataset(h, "iteration", "iu"), dataset(h, "residual", "f")
    if it_d is None or res_d is None:
        raise Failed("no /history")
    it, res = read(it_d), read(res_d)
    same_length(h, {"iteration": it, "residual": res})
    kind = attr(res_d, "kind", str, "?")
    solver = attr(group(f, "solver"), "solver", str, "?")
    fig = plt.figure(figsize=size, dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    keep = res > 0  # a log scale has no room for 0
    ax.semilogy(it[keep], res[keep], ".-", label=f"{kind} residual, 2-norm")
    if not keep.any():
        ax.text(0.5, 0.5, "no positive residual to plot", transform=ax.transAxes, ha="center")
    ax.set_xlabel("iteration")
    ax.set_ylabel("residual")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(f"{solver}: {len(it)} checks", fontsize="medium")
    save(fig, path, dpi)


BATCH_ARRAYS = (("iterations", "iu"), ("rows", "iu"), ("reason", "iu"), ("seconds", "f"), ("side", "iu"))


def batch_data(f):
    """/batch: {"group", "codes", and its per-problem arrays iterations, rows,
    reason and, where written, seconds and side}, checked to have one length."""
    b = group(f, "batch")
    data = {name: dataset(b, name, kinds) for name, kinds in BATCH_ARRAYS}
    if data["iterations"] is None or data["rows"] is None or data["reason"] is None:
        raise Failed("no /batch")
    codes = reason_codes(data["reason"])
    data = {name: read(d) for name, d in data.items() if d is not None}
    same_length(b, data)
    return dict(data, group=b, codes=codes)


def problem_rows(batch, i):
    """(solution dataset, first, end) of problem i's rows in /batch/solution,
    after checking /batch/offsets."""
    b, n = batch["group"], batch["iterations"].size
    if not 0 <= i < n:
        raise Failed(f"--problem {i}: the batch has problems 0 .. {n - 1}")
    sol = dataset(b, "solution", "f")
    if sol is None:
        raise Failed("no /batch/solution (written with output.fields = false)")
    d = dataset(b, "offsets", "iu")
    if d is None:
        raise BadFile(b, "/batch/offsets missing")
    off = read(d)
    if off.size != n + 1:
        raise BadFile(b, f"/batch/offsets has {off.size} entries, expected {n + 1} (one per problem and one)")
    if off[0] != 0 or (np.diff(off) < 0).any() or off[-1] != sol.shape[0]:
        raise BadFile(b, f"/batch/offsets does not rise from 0 to {sol.shape[0]}, "
                         "the length of /batch/solution")
    if off[i + 1] == off[i]:
        raise Failed(f"--problem {i} has no rows")
    return sol, int(off[i]), int(off[i + 1])


def plot_batch(batch, path, size, dpi):
    b, codes = batch["group"], batch["codes"]
    rows, its, why = batch["rows"], batch["iterations"], batch["reason"]
    sec = batch.get("seconds")
    fig = plt.figure(figsize=size, dpi=dpi, layout="constrained")
    axs = fig.subplots(1, 2 if sec is not None else 1, squeeze=False)[0]
    for r in np.unique(why):
        k = why == r
        label = f"{codes.get(int(r), r)} ({int(k.sum())})"
        axs[0].loglog(rows[k], np.maximum(its[k], 1), ".", label=label)
        if sec is not None:
            axs[1].loglog(rows[k], np.maximum(sec[k], 1e-9), ".", label=label)
    axs[0].set_xlabel("rows")
    axs[0].set_ylabel("iterations")
    axs[0].legend(fontsize="small")
    if sec is not None:
        axs[1].set_xlabel("rows")
        axs[1].set_ylabel("solve time of the problem, s")
    for ax in axs:
        ax.grid(True, which="both", alpha=0.3)
    get = lambda k: attr(b, k, str, "?")
    fig.suptitle(f"{rows.size} problems, {get('method')} pc {get('pc')}, "
                 f"{get('sync_used')}/{get('schedule_used')}", fontsize="medium")
    save(fig, path, dpi)


def plot_problem(batch, i, path, size, dpi):
    sol, first, end = problem_rows(batch, i)
    x = read(sol, slice(first, end)).astype(np.float64)
    side = int(batch["side"][i]) if "side" in batch else 0
    dim = int(round(np.log(x.size) / np.log(side))) if side > 1 else 0
    fig = plt.figure(figsize=size, dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    if dim in (2, 3) and side ** dim == x.size:  # generated: rows x fastest, on the unit box
        c = np.arange(1, side + 1) / (side + 1)
        u = x.reshape((side,) * dim)
        if dim == 3:
            u = u[side // 2]
        fig.colorbar(image(ax, u, c, c, "x", "y", None), ax=ax, label="x")
        what = f"{dim}D, {side} points per side" + (", mid-slice z" if dim == 3 else "")
    else:
        ax.plot(np.arange(x.size), x, ".", markersize=2)
        ax.set_xlabel("row")
        ax.set_ylabel("x")
        what = f"{x.size} rows"
    why = int(batch["reason"][i])
    ax.set_title(f"problem {i}: {what}; {batch['codes'].get(why, why)} after "
                 f"{int(batch['iterations'][i])} iterations", fontsize="medium")
    save(fig, path, dpi)


def size_arg(s):
    try:
        w, h = (float(v) for v in s.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not W,H in inches")
    if not (0 < w <= 100 and 0 < h <= 100):
        raise argparse.ArgumentTypeError(f"{s!r}: sizes from 0 to 100 inches")
    return w, h


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file")
    p.add_argument("--out", help="prefix of the PNG names (default: FILE without .h5)")
    p.add_argument("--what", help="field, history or both (default); batch for a [batch] run (its default)")
    p.add_argument("--problem", type=int, help="a [batch] run: also plot problem I's solution")
    p.add_argument("--field", help="the field to plot (default: u, else x, else the first)")
    p.add_argument("--dpi", type=int, default=100, help="dots per inch (default 100)")
    p.add_argument("--size", type=size_arg, default=(6.4, 4.8), help="W,H in inches (default 6.4,4.8)")
    args = p.parse_args(argv)
    what = set(args.what.split(",")) if args.what else set()
    if args.what is not None and (not what or what - {"field", "history", "batch"}):
        p.error(f"--what {args.what!r}: expected field, history, field,history or batch")
    if not 10 <= args.dpi <= 1000:
        p.error("--dpi: from 10 to 1000")
    prefix = args.out or (args.file[:-3] if args.file.endswith(".h5") else args.file)
    try:
        with open_h5(args.file) as f:
            if not what:
                what = {"batch"} if member(f, "batch") is not None else {"field", "history"}
            batch = batch_data(f) if "batch" in what or args.problem is not None else None
            if args.problem is not None:  # checked before anything is written
                problem_rows(batch, args.problem)
            if "batch" in what:
                plot_batch(batch, f"{prefix}-batch.png", args.size, args.dpi)
                print(f"{prefix}-batch.png")
            if args.problem is not None:
                plot_problem(batch, args.problem, f"{prefix}-problem-{args.problem}.png", args.size, args.dpi)
                print(f"{prefix}-problem-{args.problem}.png")
            if "field" in what:
                fields = field_names(group(f, "fields"))
                name = args.field or next((n for n in ("u", "x") if n in fields), fields[0] if fields else "u")
                plot_field(f, name, f"{prefix}-{name}.png", args.size, args.dpi)
                print(f"{prefix}-{name}.png")
            if "history" in what:
                plot_history(f, f"{prefix}-history.png", args.size, args.dpi)
                print(f"{prefix}-history.png")
    except Failed as e:
        print(f"{PROG}: {args.file}: {e}", file=sys.stderr)
        return 1
    except BadFile as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # h5py's, from a read outside the accessors
        print(f"{PROG}: {args.file}: cannot read: {reason(e)}", file=sys.stderr)
        return 2
    finally:
        plt.close("all")  # a figure a failure left open
    return 0

if __name__ == "__main__":
    sys.exit(main())
