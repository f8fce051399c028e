#!/usr/bin/env python3
"""Check and summarise coopsolve HDF5 output files (layout in src/io/io.h).

  h5check.py layout FILE [--no-xdmf] [--require-scales]
                                           verify the whole layout (attributes, strings,
                                           coordinates, a time series in /series; a batch run's /batch) and the
                                           XDMF file beside it (a Temporal collection over
                                           /series/u when there is a series); --require-scales:
                                           the dimension scales netCDF-4 readers need too
  h5check.py show FILE [--input]           the run's metadata: program, input, grid, solver,
                                           history, timing, fields (--input: the input text too)
  h5check.py compare FILE1 FILE2 [--rtol R] [--atol A] [--fields u]
                                           exit 0 iff every field value agrees,
                                           |a - b| <= atol + rtol max(|a|, |b|); prints the
                                           max abs and rel difference per field
  h5check.py same FILE1 FILE2 [--fields u,error]
                                           exit 0 iff the /fields datasets are bit-identical
  h5check.py close FILE1 FILE2 [--rtol R]  normwise: max|a - b| / max|a| <= rtol
  h5check.py error FILE                    print error_max and error_l2 from /solver

compare, same and close look at every /fields dataset and, in a batch run's
file, /batch/solution (all problems' solutions; compare also wants the same
/batch/offsets); --fields picks /fields datasets only. /fields/x, y and z of a
grid run (and /series/x, y, z) are no fields: they are /grid's coordinates
under a second name, HDF5 dimension scales, and every command skips them.

Exit status: 0 ok, 1 a check failed (with messages on stderr), 2 bad usage or
a file that is not a readable coopsolve output (one line on stderr naming the
file and the group, dataset or attribute; layout lists what it finds wrong in
a readable file with status 1).
Needs h5py and numpy only.
"""
import argparse
import os
import re
import signal
import sys
import xml.etree.ElementTree as ET

try:
    import h5py
    import numpy as np
except ImportError as e:  # the python3 on PATH is not always the one with h5py
    print(f"h5check.py: needs h5py and numpy (Debian: python3-h5py python3-numpy); "
          f"{sys.executable or 'this python3'} cannot import {e.name or 'them'}", file=sys.stderr)
    sys.exit(2)

PROG = "h5check.py"
ROOT_STRINGS = ("program", "version", "created", "devices")
INPUT_STRINGS = ("name", "text", "resolved")
SOLVER_STRINGS = ("solver", "backend", "mode", "precision", "reason")
SOLVER_FLOATS = ("residual", "rel_residual", "solve_time")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
RESIDUAL_KINDS = ("true", "recurrence")

# ---- checked access: every read of a file goes through these (coopplot.py's too) ----
# h5py raises these for what HDF5 cannot read in a damaged or foreign file (its
# _errors.pyx maps HDF5's error classes onto them: a bad checksum inside the
# file comes as KeyError or RuntimeError as often as OSError); each accessor
# catches them around its one h5py call and names the object instead.
H5_ERRORS = (OSError, KeyError, RuntimeError, ValueError, TypeError)
KIND_WORDS = {"f": "floating-point", "iu": "integer", "fiu": "numeric"}


class BadFile(Exception):
    """A file that is not a readable coopsolve output; the message is one line
    naming the file and the object. Exit status 2."""

    def __init__(self, at, what):
        """at: an h5py object of the file, or the file's path."""
        super().__init__(f"{at if isinstance(at, str) else at.file.filename}: {what}")


def reason(e):
    """An h5py exception's message on one line."""
    msg = e.args[0] if isinstance(e, KeyError) and e.args else e
    return " ".join(str(msg).split())


def open_h5(path):
    if not os.path.exists(path):
        raise BadFile(path, "no such file")
    try:
        return h5py.File(path, "r")
    except OSError as e:
        raise BadFile(path, f"cannot open as HDF5: {reason(e)}")


def path_in(parent, name):
    return parent.name.rstrip("/") + "/" + name


def kind_of(obj):
    return "a group" if isinstance(obj, h5py.Group) else \
        "a dataset" if isinstance(obj, h5py.Dataset) else "neither a group nor a dataset"


def member(parent, name):
    """parent's member name (a group or dataset), None where there is none (or
    no parent)."""
    if parent is None:
        return None
    try:
        return parent[name] if name in parent else None
    except H5_ERRORS as e:
        raise BadFile(parent, f"{path_in(parent, name)} cannot be read: {reason(e)}")


def names(g):
    """The names of group g's members (none where g is None)."""
    if g is None:
        return []
    try:
        found = list(g)
    except H5_ERRORS as e:
        raise BadFile(g, f"{g.name}: its members cannot be listed: {reason(e)}")
    if not all(isinstance(name, str) for name in found):  # h5py's bytes: not UTF-8
        raise BadFile(g, f"{g.name}: a member's name is not UTF-8 text")
    return found


def group(parent, name):
    """Group name in parent, None where there is none; BadFile where it is
    something else."""
    g = member(parent, name)
    if g is not None and not isinstance(g, h5py.Group):
        raise BadFile(g, f"{path_in(parent, name)} is {kind_of(g)}, expected a group")
    return g


def dataset(parent, name, kinds, ndims=(1,)):
    """Dataset name in parent of a numpy kind in kinds ("f", "iu" or "fiu") and
    a rank in ndims; None where there is none; BadFile where it is something
    else."""
    d = member(parent, name)
    if d is None:
        return None
    where = path_in(parent, name)
    if not isinstance(d, h5py.Dataset):
        raise BadFile(d, f"{where} is {kind_of(d)}, expected a dataset")
    if d.ndim not in ndims:
        want = f"{ndims[0]}-D" + (f" to {ndims[-1]}-D" if len(ndims) > 1 else "")
        raise BadFile(d, f"{where} is {d.ndim}-D, expected {want}")
    if d.dtype.kind not in kinds:
        raise BadFile(d, f"{where} holds {d.dtype}, expected {KIND_WORDS[kinds]} values")
    return d


def read(d, sel=()):
    """d[sel]; BadFile where HDF5 cannot read it."""
    try:
        return d[sel]
    except H5_ERRORS as e:
        raise BadFile(d, f"{d.name} cannot be read: {reason(e)}")


def has_attr(obj, name):
    try:
        return name in obj.attrs
    except H5_ERRORS as e:
        raise BadFile(obj, f"{obj.name} attribute {name!r} cannot be read: {reason(e)}")


def raw_attr(obj, name):
    """Attribute name of obj as h5py reads it (it must exist)."""
    try:
        return obj.attrs[name]
    except H5_ERRORS as e:  # UnicodeDecodeError is a ValueError
        raise BadFile(obj, f"{obj.name} attribute {name!r} cannot be read: {reason(e)}")


def attr(obj, name, kind, default=None):
    """Attribute name of obj as kind: str, int, float, or "ints"/"floats" (a
    1-D array); default where obj (None: no object) has no such attribute;
    BadFile where it cannot be read or is of another kind."""
    if obj is None or not has_attr(obj, name):
        return default
    value = raw_attr(obj, name)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    where = f"{obj.name} attribute {name!r}"
    if kind is str:
        try:  # h5py gives bytes for fixed-length strings and str (invalid bytes
            # as surrogates) for variable-length ones
            if isinstance(value, (bytes, np.bytes_)):
                value = bytes(value).decode("utf-8")
            elif isinstance(value, str):
                value.encode("utf-8")
        except UnicodeError:
            raise BadFile(obj, f"{where} is not UTF-8 text")
        if not isinstance(value, str):
            raise BadFile(obj, f"{where} is not a string")
        return value
    if kind is int or kind is float:
        ok = (np.integer,) if kind is int else (np.integer, np.floating)
        if not isinstance(value, ok):
            raise BadFile(obj, f"{where} is not {'an integer' if kind is int else 'a number'}")
        return kind(value)
    value = np.asarray(value)
    if value.ndim != 1 or value.dtype.kind not in ("iu" if kind == "ints" else "fiu"):
        raise BadFile(obj, f"{where} is not a 1-D array of {'integers' if kind == 'ints' else 'numbers'}")
    return value


def is_scale(d):
    """Whether d is an HDF5 dimension scale (attribute CLASS "DIMENSION_SCALE",
    the HDF5 specification's fixed-length string): in /fields and /series, x,
    y and z are /grid's coordinates under a second name, for netCDF-4 readers
    (src/io/io.c, link_coords), not fields."""
    if not isinstance(d, h5py.Dataset) or not has_attr(d, "CLASS"):
        return False
    value = raw_attr(d, "CLASS")
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    return value == "DIMENSION_SCALE"


def field_names(g):
    """The names of the fields in group g (/fields): its members less the
    dimension scales."""
    return [name for name in names(g) if not is_scale(member(g, name))]


def reason_codes(d):
    """{code: name} from the codes attribute of /batch/reason: "0 none, 1 converged_rtol, ..."."""
    codes = {}
    for item in attr(d, "codes", str, "").split(","):
        k, _, name = item.strip().partition(" ")
        if k.lstrip("-").isdigit():
            codes[int(k)] = name
    return codes


def xmf_path(path):
    return path[:-3] + ".xmf" if path.endswith(".h5") else path + ".xmf"


# ---- layout -----------------------------------------------------------------
class Checker:
    """Collects every problem instead of stopping at the first."""

    def __init__(self):
        self.problems = []

    def fail(self, msg):
        self.problems.append(msg)

    def attr(self, obj, name, kind, ndim=None, where=None):
        """Attribute `name` of numpy kind ('S' string, 'i'/'f' with size), None if wrong.
        ndim None: scalar; else a 1D array of that length."""
        where = where or obj.name
        if not has_attr(obj, name):
            self.fail(f"{where}: attribute {name} missing")
            return None
        try:
            aid = obj.attrs.get_id(name)
            dt, shape = aid.dtype, aid.shape
        except H5_ERRORS as e:
            raise BadFile(obj, f"{obj.name} attribute {name!r} cannot be read: {reason(e)}")
        want_shape = () if ndim is None else (ndim,)
        if kind == "S":
            # variable-length UTF-8: h5py reads str; fixed-length strings come back as bytes
            info = h5py.check_string_dtype(dt)
            if info is None or info.encoding != "utf-8" or info.length is not None:
                self.fail(f"{where}: attribute {name} is {dt} ({info}), expected a "
                          "variable-length UTF-8 string")
                return None
            if shape not in ((), None):
                self.fail(f"{where}: attribute {name} has shape {shape}, expected a scalar")
                return None
            return attr(obj, name, str)
        k, size = kind[0], int(kind[1:])
        if dt.kind != k or dt.itemsize != size:
            self.fail(f"{where}: attribute {name} is {dt}, expected {k}{size}")
            return None
        if shape != want_shape:
            self.fail(f"{where}: attribute {name} has shape {shape}, expected {want_shape}")
            return None
        return raw_attr(obj, name)

    def group(self, f, name):
        g = member(f, name)
        if g is None or not isinstance(g, h5py.Group):
            self.fail(f"group /{name} missing" if g is None else f"/{name} is {kind_of(g)}, expected a group")
            return None
        self.described(g)
        return g

    def described(self, obj):
        """Every group and dataset says what it is in a non-empty description."""
        d = self.attr(obj, "description", "S", where=obj.name)
        if d is not None and not d.strip():
            self.fail(f"{obj.name}: empty description")
        return d

    def dataset(self, g, name):
        """Dataset name in group g, else None after saying what is there."""
        d = member(g, name)
        if d is None or not isinstance(d, h5py.Dataset):
            what = "missing" if d is None else f"is {kind_of(d)}, expected a dataset"
            self.fail(f"{path_in(g, name)} {what}")
            return None
        return d

    def series(self, g, name, kind):
        d = self.dataset(g, name)
        if d is None:
            return None
        if d.ndim != 1 or d.dtype.kind != kind or d.dtype.itemsize != 8:
            self.fail(f"{d.name}: {d.dtype}{d.shape}, expected 1D {kind}8")
            return None
        self.described(d)
        return d


def check_root(c, f):
    strings = {name: c.attr(f, name, "S", where="/") for name in ROOT_STRINGS}
    c.described(f)
    if strings["program"] is not None and strings["program"] != "coopsolve":
        c.fail(f"/: program is {strings['program']!r}, expected 'coopsolve'")
    created = strings["created"]
    if created is not None and not ISO_UTC.match(created):
        c.fail(f"/: created {created!r} is not ISO 8601 UTC")
    ranks = c.attr(f, "ranks", "i4", where="/")
    if ranks is not None and ranks < 1:
        c.fail(f"/: ranks is {ranks}")
    gpus = c.attr(f, "gpus", "i4", where="/")
    if gpus is not None and gpus < 0:
        c.fail(f"/: gpus is {gpus}")
    g = c.group(f, "input")
    if g is not None:
        for name in INPUT_STRINGS:
            c.attr(g, name, "S")
    return ranks


def check_grid(c, f, ranks):
    """Returns (shape, spacing, origin) or None; shape has one entry per axis,
    (n,) for a matrix problem's vector (axes "row")."""
    g = c.group(f, "grid")
    if g is None:
        return None
    axes = c.attr(g, "axes", "S")
    if axes not in ("zyx", "yx", "row"):
        c.fail(f"/grid: axes is {axes!r}, expected 'zyx', 'yx' or 'row'")
        return None
    n = 1 if axes == "row" else len(axes)
    shape = c.attr(g, "shape", "i8", n)
    spacing = c.attr(g, "spacing", "f8", n)
    origin = c.attr(g, "origin", "f8", n)
    decomp = c.attr(g, "decomposition", "i4", n)
    if shape is not None and (shape < 1).any():
        c.fail(f"/grid: shape {shape.tolist()} has an empty axis")
    if decomp is not None and ranks is not None and int(np.prod(decomp)) != ranks:
        c.fail(f"/grid: decomposition {decomp.tolist()} is not {ranks} ranks")
    if shape is None or spacing is None or origin is None:
        return None
    if axes != "row":
        check_coords(c, g, axes, shape, spacing, origin)
    return tuple(int(s) for s in shape), spacing, origin


def check_coords(c, g, axes, shape, spacing, origin):
    """/grid/<axis>: the points' coordinates, origin + i * spacing."""
    for d, name in enumerate(axes):
        ds = member(g, name)
        if not isinstance(ds, h5py.Dataset):
            c.fail(f"/grid/{name} (coordinates) missing")
            continue
        c.described(ds)
        if ds.shape != (int(shape[d]),) or ds.dtype != np.dtype("<f8"):
            c.fail(f"{ds.name}: {ds.dtype}{ds.shape}, expected float64 ({int(shape[d])},)")
            continue
        want = origin[d] + np.arange(int(shape[d])) * spacing[d]
        if not np.allclose(read(ds), want, rtol=1e-14, atol=0):
            c.fail(f"{ds.name}: coordinates are not origin + i * spacing")


def check_fields(c, f, shape, require_scales=False):
    """Returns {name: dtype} of the fields."""
    g = c.group(f, "fields")
    found = {}
    if g is None:
        return found
    grid = shape is not None and len(shape) > 1
    for name in names(g):
        d = member(g, name)
        if is_scale(d):
            check_scale_link(c, f, g, name, shape)
            continue
        if not isinstance(d, h5py.Dataset):
            c.fail(f"/fields/{name} is not a dataset")
            continue
        if d.dtype not in (np.dtype("<f8"), np.dtype("<f4")):
            c.fail(f"/fields/{name}: dtype {d.dtype}, expected float64 or float32")
        if shape is not None and d.shape != shape:
            c.fail(f"/fields/{name}: shape {d.shape}, /grid says {shape}")
        c.described(d)
        c.attr(d, "points", "S")
        if grid and d.ndim == len(shape):
            check_field_coords(c, f, d, require_scales)
        found[name] = d.dtype
    if found and grid and require_scales:
        check_scale_links(c, f, g, shape)
    return found


def check_scale_link(c, f, g, name, shape):
    """g/name, a dimension scale, must be /grid/name itself (a second name of
    that dataset: a hard link) for an axis of the grid."""
    axes = "zyx"[3 - len(shape):] if shape is not None and 1 < len(shape) <= 3 else ""
    gridg = member(f, "grid")
    want = member(gridg, name) if name in axes and isinstance(gridg, h5py.Group) else None
    if want is None or want != member(g, name):
        c.fail(f"{path_in(g, name)}: a dimension scale that is not /grid/{name} "
               f"(expected here: /grid's coordinates {', '.join(axes) or '(none)'} under a second name)")


def check_scale_links(c, f, g, shape):
    """Group g names each of /grid's coordinates (netCDF-4 readers look for a
    variable's dimensions in its own group and those above it)."""
    for a in "zyx"[3 - len(shape):]:
        if member(g, a) is None:
            c.fail(f"{path_in(g, a)} missing: /grid/{a} under a second name, where netCDF-4 "
                   f"readers (xarray, ncdump) look for dimension {a}")


def check_field_coords(c, f, d, require_scales, time=None):
    """A grid field (time: a series' /series/time dataset, its dimension 0)
    names its coordinates in dataset order and, with libhdf5_hl, has them
    attached as dimension scales, labelled: time, then /grid's axes."""
    gridg = member(f, "grid")
    dims = [] if time is None else [("/series/time", "time", time)]
    dims += [(f"/grid/{a}", a, member(gridg, a) if isinstance(gridg, h5py.Group) else None)
             for a in "zyx"[3 - d.ndim + len(dims):]]
    want = " ".join(path for path, _, _ in dims)
    coords = c.attr(d, "coordinates", "S")
    if coords is not None and coords != want:
        c.fail(f"{d.name}: coordinates {coords!r}, expected {want!r}")
    if not has_attr(d, "DIMENSION_LIST"):
        if require_scales:
            c.fail(f"{d.name}: no dimension scales attached")
        return
    if not scale_attributes_typed(d):
        c.fail(f"{d.name}: DIMENSION_LIST or DIMENSION_LABELS is not one reference or string per dimension")
        return
    for i, (path, a, scale) in enumerate(dims):
        check_dim_scale(c, d, i, scale, path, a)


def check_dim_scale(c, d, i, scale, path, label=None):
    """Dimension i of d has exactly the dimension scale scale (the dataset at
    path) attached (labelled label, where not None)."""
    try:
        scales, got = list(d.dims[i].values()), d.dims[i].label
    except H5_ERRORS as e:
        raise BadFile(d, f"{d.name}: dimension scales of dimension {i} cannot be read: {reason(e)}")
    if len(scales) != 1 or scale is None or scales[0] != scale or (label is not None and got != label):
        c.fail(f"{d.name}: dimension {i} has scales {[s.name for s in scales]} labelled {got!r}, "
               f"expected [{path!r}]" + (f" labelled {label!r}" if label is not None else ""))


def scale_attributes_typed(d):
    """Whether d's DIMENSION_LIST (and DIMENSION_LABELS) hold one object
    reference (string) per dimension: libhdf5_hl's dimension-scale calls,
    under h5py's d.dims, crash on other types instead of failing."""
    try:
        a = d.attrs.get_id("DIMENSION_LIST")
        refs = h5py.check_vlen_dtype(a.dtype)
        ok = a.shape == (d.ndim,) and refs is not None and h5py.check_ref_dtype(refs) is h5py.Reference
        if ok and "DIMENSION_LABELS" in d.attrs:
            a = d.attrs.get_id("DIMENSION_LABELS")
            ok = a.shape == (d.ndim,) and h5py.check_string_dtype(a.dtype) is not None
    except H5_ERRORS as e:
        raise BadFile(d, f"{d.name}: dimension scale attributes cannot be read: {reason(e)}")
    return ok


def check_solver(c, f):
    g = c.group(f, "solver")
    if g is None:
        return
    for name in SOLVER_STRINGS:
        c.attr(g, name, "S")
    c.attr(g, "iterations", "i8")
    c.attr(g, "barriers_per_iteration", "i8")
    for name in ("blocks", "ipc_faces", "halo_fused", "resident"):
        c.attr(g, name, "i8")
    if has_attr(g, "true_residual"):
        c.attr(g, "true_residual", "f8")
    for name in SOLVER_FLOATS:
        c.attr(g, name, "f8")
    for name in ("dt", "time"):  # a time stepper's (heat)
        if has_attr(g, name):
            c.attr(g, name, "f8")
    present = [n for n in ("error_max", "error_l2") if has_attr(g, n)]
    if len(present) == 1:
        c.fail(f"/solver: {present[0]} without its partner")
    for name in present:
        c.attr(g, name, "f8")


def check_series(c, f, ranks, require_scales=False):
    g = c.group(f, "history")
    if g is not None:
        it = c.series(g, "iteration", "i")
        res = c.series(g, "residual", "f")
        if it is not None and res is not None and it.shape != res.shape:
            c.fail(f"/history: iteration has {it.shape[0]} entries, residual {res.shape[0]}")
        elif it is not None and res is not None and (require_scales or has_attr(res, "DIMENSION_LIST")):
            check_indexed(c, res, it, "/history/iteration")
        if res is not None:
            kind = c.attr(res, "kind", "S")
            if kind is not None and kind not in RESIDUAL_KINDS:
                c.fail(f"{res.name}: kind {kind!r}, expected one of {RESIDUAL_KINDS}")
            norm = c.attr(res, "norm", "S")
            if norm is not None and norm != "2":
                c.fail(f"{res.name}: norm {norm!r}, expected '2'")
    g = c.group(f, "timing")
    if g is None:
        return
    for name in names(g):
        d = c.series(g, name, "f")
        if d is None:
            continue
        if ranks is not None and d.shape != (ranks,):
            c.fail(f"{d.name}: {d.shape[0]} values, expected one per rank ({ranks})")
        if not has_attr(d, "units") or c.attr(d, "units", "S") != "s":
            c.fail(f"{d.name}: attribute units missing or not 's'")


def check_indexed(c, d, scale, path):
    """1-D d has the dimension scale scale (at path) attached: netCDF-4 readers
    then index d by it."""
    if not is_scale(scale):
        c.fail(f"{path}: not a dimension scale (of {d.name})")
    elif not has_attr(d, "DIMENSION_LIST"):
        c.fail(f"{d.name}: no dimension scale attached ({path})")
    elif not scale_attributes_typed(d):
        c.fail(f"{d.name}: DIMENSION_LIST or DIMENSION_LABELS is not one reference or string per dimension")
    else:
        check_dim_scale(c, d, 0, scale, path)


def check_time_series(c, f, shape, require_scales=False):
    """/series (heat with output.every): u (T, *shape) chunked one snapshot per
    chunk, step (int64, T, increasing from >= 0), time (float64, T,
    non-decreasing); the last snapshot is /fields/u when that exists. Returns
    (steps, times, dtype) or None."""
    if member(f, "series") is None:
        return None
    g = c.group(f, "series")
    u = member(g, "u")
    if not isinstance(u, h5py.Dataset):
        c.fail("/series/u missing")
        return None
    c.described(u)
    c.attr(u, "points", "S")
    step, time = c.series(g, "step", "i"), c.series(g, "time", "f")
    if step is None or time is None:
        return None
    steps, times = read(step), read(time)
    n = steps.shape[0]
    if shape is not None and u.shape != (n,) + tuple(shape):
        c.fail(f"/series/u: shape {u.shape}, expected {(n,) + tuple(shape)} (step has {n} entries)")
    if u.dtype not in (np.dtype("<f8"), np.dtype("<f4")):
        c.fail(f"/series/u: dtype {u.dtype}, expected float64 or float32")
    if u.chunks is None or u.chunks[0] != 1:
        c.fail(f"/series/u: chunks {u.chunks}, expected one snapshot per chunk")
    if times.shape != steps.shape:
        c.fail(f"/series: time has {times.shape[0]} entries, step {n}")
    elif n and (steps[0] < 0 or (np.diff(steps) <= 0).any() or (np.diff(times) < 0).any()):
        c.fail(f"/series: steps {steps.tolist()} or times not increasing")
    if shape is not None and len(shape) > 1:
        check_series_coords(c, f, g, shape, u, step, time, require_scales)
    fields = member(f, "fields")
    fu = member(fields, "u") if isinstance(fields, h5py.Group) else None
    if isinstance(fu, h5py.Dataset) and u.dtype.kind == fu.dtype.kind == "f" and u.ndim > 1 and \
            fu.shape == u.shape[1:] and 0 < n <= u.shape[0] and read(u, n - 1).tobytes() != read(fu).astype(u.dtype).tobytes():
        c.fail("/series/u: the last snapshot is not /fields/u")
    return steps, times, u.dtype


def check_series_coords(c, f, g, shape, u, step, time, require_scales):
    """/series/u's dimensions: time (/series/time), then /grid's axes, named
    by /series/x, y (z) too, and step indexed by time."""
    for name in names(g):
        if name not in ("u", "step", "time") and is_scale(member(g, name)):
            check_scale_link(c, f, g, name, shape)
    if u.ndim == len(shape) + 1:
        check_field_coords(c, f, u, require_scales, time=time)
    if require_scales or has_attr(step, "DIMENSION_LIST"):
        check_indexed(c, step, time, "/series/time")
    if require_scales:
        check_scale_links(c, f, g, shape)


def numbers(s):
    return [float(x) for x in s.split()]


def check_xdmf(c, path, grid, fields, series=None):
    xp = xmf_path(path)
    if not os.path.exists(xp):
        c.fail(f"{xp}: missing")
        return
    try:
        root = ET.parse(xp).getroot()
    except ET.ParseError as e:
        c.fail(f"{xp}: not XML: {e}")
        return
    top = root.find("./Domain/Grid")
    if series is not None:
        if root.tag != "Xdmf" or top is None or top.get("GridType") != "Collection" or \
                top.get("CollectionType") != "Temporal":
            c.fail(f"{xp}: no Xdmf/Domain/Grid of type Collection, CollectionType Temporal")
            return
        check_xdmf_series(c, xp, top, grid, os.path.basename(path), series)
        return
    if root.tag != "Xdmf" or top is None or top.get("GridType", "Uniform") != "Uniform":
        c.fail(f"{xp}: no Xdmf/Domain/Grid of type Uniform")
        return
    if grid is None:
        return
    dims = check_mesh(c, xp, top, grid)
    check_xdmf_attributes(c, xp, top, os.path.basename(path), dims, fields)


def check_xdmf_series(c, xp, top, grid, base, series):
    """One Uniform grid per snapshot k, at Time step's time[k], whose Attribute u
    is the HyperSlab [k, 0, ...] of count [1, shape] of base:/series/u."""
    steps, times, dtype = series
    snaps = top.findall("Grid")
    if len(snaps) != len(steps):
        c.fail(f"{xp}: {len(snaps)} time steps, /series has {len(steps)} snapshots")
        return
    if grid is None:
        return
    shape = grid[0]
    whole = " ".join(str(s) for s in (len(steps),) + tuple(shape))
    for k, g in enumerate(snaps):
        t = g.find("Time")
        if t is None or float(t.get("Value", "nan")) != float(times[k]):
            c.fail(f"{xp}: time step {k}: Time {None if t is None else t.get('Value')}, expected {times[k]!r}")
        dims = check_mesh(c, xp, g, grid)
        attrs = g.findall("Attribute")
        slab = attrs[0].find("DataItem") if len(attrs) == 1 and attrs[0].get("Name") == "u" else None
        items = slab.findall("DataItem") if slab is not None else []
        if slab is None or slab.get("ItemType") != "HyperSlab" or len(items) != 2:
            c.fail(f"{xp}: time step {k}: no Attribute u with a HyperSlab DataItem")
            continue
        want = [k] + [0] * len(shape) + [1] * (len(shape) + 1) + [1] + list(shape)
        if numbers(items[0].text or "") != [float(v) for v in want]:
            c.fail(f"{xp}: time step {k}: hyperslab {items[0].text!r}, expected {want}")
        if (items[1].text or "").strip() != f"{base}:/series/u" or \
                " ".join(items[1].get("Dimensions", "").split()) != whole or \
                items[1].get("Precision") != str(dtype.itemsize):
            c.fail(f"{xp}: time step {k}: data {items[1].text!r} {items[1].attrib}, expected "
                   f"{base}:/series/u of {whole}")
        if " ".join(slab.get("Dimensions", "").split()) != dims:
            c.fail(f"{xp}: time step {k}: Dimensions {slab.get('Dimensions')!r}, expected {dims!r}")


def check_mesh(c, xp, ugrid, grid):
    """Topology and Geometry of a Uniform grid; returns its Dimensions string.
    Always 3D: a 2D grid is one z layer at z = 0 (VTK's readers put a
    2DCoRectMesh in the YZ plane), so it lies in the XY plane."""
    shape, spacing, origin = grid
    if len(shape) == 2:
        shape = (1,) + tuple(shape)
        origin = np.concatenate(([0.0], origin))
        spacing = np.concatenate(([spacing[1]], spacing))
    dims = " ".join(str(s) for s in shape)
    topo, geom = ugrid.find("Topology"), ugrid.find("Geometry")
    if topo is None or topo.get("TopologyType", "").lower() != "3dcorectmesh":
        c.fail(f"{xp}: Topology is not 3DCoRectMesh")
    elif numbers(topo.get("Dimensions", "")) != [float(s) for s in shape]:
        c.fail(f"{xp}: Topology Dimensions {topo.get('Dimensions')!r}, expected {dims!r}")
    items = geom.findall("DataItem") if geom is not None else []
    if geom is None or geom.get("GeometryType", "").upper() != "ORIGIN_DXDYDZ" or len(items) != 2:
        c.fail(f"{xp}: Geometry is not ORIGIN_DXDYDZ with two DataItems")
    else:
        if not np.allclose(numbers(items[0].text or ""), origin, rtol=1e-15, atol=0):
            c.fail(f"{xp}: Geometry origin {items[0].text!r}, expected {origin.tolist()} (z y x)")
        if not np.allclose(numbers(items[1].text or ""), spacing, rtol=1e-15, atol=0):
            c.fail(f"{xp}: Geometry spacing {items[1].text!r}, expected {spacing.tolist()} (z y x)")
    return dims


def check_xdmf_attributes(c, xp, ugrid, base, dims, fields):
    seen = set()
    for a in ugrid.findall("Attribute"):
        name, item = a.get("Name"), a.find("DataItem")
        if a.get("Center") != "Node" or item is None:
            c.fail(f"{xp}: Attribute {name!r} is not node-centred with a DataItem")
            continue
        ref = (item.text or "").strip()
        want = f"{base}:/fields/{name}"
        if ref != want:
            c.fail(f"{xp}: Attribute {name!r} refers to {ref!r}, expected {want!r}")
        if name not in fields:
            c.fail(f"{xp}: Attribute {name!r} has no /fields dataset")
            continue
        if item.get("Format") != "HDF" or item.get("NumberType") != "Float" or \
                item.get("Precision") != str(fields[name].itemsize):
            c.fail(f"{xp}: Attribute {name!r}: Format/NumberType/Precision do not match {fields[name]}")
        if " ".join(item.get("Dimensions", "").split()) != dims:
            c.fail(f"{xp}: Attribute {name!r}: Dimensions {item.get('Dimensions')!r}, expected {dims!r}")
        seen.add(name)
    for name in sorted(set(fields) - seen):
        c.fail(f"{xp}: no Attribute for /fields/{name}")


def fields_off(f):
    """True when the run was told not to write its fields (output.fields = false)."""
    inp = member(f, "input")
    resolved = attr(inp, "resolved", str, "") if isinstance(inp, h5py.Group) else ""
    section = None
    for line in resolved.splitlines():
        m = re.match(r"\s*\[(\w+)\]", line)
        if m:
            section = m.group(1)
        elif section == "output" and re.match(r"\s*fields\s*=\s*false\b", line):
            return True
    return False


BATCH_I8 = ("iterations", "rows", "offsets")
BATCH_F8 = ("residual", "r0", "seconds")
BATCH_I4 = ("reason", "rank")


def check_batch(c, f, ranks):
    """A batch run's /batch (src/io/io.h), in place of /grid and /fields."""
    g = c.group(f, "batch")
    if g is None:
        return
    count = c.attr(g, "count", "i8")
    rows = c.attr(g, "rows", "i8")
    for name in ("method", "pc", "sync", "schedule", "sync_used", "schedule_used", "source"):
        c.attr(g, name, "S")
    if count is None or rows is None:
        return
    count, rows = int(count), int(rows)
    data = {}
    for names_, kind in ((BATCH_I8, "i8"), (BATCH_F8, "f8"), (BATCH_I4, "i4")):
        for name in names_:
            d = c.dataset(g, name)
            if d is None:
                continue
            want = count + 1 if name == "offsets" else count
            if d.ndim != 1 or d.shape[0] != want or d.dtype.kind != kind[0] or d.dtype.itemsize != int(kind[1:]):
                c.fail(f"{d.name}: {d.dtype}{d.shape}, expected 1D {kind} of {want}")
                continue
            c.described(d)
            data[name] = read(d)
    reason_ds = member(g, "reason")
    if isinstance(reason_ds, h5py.Dataset):
        c.attr(reason_ds, "codes", "S")
    off = data.get("offsets")
    if off is not None:
        if off[0] != 0 or (np.diff(off) < 0).any() or off[-1] != rows:
            c.fail(f"/batch/offsets: not rising from 0 to rows = {rows}")
        elif "rows" in data and (np.diff(off) != data["rows"]).any():
            c.fail("/batch/offsets: differences are not /batch/rows")
    if "rank" in data and ranks is not None and ((data["rank"] < 0) | (data["rank"] >= ranks)).any():
        c.fail(f"/batch/rank: a rank outside 0..{ranks - 1}")
    if member(g, "solution") is not None:
        sol = c.dataset(g, "solution")
        if sol is None:
            return
        if sol.ndim != 1 or sol.shape[0] != rows or sol.dtype != np.float64:
            c.fail(f"{sol.name}: {sol.dtype}{sol.shape}, expected 1D f8 of {rows}")
        c.described(sol)
    elif not fields_off(f):
        c.fail("/batch/solution missing, and /input resolved does not say output.fields = false")


def cmd_layout(args):
    c = Checker()
    with open_h5(args.file) as f:
        ranks = check_root(c, f)
        if member(f, "batch") is not None:  # a batch run: /batch in place of /grid and /fields, no XDMF
            check_batch(c, f, ranks)
            check_solver(c, f)
            for p in c.problems:
                print(f"{args.file}: {p}", file=sys.stderr)
            return 1 if c.problems else 0
        grid = check_grid(c, f, ranks)
        fields = check_fields(c, f, grid[0] if grid else None, args.require_scales)
        if not fields and not fields_off(f):
            c.fail("/fields is empty, and /input resolved does not say output.fields = false")
        check_solver(c, f)
        check_series(c, f, ranks, args.require_scales)
        series = check_time_series(c, f, grid[0] if grid else None, args.require_scales)
    vector = grid is not None and len(grid[0]) == 1  # a matrix problem's: no XDMF
    # the XDMF file describes the series, else the fields; with neither there is none
    if not args.no_xdmf and not vector and (fields or series is not None):
        check_xdmf(c, args.file, grid, fields, series)
    for p in c.problems:
        print(f"{args.file}: {p}", file=sys.stderr)
    return 1 if c.problems else 0


# ---- compare, same, close ---------------------------------------------------
def compared(f, pick):
    """{path: dataset} of what compare, same and close look at: each /fields
    dataset (pick: only those names) and, without pick, a batch run's
    /batch/solution."""
    found = {}
    fields = group(f, "fields")
    for name in field_names(fields):
        if pick is None or name in pick:
            found[f"/fields/{name}"] = dataset(fields, name, "fiu", (1, 2, 3))
    if pick is None:
        sol = dataset(group(f, "batch"), "solution", "f")
        if sol is not None:
            found["/batch/solution"] = sol
    return found


def field_pairs(args, f1, f2):
    """(path, a, b) for each dataset to compare; (path, None, None) after
    printing why a pair cannot be compared."""
    pick = args.fields.split(",") if args.fields else None
    d1, d2 = compared(f1, pick), compared(f2, pick)
    if pick:
        paths = [f"/fields/{n}" for n in pick]
    else:
        both = d1.keys() | d2.keys()
        paths = sorted(p for p in both if p.startswith("/fields/")) + \
            [p for p in ("/batch/solution",) if p in both]
    if not paths:
        print("no fields or /batch/solution to compare", file=sys.stderr)
        yield None, None, None
    for path in paths:
        if path not in d1 or path not in d2:
            print(f"{path}: missing in {args.file1 if path not in d1 else args.file2}", file=sys.stderr)
            yield path, None, None
            continue
        a, b = d1[path], d2[path]
        if a.shape != b.shape or a.dtype != b.dtype:
            print(f"{path}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}", file=sys.stderr)
            yield path, None, None
            continue
        yield path, read(a), read(b)


def bad_fields(pairs, check):
    """How many of field_pairs' pairs could not be compared or fail check(path, x, y)."""
    return sum(1 for path, x, y in pairs if x is None or not check(path, x, y))


def same_field(path, x, y):
    """Bit for bit; else says where the first difference is."""
    if x.tobytes() == y.tobytes():
        return True
    diff = np.argwhere(x.view(np.uint8).reshape(x.size, -1) != y.view(np.uint8).reshape(y.size, -1))
    first = np.unravel_index(int(diff[0][0]), x.shape) if x.size else ()
    with np.errstate(invalid="ignore"):
        delta = np.abs(x.astype(np.float64) - y)
    print(f"{path}: differs; {len(np.unique(diff[:, 0]))} elements, first at "
          f"{tuple(int(i) for i in first)}: {x[first]!r} vs {y[first]!r}; "
          f"max |diff| {np.max(delta):.6g}", file=sys.stderr)
    return False


def close_field(path, x, y, rtol):
    """Normwise relative agreement: max|a - b| / max|a| <= rtol, no NaN."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    scale = np.max(np.abs(x)) if x.size else 0.0
    with np.errstate(invalid="ignore"):
        err = np.max(np.abs(x - y)) / (scale if scale > 0 else 1.0) if x.size else 0.0
    ok = bool(np.isfinite(x).all() and np.isfinite(y).all() and err <= rtol)
    print(f"{path}: max |diff| / max |ref| = {err:.3e} ({'ok' if ok else 'over'} {rtol:g})")
    return ok


def cmd_same(args):
    with open_h5(args.file1) as f1, open_h5(args.file2) as f2:
        bad = bad_fields(field_pairs(args, f1, f2), same_field)
    return 1 if bad else 0


def cmd_close(args):
    with open_h5(args.file1) as f1, open_h5(args.file2) as f2:
        bad = bad_fields(field_pairs(args, f1, f2), lambda path, x, y: close_field(path, x, y, args.rtol))
    return 1 if bad else 0


# ---- show -------------------------------------------------------------------
def fmt_list(v, spec=".6g"):
    return "[" + ", ".join(format(float(x), spec) for x in v) + "]"


def show_root(f):
    get = lambda k, d="?": attr(f, k, str, d)
    gpus = attr(f, "gpus", int, 0)
    devices = f" ({get('devices')})" if gpus and get("devices", "") else ""
    print(f"  program    {get('program')} {get('version')}, created {get('created')}, "
          f"{attr(f, 'ranks', int, '?')} ranks, {gpus} GPUs{devices}")
    inp = group(f, "input")
    if inp is not None:
        n = len(attr(inp, "text", str, "").splitlines())
        print(f"  input      {attr(inp, 'name', str, '?') or '(none)'} ({n} lines)")


def show_grid(f):
    g = group(f, "grid")
    if g is None:
        return
    axes = attr(g, "axes", str, "?")
    shape = [int(s) for s in attr(g, "shape", "ints", [])]
    decomp = " x ".join(str(int(p)) for p in attr(g, "decomposition", "ints", []))
    if axes == "row":
        print(f"  vector     {shape[0] if shape else '?'} rows over {decomp} ranks")
        return
    sp, org = np.asarray(attr(g, "spacing", "floats", [])), np.asarray(attr(g, "origin", "floats", []))
    print(f"  grid       {len(shape)}D, {' x '.join(map(str, shape))} points ({axes}), decomposition {decomp}")
    print(f"             spacing {fmt_list(sp)}, origin {fmt_list(org)} (first interior point)")
    if len(sp) == len(shape) == len(org):
        # dataset order is z y x; print x first
        span = ", ".join(f"{ax} {o:.6g} .. {o + (n - 1) * h:.6g}"
                         for ax, o, n, h in reversed(list(zip(axes, org, shape, sp))))
        print(f"             points at {span}")


def show_solver(f):
    s = group(f, "solver")
    if s is None:
        return
    get = lambda k: attr(s, k, str, "?")
    has = lambda k: attr(s, k, float) is not None
    num = lambda k: f"{attr(s, k, float):.4e}" if has(k) else "?"
    its = attr(s, "iterations", int, "?")
    print(f"  solver     {get('solver')} ({get('backend')} backend, mode {get('mode')}, {get('precision')}): "
          f"{get('reason')} after {its} iterations, {attr(s, 'solve_time', float, float('nan')):.4g} s")
    extra = f", true {num('true_residual')}" if has("true_residual") else ""
    print(f"  residual   {num('residual')} (relative {num('rel_residual')}{extra})")
    if has("dt"):
        print(f"  time       t = {num('time')} after {its} steps of dt = {num('dt')}")
    if has("error_max"):
        print(f"  error      max {num('error_max')}, l2 {num('error_l2')} (against the exact solution)")


def same_length(g, arrays):
    """BadFile unless the arrays {name: values} of group g have one length."""
    (a, x), *rest = arrays.items()
    for b, y in rest:
        if y.size != x.size:
            raise BadFile(g, f"{path_in(g, b)} has {y.size} entries, {path_in(g, a)} {x.size}")


def show_time_series(f):
    g = group(f, "series")
    u = dataset(g, "u", "fiu", (2, 3, 4))
    step, time = dataset(g, "step", "iu"), dataset(g, "time", "f")
    if u is None or step is None or time is None:
        return
    st, t = read(step), read(time)
    same_length(g, {"step": st, "time": t})
    span = f", steps {int(st[0])} .. {int(st[-1])}, t {t[0]:.6g} .. {t[-1]:.6g}" if st.size else ""
    print(f"  series     {st.size} snapshots of u {u.dtype} {u.shape[1:]}{span}")


def show_batch(f):
    b = group(f, "batch")
    its_d, reason_d = dataset(b, "iterations", "iu"), dataset(b, "reason", "iu")
    if its_d is None or reason_d is None:
        return
    data = {"iterations": read(its_d), "reason": read(reason_d)}
    for name, kinds in (("rows", "iu"), ("seconds", "f")):
        d = dataset(b, name, kinds)
        if d is not None:
            data[name] = read(d)
    same_length(b, data)
    get = lambda k: attr(b, k, str, "?")
    its, reason, rows = data["iterations"], data["reason"], data.get("rows")
    codes = reason_codes(reason_d)
    counts = ", ".join(f"{codes.get(int(r), r)} {int((reason == r).sum())}" for r in np.unique(reason))
    size = f", {int(rows.min())} .. {int(rows.max())} rows each" if rows is not None and rows.size else ""
    print(f"  batch      {its.size} problems ({get('source')}{size}), {get('method')} pc {get('pc')}, "
          f"{get('sync_used')}/{get('schedule_used')} on rank 0")
    if its.size:
        slow = int(np.argmax(data["seconds"])) if "seconds" in data else -1
        print(f"             {counts}; iterations {int(its.min())} .. {int(its.max())}, {int(its.sum())} in all"
              + (f"; slowest problem {slow}" if slow >= 0 else ""))


def show_history(f):
    h = group(f, "history")
    it_d, res_d = dataset(h, "iteration", "iu"), dataset(h, "residual", "f")
    if it_d is None or res_d is None:
        return
    it, res = read(it_d), read(res_d)
    same_length(h, {"iteration": it, "residual": res})
    kind = attr(res_d, "kind", str, "?")
    if it.size:
        print(f"  history    {it.size} checks, iterations {int(it[0])} .. {int(it[-1])}, "
              f"residual ({kind}, 2-norm) {res[0]:.3e} -> {res[-1]:.3e}")
    else:
        print("  history    empty")


def show_fields(f):
    g = group(f, "fields")
    for name in field_names(g):
        d = dataset(g, name, "fiu", (1, 2, 3))
        v = read(d)
        rng = f", min {np.nanmin(v):.6g}, max {np.nanmax(v):.6g}" if v.size else ""
        print(f"  /fields/{name} {d.dtype} {d.shape}{rng}")
        desc = attr(d, "description", str)
        if desc is not None:
            print(f"             {desc}")


def show_timing(f):
    g = group(f, "timing")
    for name in names(g):
        v = read(dataset(g, name, "f"))
        if v.size:
            print(f"  timing     {name}: min {v.min():.4g} s, max {v.max():.4g} s over {v.size} ranks")


def cmd_show(args):
    with open_h5(args.file) as f:
        print(f"{args.file}")
        show_root(f)
        show_grid(f)
        show_solver(f)
        show_history(f)
        show_time_series(f)
        show_batch(f)
        show_timing(f)
        show_fields(f)
        inp = group(f, "input")
        resolved, text = attr(inp, "resolved", str), attr(inp, "text", str)
        if resolved is not None:
            print("  resolved configuration:")
            for line in resolved.splitlines():
                print(f"    {line}")
        if args.input and text is not None:
            print("  input file:")
            for line in text.splitlines():
                print(f"    {line}")
    return 0


# ---- compare, error ---------------------------------------------------------
def same_grid(f1, f2):
    """None, or why the two files' grids (or batches) differ."""
    g1, g2 = group(f1, "grid"), group(f2, "grid")
    if g1 is not None and g2 is not None:
        for k in ("shape", "spacing", "origin"):
            x, y = attr(g1, k, "floats"), attr(g2, k, "floats")
            if x is not None and y is not None:
                if x.shape != y.shape or not np.allclose(x, y, rtol=1e-12, atol=0):
                    return f"grids differ: /grid {k} {x.tolist()} vs {y.tolist()}"
    o1, o2 = (dataset(group(f, "batch"), "offsets", "iu") for f in (f1, f2))
    if o1 is not None and o2 is not None:
        x, y = read(o1), read(o2)
        if x.shape != y.shape:
            return f"batches differ: /batch/offsets has {x.size} entries vs {y.size}"
        if (x != y).any():
            i = int(np.argmax(x != y))
            return f"batches differ: /batch/offsets[{i}] {int(x[i])} vs {int(y[i])}"
    return None


def compare_field(path, x, y, rtol, atol):
    """Prints one line; True when every element agrees."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    if x.size == 0:
        print(f"{path}: empty in both: ok")
        return True
    finite = np.isfinite(x) & np.isfinite(y)
    diff = np.where(finite, np.abs(x - y), np.inf)
    scale = np.maximum(np.abs(x), np.abs(y))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(scale > 0, diff / scale, np.where(diff > 0, np.inf, 0.0))
    worst = np.unravel_index(int(np.argmax(diff)), x.shape)
    ok = bool(finite.all() and (diff <= atol + rtol * scale).all())
    nan = "" if finite.all() else f", {int((~finite).sum())} non-finite"
    print(f"{path}: max abs diff {diff.max():.3e} at {tuple(int(i) for i in worst)}, "
          f"max rel diff {rel.max():.3e}{nan}: {'ok' if ok else 'over'} (rtol {rtol:g}, atol {atol:g})")
    return ok


def cmd_compare(args):
    with open_h5(args.file1) as f1, open_h5(args.file2) as f2:
        why = same_grid(f1, f2)
        if why:
            print(why)
            return 1
        s1, s2 = group(f1, "solver"), group(f2, "solver")
        notes = [(k, attr(s1, k, kind), attr(s2, k, kind)) for k, kind in (("iterations", int), ("reason", str))]
        bad = bad_fields(field_pairs(args, f1, f2),
                         lambda path, x, y: compare_field(path, x, y, args.rtol, args.atol))
        for k, a, b in notes:
            if a is not None and b is not None and a != b:
                print(f"note: /solver {k} {a} vs {b}")
    return 1 if bad else 0


def cmd_error(args):
    with open_h5(args.file) as f:
        s = group(f, "solver")
        emax, el2 = attr(s, "error_max", float), attr(s, "error_l2", float)
        if emax is None or el2 is None:
            print(f"{args.file}: /solver has no error_max/error_l2 (no exact solution)", file=sys.stderr)
            return 1
        print(f"error_max {emax!r}")
        print(f"error_l2 {el2!r}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("layout", help="verify the file's layout and its XDMF file")
    q.add_argument("file")
    q.add_argument("--no-xdmf", action="store_true", help="the file was written without XDMF")
    q.add_argument("--require-scales", action="store_true",
                   help="grid fields must have /grid/<axis> attached as HDF5 dimension scales, "
                        "/fields and /series name them, /history/iteration indexes residual")
    q = sub.add_parser("same", help="exit 0 iff the fields are bit-identical")
    q.add_argument("file1")
    q.add_argument("file2")
    q.add_argument("--fields", help="comma-separated field names (default: all, and /batch/solution)")
    q = sub.add_parser("close", help="exit 0 iff the fields agree to --rtol (normwise)")
    q.add_argument("file1")
    q.add_argument("file2")
    q.add_argument("--rtol", type=float, default=1e-12)
    q.add_argument("--fields", help="comma-separated field names (default: all, and /batch/solution)")
    q = sub.add_parser("compare", help="exit 0 iff every field value agrees within --rtol/--atol")
    q.add_argument("file1")
    q.add_argument("file2")
    q.add_argument("--rtol", type=float, default=1e-12, help="relative tolerance (default 1e-12)")
    q.add_argument("--atol", type=float, default=0.0, help="absolute tolerance (default 0)")
    q.add_argument("--fields", help="comma-separated field names (default: all, and /batch/solution)")
    q = sub.add_parser("show", help="print the run's metadata")
    q.add_argument("file")
    q.add_argument("--input", action="store_true", help="print the input file's text too")
    q = sub.add_parser("error", help="print error_max and error_l2")
    q.add_argument("file")
    args = p.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # "show FILE | head" ends quietly
    cmds = {"layout": cmd_layout, "same": cmd_same, "close": cmd_close, "compare": cmd_compare,
            "show": cmd_show, "error": cmd_error}
    try:
        return cmds[args.cmd](args)
    except BadFile as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # h5py's, from a read outside the accessors
        files = args.file if "file" in args else f"{args.file1} or {args.file2}"
        print(f"{PROG}: {files}: cannot read: {reason(e)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
