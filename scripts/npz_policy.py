#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""npz_policy.py: greedy actions of a network exported by `gorila eval --export FILE.npz`.

Loads the .npz (format in docs/CHECKPOINT.md, "Exporting a network"), builds
the Q-network and prints the greedy action for each observation, one per
line, as `gorila eval RUN --actions OBSFILE` does for the same checkpoint.

Observations come from OBSFILE, or stdin when it is absent or "-": one per
line, obs_dim numbers separated by blanks or commas; blank lines and lines
starting with '#' are skipped.

Backends (--backend, default auto = the first one available):
  torch   numpy loads the file (np.load), the arrays go into an equivalent
          torch.nn.Module (QNet below) with load_state_dict: the array names
          are its state_dict keys
  numpy   np.load and the forward pass in numpy, float32
  stdlib  no third-party package: the zip is read with `zipfile`, each .npy
          header parsed with `struct` and `ast.literal_eval`, the forward
          pass in Python floats (float64 arithmetic on the float32 weights);
          a member whose size in the zip is not its .npy header plus what
          its shape needs is refused before it is inflated

A network with convolution layers (format_version 2: conv.<i>.weight
(out, in, kh, kw), input_shape (H, W, C), conv_layers rows (filters, kernel,
stride)) reads each observation row of H*W*C numbers as planes (H, W, C),
permuted to (C, H, W) for the convolutions (valid padding, ReLU after each);
the last one's output is flattened (C, H, W) into the dense layers.

Every backend picks argmax_a Q(s, a) with ties going to the lowest index,
as gorila does. Near-ties can differ between backends in float rounding;
the exported weights are the same bits in every case.

Usage:
    scripts/npz_policy.py MODEL.npz [OBSFILE] [--backend auto|torch|numpy|stdlib] [--q] [--info]
      --q      print the Q-values after the action: "action,q0,q1,..."
      --info   print the metadata and every array's shape, then exit
"""

import argparse
import ast
import importlib.util
import math
import struct
import sys
import zipfile

FORMAT_VERSION = 1       # an MLP
FORMAT_VERSION_CONV = 2  # with convolution layers first

# numpy and torch are imported only for the backend that uses them (import_backend):
# importing torch takes over a second, which the standard-library backend should not pay.
np = None
torch = None


def available(module):
    """Whether module can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def import_backend(backend):
    """Import what backend needs into the module's np and torch."""
    global np, torch
    if backend in ("torch", "numpy"):
        import numpy
        np = numpy
    if backend == "torch":
        import torch as torch_module
        torch = torch_module


# ------------------------------------------------------------- loading


# Bounds of what the stdlib loader reads of one .npy member: its header
# (numpy writes under 128 bytes for these arrays; numpy itself refuses more
# than 10000 by default) and its data (an exported array is a few MB; 1 GiB
# of float32 is far beyond any network gorila trains).
MAX_NPY_HEADER = 65536
MAX_NPY_DATA = 1 << 30
NPY_CODES = {"f4": "f", "f8": "d", "i8": "q", "i4": "i", "b1": "?", "u1": "B"}


def _npy_header(name, data):
    """(descr, shape, offset of the data) of a .npy v1.0/2.0/3.0 file from its
    first bytes (at least the whole header)."""
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % name)
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    elif major in (2, 3):
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    else:
        raise ValueError("%s: .npy version %d not supported" % (name, major))
    if hlen > MAX_NPY_HEADER:
        raise ValueError("%s: a .npy header of %d bytes (at most %d)" % (name, hlen, MAX_NPY_HEADER))
    if len(data) < start + hlen:
        raise ValueError("%s: the .npy header is cut short" % name)
    try:
        header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
        descr, shape = header["descr"], tuple(header["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError):
        raise ValueError("%s: not a .npy header: %r" % (name, data[start:start + min(hlen, 80)]))
    if not isinstance(descr, str) or len(descr) < 2 or \
            not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise ValueError("%s: .npy header with dtype %r and shape %r" % (name, descr, shape))
    if header.get("fortran_order"):
        raise ValueError("%s: Fortran order not supported" % name)
    return descr, shape, start + hlen


def _npy_data_bytes(name, descr, shape):
    """Bytes of the data of an array of descr and shape (the dtypes
    _npy_parse reads)."""
    count = 1
    for d in shape:
        count *= d
    kind = descr[1:]
    if kind[0] in "US" and kind[1:].isdigit():
        return (4 if kind[0] == "U" else 1) * int(kind[1:]) * count
    if kind not in NPY_CODES:
        raise ValueError("%s: dtype %s not supported" % (name, descr))
    return struct.calcsize(NPY_CODES[kind]) * count


def _npy_parse(name, data):
    """Decode one .npy v1.0/2.0 file (bytes) into (shape, values) with the
    standard library only: values is a flat list (numbers or bools), or a
    str for a 0-d unicode/bytes array."""
    descr, shape, start = _npy_header(name, data)
    body = data[start:]
    count = 1
    for d in shape:
        count *= d
    order, kind = descr[0], descr[1:]
    endian = {"<": "<", ">": ">", "|": "<", "=": "="}.get(order)
    if endian is None:
        raise ValueError("%s: dtype %s not supported" % (name, descr))
    if len(body) < _npy_data_bytes(name, descr, shape):
        raise ValueError("%s: the data is cut short" % name)
    if kind[0] == "U":
        width = int(kind[1:])
        chars = struct.unpack("%s%dI" % (endian, width * count), body[: 4 * width * count])
        if count != 1:
            raise ValueError("%s: only 0-d strings are supported" % name)
        return shape, "".join(chr(c) for c in chars).rstrip("\0")
    if kind[0] == "S":
        width = int(kind[1:])
        if count != 1:
            raise ValueError("%s: only 0-d strings are supported" % name)
        return shape, body[:width].rstrip(b"\0").decode("ascii")
    size = struct.calcsize(NPY_CODES[kind])
    values = list(struct.unpack("%s%d%s" % (endian, count, NPY_CODES[kind]), body[: size * count]))
    return shape, values


def _read_npy_member(z, info):
    """The bytes of one .npy member, never more than its shape needs: the
    size the zip declares for it (file_size) must be its .npy header plus
    the data its dtype and shape need, checked before the data is inflated,
    and only that many bytes are read."""
    name = info.filename
    if info.file_size > MAX_NPY_HEADER + 12 + MAX_NPY_DATA:
        raise ValueError("%s: the zip declares %d bytes for it, more than an exported array can be (%d)"
                         % (name, info.file_size, MAX_NPY_HEADER + 12 + MAX_NPY_DATA))
    with z.open(info) as f:
        head = f.read(12)
        if len(head) == 12 and head[:6] == b"\x93NUMPY" and head[6] in (1, 2, 3):
            hlen = struct.unpack("<H", head[8:10])[0] + 10 if head[6] == 1 else struct.unpack("<I", head[8:12])[0] + 12
            head += f.read(min(hlen, MAX_NPY_HEADER + 12) - len(head))
        descr, shape, start = _npy_header(name, head)
        data = _npy_data_bytes(name, descr, shape)
        if data > MAX_NPY_DATA:
            raise ValueError("%s: shape %s of %s needs %d bytes, more than an exported array can be (%d)"
                             % (name, shape, descr, data, MAX_NPY_DATA))
        if info.file_size != start + data:
            raise ValueError("%s: the zip declares %d bytes for it, and its .npy header (%d bytes, %s %s) with "
                             "the data of its shape makes %d; refused before inflating it"
                             % (name, info.file_size, start, descr, shape, start + data))
        body = f.read(start + data - len(head))
    return head + body


def load_stdlib(path):
    """{name: (shape, values)} from the .npz, standard library only. Each
    member is checked against the size its shape needs before it is
    inflated (_read_npy_member): a zip bomb is refused, not expanded."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if not info.filename.endswith(".npy"):
                continue
            name = info.filename[: -len(".npy")]
            out[name] = _npy_parse(info.filename, _read_npy_member(z, info))
    return out


def load_numpy(path):
    """{name: ndarray} through np.load (no pickles)."""
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


class Model:
    """The metadata and the layers of an exported network, whatever loaded it.

    arrays: {name: (shape, flat values)}; for a string, values is the str."""

    def __init__(self, arrays):
        def scalar(name):
            shape, v = arrays[name]
            return v if isinstance(v, str) else v[0]

        missing = [k for k in ("format_version", "env", "obs_dim", "num_actions", "hidden", "activation", "dueling")
                   if k not in arrays]
        if missing:
            raise ValueError("not a gorila export: missing %s" % ", ".join(missing))
        self.format_version = int(scalar("format_version"))
        if self.format_version not in (FORMAT_VERSION, FORMAT_VERSION_CONV):
            raise ValueError("format_version %d, this script reads %d and %d"
                             % (self.format_version, FORMAT_VERSION, FORMAT_VERSION_CONV))
        self.env = str(scalar("env"))
        self.obs_dim = int(scalar("obs_dim"))
        self.num_actions = int(scalar("num_actions"))
        self.hidden = [int(h) for h in arrays["hidden"][1]]
        self.activation = str(scalar("activation"))
        self.dueling = bool(scalar("dueling"))
        if self.activation != "relu":
            raise ValueError("activation %r not supported" % self.activation)
        self.torques = list(arrays["torques"][1]) if "torques" in arrays else None
        self.arrays = arrays
        self.input_shape, self.convs, flat = None, [], self.obs_dim
        if self.format_version == FORMAT_VERSION_CONV:
            flat = self._conv_shapes(arrays)
        # (weight name, bias name, out, in) of every linear layer, forward order
        widths = [flat] + self.hidden
        n_body = len(self.hidden) if self.dueling else len(self.hidden) + 1
        outs = self.hidden + ([] if self.dueling else [self.num_actions])
        self.layers = [("layers.%d" % k, outs[k], widths[k]) for k in range(n_body)]
        last = widths[-1]
        self.heads = [("advantage", self.num_actions, last), ("value", 1, last)] if self.dueling else []
        for prefix, out, inp in self.layers + self.heads:
            wshape = tuple(arrays[prefix + ".weight"][0])
            bshape = tuple(arrays[prefix + ".bias"][0])
            if wshape != (out, inp) or bshape != (out,):
                raise ValueError("%s: weight %s bias %s, expected (%d, %d) and (%d,)" % (prefix, wshape, bshape, out,
                                                                                         inp, out))

    def _conv_shapes(self, arrays):
        """Check the conv metadata and weights; fill self.input_shape (H, W, C)
        and self.convs, per layer (prefix, filters, in channels, kernel, stride,
        in height, in width, out height, out width). Returns the flat size of
        the last conv output."""
        for k in ("input_shape", "conv_layers"):
            if k not in arrays:
                raise ValueError("format_version %d without %s" % (FORMAT_VERSION_CONV, k))
        ishape, layers = arrays["input_shape"], arrays["conv_layers"]
        if tuple(ishape[0]) != (3,) or len(layers[0]) != 2 or layers[0][1] != 3 or layers[0][0] < 1:
            raise ValueError("input_shape %s, conv_layers %s: expected (3,) and (n, 3)"
                             % (tuple(ishape[0]), tuple(layers[0])))
        h, w, c = (int(v) for v in ishape[1])
        self.input_shape = (h, w, c)
        if h * w * c != self.obs_dim:
            raise ValueError("input_shape %s holds %d values, obs_dim is %d"
                             % (self.input_shape, h * w * c, self.obs_dim))
        vals = [int(v) for v in layers[1]]
        for i in range(layers[0][0]):
            f, k, st = vals[3 * i: 3 * i + 3]
            if f < 1 or st < 1 or k < 1 or k > h or k > w:
                raise ValueError("conv layer %d: %d filters, kernel %d, stride %d on %dx%d" % (i, f, k, st, h, w))
            oh, ow = (h - k) // st + 1, (w - k) // st + 1
            prefix = "conv.%d" % i
            wshape, bshape = tuple(arrays[prefix + ".weight"][0]), tuple(arrays[prefix + ".bias"][0])
            if wshape != (f, c, k, k) or bshape != (f,):
                raise ValueError("%s: weight %s bias %s, expected %s and (%d,)"
                                 % (prefix, wshape, bshape, (f, c, k, k), f))
            self.convs.append((prefix, f, c, k, st, h, w, oh, ow))
            c, h, w = f, oh, ow
        return c * h * w

    def info(self):
        lines = ["env: %s" % self.env, "format_version: %d" % self.format_version, "obs_dim: %d" % self.obs_dim,
                 "num_actions: %d" % self.num_actions, "hidden: %s" % self.hidden,
                 "activation: %s" % self.activation, "dueling: %s" % self.dueling]
        if self.input_shape is not None:
            lines.append("input_shape: %s" % (self.input_shape,))
            lines.append("conv_layers: %s" % [(f, k, st) for _, f, _, k, st, _, _, _, _ in self.convs])
        if self.torques is not None:
            lines.append("torques: %s" % self.torques)
        for name in sorted(self.arrays):
            lines.append("array %s %s" % (name, tuple(self.arrays[name][0])))
        return "\n".join(lines)


# ------------------------------------------------------------- forward passes


def conv_stdlib(model, obs):
    """The conv layers on one observation (H*W*C floats, planes (H, W, C)),
    pure Python: returns the last output flattened (C, H, W)."""
    a = model.arrays
    h, w, c = model.input_shape
    # (C, H, W), the permute: x[(ch * h + y) * w + col]
    x = [obs[(y * w + col) * c + ch] for ch in range(c) for y in range(h) for col in range(w)]
    for prefix, f, c, k, st, h, w, oh, ow in model.convs:
        W, b = a[prefix + ".weight"][1], a[prefix + ".bias"][1]
        out = []
        for fo in range(f):
            for oy in range(oh):
                for ox in range(ow):
                    v = b[fo] + math.fsum(W[((fo * c + ch) * k + ky) * k + kx] *
                                          x[(ch * h + oy * st + ky) * w + ox * st + kx]
                                          for ch in range(c) for ky in range(k) for kx in range(k))
                    out.append(v if v > 0.0 else 0.0)
        x = out
    return x


def q_stdlib(model, obs):
    """Q-values of one observation (list of floats), pure Python."""
    a = model.arrays
    x = conv_stdlib(model, obs) if model.convs else list(obs)

    def linear(prefix, out, inp, x):
        W, b = a[prefix + ".weight"][1], a[prefix + ".bias"][1]
        return [b[o] + math.fsum(W[o * inp + i] * x[i] for i in range(inp)) for o in range(out)]

    for k, (prefix, out, inp) in enumerate(model.layers):
        x = linear(prefix, out, inp, x)
        if k < len(model.hidden):
            x = [v if v > 0.0 else 0.0 for v in x]
    if not model.dueling:
        return x
    adv = linear("advantage", model.num_actions, len(x), x)
    (v,) = linear("value", 1, len(x), x)
    mean = sum(adv) / len(adv)
    return [v + adv_a - mean for adv_a in adv]


def conv_numpy(model, arrays, x):
    """The conv layers on obs (B, H*W*C) float32: (B, C', H', W') flattened."""
    h, w, c = model.input_shape
    x = x.reshape(-1, h, w, c).transpose(0, 3, 1, 2)  # (B, C, H, W), dqn.py's permute
    for prefix, f, _, k, st, _, _, oh, ow in model.convs:
        W, b = arrays[prefix + ".weight"], arrays[prefix + ".bias"]
        y = np.zeros((x.shape[0], f, oh, ow), dtype=np.float32)
        for ky in range(k):
            for kx in range(k):
                win = x[:, :, ky: ky + st * (oh - 1) + 1: st, kx: kx + st * (ow - 1) + 1: st]
                y += np.einsum("bchw,fc->bfhw", win, W[:, :, ky, kx])
        x = np.maximum(y + b[None, :, None, None], np.float32(0))
    return x.reshape(x.shape[0], -1)


def q_numpy(model, arrays, obs):
    """Q-values (B, A) for obs (B, O), numpy float32."""
    x = np.asarray(obs, dtype=np.float32)
    if model.convs:
        x = conv_numpy(model, arrays, x)
    for k, (prefix, _, _) in enumerate(model.layers):
        x = x @ arrays[prefix + ".weight"].T + arrays[prefix + ".bias"]
        if k < len(model.hidden):
            x = np.maximum(x, np.float32(0))
    if not model.dueling:
        return x
    adv = x @ arrays["advantage.weight"].T + arrays["advantage.bias"]
    v = x @ arrays["value.weight"].T + arrays["value.bias"]
    return v + adv - adv.mean(axis=1, keepdims=True)


def make_torch_module(model, arrays):
    """A torch.nn.Module equivalent to the exported network, its parameters
    loaded with load_state_dict (the .npz array names are its keys)."""
    nn = torch.nn

    class QNet(nn.Module):
        def __init__(self, obs_dim, hidden, num_actions, dueling, input_shape, convs):
            super().__init__()
            self.input_shape = input_shape
            if convs:
                self.conv = nn.ModuleList(nn.Conv2d(c, f, k, stride=st) for _, f, c, k, st, _, _, _, _ in convs)
                _, f, _, _, _, _, _, oh, ow = convs[-1]
                obs_dim = f * oh * ow
            widths = [obs_dim] + list(hidden)
            outs = list(hidden) + ([] if dueling else [num_actions])
            self.n_hidden = len(hidden)
            self.dueling = dueling
            self.layers = nn.ModuleList(nn.Linear(widths[i], outs[i]) for i in range(len(outs)))
            if dueling:
                self.advantage = nn.Linear(widths[-1], num_actions)
                self.value = nn.Linear(widths[-1], 1)

        def forward(self, x):
            if self.input_shape is not None:
                x = x.reshape(-1, *self.input_shape).permute(0, 3, 1, 2)  # (B, C, H, W)
                for conv in self.conv:
                    x = torch.relu(conv(x))
                x = x.flatten(1)
            for i, layer in enumerate(self.layers):
                x = layer(x)
                if i < self.n_hidden:
                    x = torch.relu(x)
            if not self.dueling:
                return x
            adv = self.advantage(x)
            return self.value(x) + adv - adv.mean(dim=1, keepdim=True)

    net = QNet(model.obs_dim, model.hidden, model.num_actions, model.dueling, model.input_shape, model.convs)
    keys = net.state_dict().keys()
    net.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(arrays[k])) for k in keys})
    return net.eval()


def argmax_lowest(q):
    """Index of the largest value, the lowest index on ties (gorila's rule)."""
    best = 0
    for i in range(1, len(q)):
        if q[i] > q[best]:
            best = i
    return best


# ------------------------------------------------------------- command line


def read_observations(stream, obs_dim):
    rows = []
    for lineno, line in enumerate(stream, 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        vals = [float(t) for t in s.replace(",", " ").split()]
        if len(vals) != obs_dim:
            sys.exit("npz_policy: line %d: expected %d values, got %d" % (lineno, obs_dim, len(vals)))
        # gorila reads each value into a float32; so does every backend here
        rows.append([struct.unpack("f", struct.pack("f", v))[0] for v in vals])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="the .npz written by gorila eval --export")
    ap.add_argument("obs", nargs="?", default="-", help="observations, one per line (default: stdin)")
    ap.add_argument("--backend", choices=("auto", "torch", "numpy", "stdlib"), default="auto")
    ap.add_argument("--q", action="store_true", help="print action,q0,q1,... per observation")
    ap.add_argument("--info", action="store_true", help="print the metadata and array shapes, then exit")
    args = ap.parse_args()

    backend = args.backend
    have_np, have_torch = available("numpy"), available("torch")
    if backend == "auto":
        backend = "torch" if have_torch and have_np else "numpy" if have_np else "stdlib"
    if backend in ("torch", "numpy") and not have_np:
        sys.exit("npz_policy: --backend %s needs numpy (not installed); --backend stdlib works without" % backend)
    if backend == "torch" and not have_torch:
        sys.exit("npz_policy: --backend torch needs torch (not installed)")

    try:
        with open(args.model, "rb") as f:  # a missing or unreadable file: its own error
            head = f.read(4)
        if not zipfile.is_zipfile(args.model):
            if head == b"PK\x03\x04":
                raise ValueError("a damaged or truncated .npz (a zip archive without its directory at the end)")
            raise ValueError("not an .npz (a zip archive); a .bin export holds the raw parameters only")
        import_backend(backend)  # after the cheap refusals: importing torch takes over a second
        if backend == "stdlib":
            arrays = load_stdlib(args.model)
            model = Model(arrays)
        else:
            arrays = load_numpy(args.model)
            model = Model({k: (v.shape, v.item() if v.dtype.kind in "US" else v.reshape(-1).tolist())
                           for k, v in arrays.items()})
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, struct.error) as e:
        sys.exit("npz_policy: %s: %s" % (args.model, e))
    if args.info:
        print("backend: %s" % backend)
        print(model.info())
        return

    try:
        stream = sys.stdin if args.obs == "-" else open(args.obs)
    except OSError as e:
        sys.exit("npz_policy: %s: %s" % (args.obs, e.strerror))
    with stream:
        obs = read_observations(stream, model.obs_dim)
    if not obs:
        return
    if backend == "stdlib":
        qs = [q_stdlib(model, o) for o in obs]
    elif backend == "numpy":
        qs = q_numpy(model, arrays, obs).tolist()
    else:
        net = make_torch_module(model, arrays)
        with torch.no_grad():
            qs = net(torch.tensor(obs, dtype=torch.float32)).tolist()
    out = []
    for q in qs:
        a = argmax_lowest(q)
        out.append("%d,%s" % (a, ",".join("%.9g" % v for v in q)) if args.q else "%d" % a)
    print("\n".join(out))


if __name__ == "__main__":
    main()
