#!/usr/bin/env python3
"""Plot a coopsolve HDF5 output file as PNG images.

  coopplot.py FILE [--out PREFIX] [--what field,history] [--field NAME]
              [--problem I] [--dpi N] [--size W,H]

writes
  PREFIX-NAME.png     the field: a 2D grid as an image in physical coordinates
                      (x right, y up, equal scales); a 3D grid as its three
                      mid-slices (z, y and x through the middle point); a matrix
                      problem's vector against its row index
  PREFIX-history.png  the residual per check against the iteration, log scale
  PREFIX-batch.png    a [batch] run (the default --what there): each problem's
                      iterations and solve time against its rows, by reason
  PREFIX-problem-I.png  with --problem I: problem I's solution, as an image for
                      a generated 2D problem (mid-slice z for 3D), else
                      against its row index
PREFIX defaults to FILE without ".h5". Images are W x H inches at N dots per
inch (default 6.4,4.8 and 100: 640 x 480 pixels). Prints each file written.

Exit status: 0 ok, 1 the file cannot be plotted, 2 bad usage. Needs h5py,
numpy and matplotlib (Debian: python3-h5py python3-matplotlib); draws with the
Agg backend, so no display is needed.
"""
import argparse
import sys

import h5py
import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


class Failed(Exception):
    pass


def text(value):
    """An attribute read by h5py as str, bytes or a 0-d array, as str."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8")
    return str(value)


def coordinates(f, shape):
    """Coordinates of the points along each dataset axis (slowest first): the
    /grid/<axis> datasets, or origin + i * spacing for files without them."""
    g = f["grid"] if "grid" in f else None
    axes = text(g.attrs["axes"]) if g is not None and "axes" in g.attrs else "zyx"[3 - len(shape):]
    out = []
    for d, n in enumerate(shape):
        name = axes[d] if d < len(axes) else "?"
        if g is not None and name in g and isinstance(g[name], h5py.Dataset) and g[name].shape == (n,):
            out.append(g[name][()])
        elif g is not None and "origin" in g.attrs and "spacing" in g.attrs:
            out.append(g.attrs["origin"][d] + np.arange(n) * g.attrs["spacing"][d])
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


def title(f, name):
    s = f["solver"].attrs if "solver" in f else {}
    solver = text(s["solver"]) if "solver" in s else "?"
    reason = text(s["reason"]) if "reason" in s else "?"
    its = int(s["iterations"]) if "iterations" in s else -1
    return f"/fields/{name}: {solver}, {reason} after {its} iterations"


def plot_field(f, name, path, size, dpi):
    if "fields" not in f or name not in f["fields"]:
        raise Failed(f"no /fields/{name}")
    u = f["fields"][name][()].astype(np.float64)
    fig = plt.figure(figsize=size, dpi=dpi, layout="constrained")
    fig.suptitle(title(f, name), fontsize="medium")
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
    elif u.ndim == 3:
        _, (cz, cy, cx) = coordinates(f, u.shape)
        k, j, i = (n // 2 for n in u.shape)
        norm = matplotlib.colors.Normalize(np.nanmin(u), np.nanmax(u))
        axs = fig.subplots(1, 3)
        image(axs[0], u[k, :, :], cx, cy, "x", "y", norm).axes.set_title(f"z = {cz[k]:.4g}")
        image(axs[1], u[:, j, :], cx, cz, "x", "z", norm).axes.set_title(f"y = {cy[j]:.4g}")
        im = image(axs[2], u[:, :, i], cy, cz, "y", "z", norm)
        im.axes.set_title(f"x = {cx[i]:.4g}")
        fig.colorbar(im, ax=list(axs), label=name, orientation="horizontal", shrink=0.6, aspect=30)
    else:
        plt.close(fig)
        raise Failed(f"/fields/{name} has {u.ndim} dimensions")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def plot_history(f, path, size, dpi):
    h = f["history"] if "history" in f else None
    if h is None or "iteration" not in h or "residual" not in h:
        raise Failed("no /history")
    it, res = h["iteration"][()], h["residual"][()]
    kind = text(h["residual"].attrs["kind"]) if "kind" in h["residual"].attrs else "?"
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
    s = f["solver"].attrs if "solver" in f else {}
    ax.set_title(f"{text(s['solver']) if 'solver' in s else '?'}: {len(it)} checks", fontsize="medium")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def batch_data(f):
    b = f["batch"] if "batch" in f else None
    if b is None or "iterations" not in b or "rows" not in b or "reason" not in b:
        raise Failed("no /batch")
    codes = {}
    if "codes" in b["reason"].attrs:  # "0 none, 1 converged_rtol, ..."
        for item in text(b["reason"].attrs["codes"]).split(","):
            k, _, name = item.strip().partition(" ")
            if k.lstrip("-").isdigit():
                codes[int(k)] = name
    return b, codes


def plot_batch(f, path, size, dpi):
    b, codes = batch_data(f)
    rows, its, reason = b["rows"][()], b["iterations"][()], b["reason"][()]
    sec = b["seconds"][()] if "seconds" in b else None
    fig = plt.figure(figsize=size, dpi=dpi, layout="constrained")
    axs = fig.subplots(1, 2 if sec is not None else 1, squeeze=False)[0]
    for r in np.unique(reason):
        k = reason == r
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
    a = b.attrs
    fig.suptitle(f"{rows.size} problems, {text(a.get('method', '?'))} pc {text(a.get('pc', '?'))}, "
                 f"{text(a.get('sync_used', '?'))}/{text(a.get('schedule_used', '?'))}", fontsize="medium")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def plot_problem(f, i, path, size, dpi):
    b, codes = batch_data(f)
    off = b["offsets"][()]
    if not 0 <= i < off.size - 1:
        raise Failed(f"--problem {i}: the batch has problems 0 .. {off.size - 2}")
    if "solution" not in b:
        raise Failed("no /batch/solution (written with output.fields = false)")
    x = b["solution"][off[i]:off[i + 1]].astype(np.float64)
    side = int(b["side"][i]) if "side" in b else 0
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
    reason = int(b["reason"][i])
    ax.set_title(f"problem {i}: {what}; {codes.get(reason, reason)} after {int(b['iterations'][i])} iterations",
                 fontsize="medium")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


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
        with h5py.File(args.file, "r") as f:
            if not what:
                what = {"batch"} if "batch" in f else {"field", "history"}
            if args.problem is not None:  # checked before anything is written
                n = batch_data(f)[0]["offsets"].shape[0] - 1
                if not 0 <= args.problem < n:
                    raise Failed(f"--problem {args.problem}: the batch has problems 0 .. {n - 1}")
            if "batch" in what:
                plot_batch(f, f"{prefix}-batch.png", args.size, args.dpi)
                print(f"{prefix}-batch.png")
            if args.problem is not None:
                plot_problem(f, args.problem, f"{prefix}-problem-{args.problem}.png", args.size, args.dpi)
                print(f"{prefix}-problem-{args.problem}.png")
            if "field" in what:
                names = list(f["fields"]) if "fields" in f else []
                name = args.field or next((n for n in ("u", "x") if n in names), names[0] if names else "u")
                plot_field(f, name, f"{prefix}-{name}.png", args.size, args.dpi)
                print(f"{prefix}-{name}.png")
            if "history" in what:
                plot_history(f, f"{prefix}-history.png", args.size, args.dpi)
                print(f"{prefix}-history.png")
    except OSError as e:
        print(f"coopplot: {args.file}: {e}", file=sys.stderr)
        return 1
    except Failed as e:
        print(f"coopplot: {args.file}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
