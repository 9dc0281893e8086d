"""What arcnb checks in a checkpoint before loading it without ``--trust-checkpoint``.

Three formats can run code chosen by the file's author while they load (all three
were shown to, with files built in ``tests/test_models_safety.py``):

* **pickles** (``torch.save`` files, Lightning ``.ckpt``): unpickling can call any
  Python function. arcnb reads them with ``torch.load(weights_only=True)`` only
  (see :mod:`arcnb.models.loading`).
* **torch.export archives** (``.pt2``): ``torch.export.load`` unpickles, with
  ``weights_only=False``, every weight or constant marked ``use_pickle``, the sample
  inputs when ``weights_only`` refuses them, legacy weight files and ``opaque_obj_*``
  constants (``pickle.loads``); it compiles and runs the program's ``guards_code``
  (Python source); it passes every shape expression to ``sympy.sympify``, which calls
  ``eval``; it imports any module an input/output structure (``in_spec``,
  ``out_spec``) names for an enum or a ``defaultdict`` factory; and it loads
  AOTInductor members (native shared libraries).
  :func:`check_export_archive` refuses all of these: members must have the names
  ``torch.export.save`` writes; each pickle in the archive must load with
  ``torch.load(weights_only=True)``; each guard must parse (:mod:`ast`) to
  comparisons and arithmetic on the inputs' sizes and strides; each shape expression
  must parse to calls of a fixed list of sympy classes on numbers and names; the
  input/output structures must name no enum or ``defaultdict``; and operators must be
  PyTorch's own (``aten``, ``prims``, higher-order operators), minus those that touch files.
* **TorchScript archives**: their pickles (``data.pkl``, ``constants.pkl``) are read
  by PyTorch's C++ unpickler, which only rebuilds tensors and TorchScript types, so a
  pickle naming ``os.system`` fails to load and runs nothing. But the archive's
  TorchScript code is a program: ``__setstate__`` runs while ``torch.jit.load``
  loads it, ``forward`` on every batch, and TorchScript can write files
  (``torch.save``, ``torch.from_file``). :func:`check_torchscript_archive` refuses
  code that names an operator which reads or writes files or talks to other
  processes, or an operator or class outside PyTorch's own namespaces.

A checked archive is re-packed in memory from the members that were checked and
that copy is what PyTorch loads, so a zip that two readers would read differently
(duplicate member names, say) cannot show the checks one thing and PyTorch another.

**safetensors** files run no code when loaded (an 8-byte little-endian header length,
a JSON header, then the raw tensor bytes), but a damaged or hostile header could ask
for any amount of memory. :func:`check_safetensors_header` reads the header alone,
before any tensor is read, and refuses in one line a header longer than
:data:`MAX_SAFETENSORS_HEADER` or than the file, one that is not a JSON object (or
names a key twice), an unknown dtype, a shape that is not a short list of whole
numbers >= 0 or does not match its byte range, and byte ranges that leave the file,
overlap, or leave a gap (the format packs the tensors one after the other).
"""
from __future__ import annotations

import ast
import contextlib
import io
import logging
import os
import re
import warnings
import zipfile
from pathlib import Path

from ..errors import ArcnbError, UnsafeCheckpointError, one_line
from ..text import fmt_count
from ..io import parse_json

__all__ = ["UnsafeCheckpointError", "pickle_globals", "check_export_archive",
           "check_torchscript_archive", "check_safetensors_header", "read_archive", "repack",
           "quiet_torch", "one_line", "SAFETENSORS_DTYPES", "MAX_SAFETENSORS_HEADER"]

TRUST_HINT = ("If you trust where this file came from, pass --trust-checkpoint "
              "(trust_checkpoint=True) to load it in full.")


def _refuse(path, what: str) -> UnsafeCheckpointError:
    return UnsafeCheckpointError(
        f"refusing to load checkpoint {path}: {what}, and loading it could run any code on "
        "this machine (read, change or delete files, start programs). " + TRUST_HINT,
        file=str(path))


def _malformed(path, kind: str, why) -> ArcnbError:
    return ArcnbError(f"cannot read {kind} {path}: damaged or not a {kind} ({one_line(why, 200)})")


@contextlib.contextmanager
def quiet_torch():
    """No Python warnings or log records while PyTorch loads (torch.export.load logs
    whole tracebacks on its fallback paths): the CLI owes the user one line."""
    previous = logging.root.manager.disable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.CRITICAL)
        try:
            yield
        finally:
            logging.disable(previous)


# ------------------------------------------------------------------ pickles
def pickle_globals(data: bytes) -> list[str] | None:
    """Names of the Python objects a pickle imports, read with :mod:`pickletools`
    (which parses opcodes and executes nothing). A ``torch.save`` zip is read through
    its ``data.pkl``. None when the data does not parse as a pickle."""
    import pickletools

    try:
        if data[:2] == b"PK":
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                name = next((n for n in zf.namelist() if n.endswith("data.pkl")), None)
                data = zf.read(name) if name else b""
        names, strings = [], []
        for op, arg, _ in pickletools.genops(data):
            if op.name in ("GLOBAL", "INST") and isinstance(arg, str):
                names.append(arg.replace(" ", "."))
            elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
                strings.append(arg)
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                names.append(f"{strings[-2]}.{strings[-1]}")
        return names
    except Exception:  # noqa: BLE001 - not a pickle
        return None


_SAFE_PREFIXES = ("torch.", "collections.OrderedDict", "builtins.set", "builtins.frozenset",
                  "_codecs.encode", "numpy.")


def refused_names(message: str, data: bytes | None) -> list[str]:
    """The objects a refused pickle needs: from torch's message, else from a scan."""
    m = re.search(r"GLOBAL ([\w.]+)", message)
    if m:
        return [m.group(1)]
    return [one_line(n, 80) for n in dict.fromkeys(pickle_globals(data or b"") or [])
            if not n.startswith(_SAFE_PREFIXES)]


def _check_pickle(data: bytes, where: str, path) -> None:
    """Refuse ``data`` unless it loads with ``torch.load(weights_only=True)``."""
    import torch

    try:
        with quiet_torch():
            torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - classified, never re-raised raw
        msg = str(exc)
        if "weights only" in msg.lower() or "weights_only" in msg.lower():
            names = refused_names(msg, data)
            what = f" (it references {', '.join(names[:3])})" if names else ""
            raise _refuse(path, f"its member {where} is a pickle that needs arbitrary Python "
                                f"code to load{what}") from None
        raise _malformed(path, "torch.export archive", f"{where}: {type(exc).__name__}: "
                                                        f"{msg.strip()[:150]}") from None


# ------------------------------------------------------------------ zip archives
#: A zip checkpoint may declare at most this many uncompressed bytes beyond its own size
#: (PyTorch stores its records uncompressed, so a real checkpoint declares about its
#: own size; a record that inflates far beyond that is a compression bomb).
MAX_INFLATION_SLACK = 64 * 1024 ** 2


def check_archive_sizes(path) -> None:
    """Refuse a zip archive whose members declare, in its directory, more uncompressed
    bytes than ``4 x its size + 64 MiB`` (nothing is inflated to check it). Not a zip:
    nothing to check."""
    try:
        size = os.stat(path).st_size
        if not zipfile.is_zipfile(path):
            return
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, RuntimeError):
        return  # the loader that follows says what is wrong with it
    declared = sum(max(i.file_size, 0) for i in infos)
    if declared > 4 * size + MAX_INFLATION_SLACK:
        worst = max(infos, key=lambda i: i.file_size - i.compress_size)
        raise ArcnbError(
            f"refusing to load checkpoint {path}: its {fmt_count(size, thousands=True)} bytes "
            f"declare {fmt_count(declared, thousands=True)} bytes once uncompressed (the member "
            f"{one_line(worst.filename, 80)!r}: {fmt_count(worst.compress_size, thousands=True)} "
            f"-> {fmt_count(worst.file_size, thousands=True)} bytes), a compression bomb")


def read_archive(path, kind: str) -> tuple[str, dict[str, bytes]]:
    """``(top folder, {member name below it: bytes})`` of a PyTorch zip archive.

    PyTorch archives keep every member under one top folder. An archive whose
    members are not, or that holds a name twice, or that inflates far beyond its size
    (:func:`check_archive_sizes`), is refused."""
    check_archive_sizes(path)
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            names = [i.filename for i in infos]
            dup = next((n for n in names if names.count(n) > 1), None)
            if dup is not None:
                raise _refuse(path, f"it holds the member {one_line(dup, 80)!r} twice (zip "
                                    "readers disagree on which copy counts)")
            tops = {n.split("/", 1)[0] for n in names}
            if len(tops) != 1 or any("/" not in n for n in names):
                raise _malformed(path, kind, "its members are not under one top folder")
            top = tops.pop()
            return top, {n[len(top) + 1:]: zf.read(i) for n, i in zip(names, infos)}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, RuntimeError) as exc:
        raise _malformed(path, kind, f"{type(exc).__name__}: {exc}") from None


def repack(top: str, members: dict[str, bytes]) -> bytes:
    """A fresh zip holding exactly ``members`` under ``top/`` (what PyTorch then reads)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(f"{top}/{name}", data)
    return buf.getvalue()


# ------------------------------------------------------------------ torch.export
_NAME = r"[A-Za-z0-9_]+"
_PT2_MEMBERS = re.compile(
    rf"archive_format|archive_version|byteorder|\.data/version|\.data/serialization_id"
    rf"|models/{_NAME}\.json|data/weights/{_NAME}_weights_config\.json|data/weights/weight_\d+"
    rf"|data/constants/{_NAME}_constants_config\.json|data/constants/tensor_\d+"
    rf"|data/sample_inputs/{_NAME}\.pt|extra/[^\x00-\x1f]+")
_PT2_KNOWN_BAD = [
    ("data/aotinductor/", "AOTInductor native code (a shared library PyTorch loads)"),
    ("data/constants/opaque_obj_", "a Python object that PyTorch reads with pickle.loads"),
    ("data/constants/custom_obj_", "a TorchBind object"),
    ("data/weights/", "weights in the legacy pickled format"),
    ("data/constants/", "constants in the legacy pickled format"),
]
#: operators that reach outside the tensors (files, other processes)
_OUTSIDE_OPS = {"save", "from_file", "load_tensor", "rpc_async", "rpc_sync", "rpc_remote"}
_EXPORT_NAMESPACES = {"aten", "prims", "higher_order"}
_TARGET = re.compile(r"(_operator|math)\.\w+|torch\.(_?sym_\w+)|torch\.ops\.(\w+)\.(\w+)(\.\w+)?")


def check_export_archive(members: dict[str, bytes], path) -> None:
    """Raise unless the ``torch.export`` archive ``members`` (see :func:`read_archive`)
    passes every check listed in the module docstring."""
    for name in members:
        if not _PT2_MEMBERS.fullmatch(name):
            why = next((w for p, w in _PT2_KNOWN_BAD if name.startswith(p)),
                       "a member torch.export.save does not write")
            raise _refuse(path, f"it holds {why} ({one_line(name, 80)})")
    for member, value in (("archive_format", b"pt2"), ("archive_version", None)):
        if member not in members or value is not None and members[member] != value:
            raise _malformed(path, "torch.export archive", f"no {member} member"
                                                           + (f" holding {value!r}" if value else ""))
    models = [n for n in members if n.startswith("models/")]
    if not models:
        raise _malformed(path, "torch.export archive", "no models/*.json member")
    for name in models:
        model = name[len("models/"):-len(".json")]
        _check_program(_json(members, name, path), name, path)
        for cfg_name, folder in ((f"data/weights/{model}_weights_config.json", "data/weights/"),
                                 (f"data/constants/{model}_constants_config.json",
                                  "data/constants/")):
            if cfg_name in members:
                _check_payloads(_json(members, cfg_name, path), members, folder, path)
        sample = f"data/sample_inputs/{model}.pt"
        if members.get(sample):
            _check_pickle(members[sample], sample, path)


def _json(members, name, path):
    return parse_json(members[name], what=name,
                      error=lambda m: _malformed(path, "torch.export archive", m))


def _check_payloads(cfg, members, folder: str, path) -> None:
    entries = cfg.get("config") if isinstance(cfg, dict) else None
    if not isinstance(entries, dict):
        raise _malformed(path, "torch.export archive", f"{folder}: no payload config")
    for fqn, meta in entries.items():
        name = folder + str(meta.get("path_name") if isinstance(meta, dict) else "")
        if name not in members or not _PT2_MEMBERS.fullmatch(name):
            raise _malformed(path, "torch.export archive", f"{one_line(fqn, 60)} points to "
                                                           f"a missing member {one_line(name, 80)}")
        if meta.get("use_pickle"):
            _check_pickle(members[name], name, path)


def _check_program(program, name: str, path) -> None:
    if not isinstance(program, dict):
        raise _malformed(path, "torch.export archive", f"{name} is not a program")
    guards = program.get("guards_code") or []
    if not isinstance(guards, list):
        raise _malformed(path, "torch.export archive", f"{name}: guards_code is not a list")
    for guard in guards:
        _check_guard(guard, path)
    stack = [program]
    while stack:
        obj = stack.pop()
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) \
            if isinstance(obj, list) else ()
        for key, value in items:
            if isinstance(value, (dict, list)):
                stack.append(value)
            elif not isinstance(value, str):
                continue
            elif key == "expr_str":
                _check_expression(value, path)
            elif key in ("target", "as_operator"):  # the schema's two operator fields
                _check_target(value, path)
            elif key in ("in_spec", "out_spec") and ("__enum__" in value
                                                      or "defaultdict" in value):
                # pytree contexts: an enum or a defaultdict factory is imported by name
                raise _refuse(path, f"its program's {key} names a Python module to import "
                                    "(an enum or defaultdict in its input/output structure)")


def _check_target(target: str, path) -> None:
    m = _TARGET.fullmatch(target)
    if m is None:
        raise _refuse(path, f"its program calls {one_line(target, 80)!r}, which is not one of "
                            "PyTorch's own operators")
    ns, op = m.group(3), m.group(4)
    if ns is not None and (ns not in _EXPORT_NAMESPACES or op in _OUTSIDE_OPS):
        raise _refuse(path, f"its program calls the operator {ns}.{op}, "
                            + ("which reads or writes files or talks to other processes"
                               if op in _OUTSIDE_OPS else
                               "from outside PyTorch's own namespaces (aten, prims)"))


#: what a shape expression may call (sympy classes and torch's sympy functions)
_SYMPY_CALLS = frozenset("""Symbol Integer Float Rational Mul Add Pow Mod Max Min Abs floor
    ceiling Eq Ne Lt Le Gt Ge StrictLessThan LessThan StrictGreaterThan GreaterThan Equality
    Unequality And Or Not Piecewise ExprCondPair FloorDiv ModularIndexing Where PythonMod
    CleanDiv CeilToInt FloorToInt CeilDiv LShift RShift PowByNatural FloatPow FloatTrueDiv
    IntTrueDiv IsNonOverlappingAndDenseIndicator TruncToFloat TruncToInt RoundToInt
    RoundDecimal ToFloat Identity""".split())
_EXPR_NODES = (ast.Expression, ast.Call, ast.Name, ast.Load, ast.Constant, ast.keyword,
               ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Tuple, ast.operator,
               ast.unaryop, ast.cmpop, ast.boolop)
_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _check_expression(text: str, path) -> None:
    """A shape expression goes to ``sympy.sympify``, i.e. ``eval``: allow only calls of
    :data:`_SYMPY_CALLS` on numbers, plain names and name-like strings."""
    def bad(why):
        return _refuse(path, f"its program holds a shape expression, which PyTorch "
                             f"evaluates as Python, that is not plain arithmetic ({why}: "
                             f"{one_line(text, 80)!r})")

    for node in _expression_nodes(text, _EXPR_NODES, bad, "control characters or too long"):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                               and node.func.id in _SYMPY_CALLS):
            raise bad("a call of something other than a sympy class")
        if isinstance(node, ast.keyword) and node.arg is None:
            raise bad("**")
        if isinstance(node, ast.Name) and ("__" in node.id or not _PLAIN_NAME.fullmatch(node.id)):
            raise bad(f"the name {node.id}")
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, str) and ("__" in v or not (_PLAIN_NAME.fullmatch(v)
                                                         or _NUMBER.fullmatch(v))):
                raise bad("a string that is not a name or a number")
            if not isinstance(v, (str, int, float, bool, type(None))) or \
                    (isinstance(v, int) and abs(v) > 2 ** 63):
                raise bad("a constant that is not a small number")


def _expression_nodes(text, allowed: tuple, bad, not_text: str):
    """The nodes of ``text`` parsed as one Python expression, each of a type in
    ``allowed``; anything else raises ``bad(why)`` (``not_text`` for what is not one
    short line of text)."""
    if not isinstance(text, str) or len(text) > 10_000 or re.search(r"[\x00-\x1f\x7f]", text):
        raise bad(not_text)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise bad("not an expression") from None
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise bad(type(node).__name__)
        yield node


#: what a guard may name: the inputs (``L[...]``), their sizes, and arithmetic helpers
_GUARD_NAMES = {"L", "inf", "math", "torch", "min", "max", "abs", "int", "float", "bool", "round",
                "IsNonOverlappingAndDenseIndicator", "cast_symbool_to_symint_guardless"}
_GUARD_TENSOR_ATTRS = {"size", "stride", "storage_offset", "dim", "numel"}
_GUARD_MATH = {"floor", "ceil", "trunc", "sqrt", "log2", "isfinite", "isnan", "inf", "pow"}
_GUARD_NODES = _EXPR_NODES + (ast.Attribute, ast.Subscript, ast.IfExp)


def _check_guard(text, path) -> None:
    """Guards (``guards_code``) are Python source that ``ExportedProgram.module()``
    compiles with ``exec`` and runs on every call: allow only comparisons and
    arithmetic on the inputs' sizes and strides."""
    def bad(why):
        return _refuse(path, f"its program holds a guard, which PyTorch compiles and runs as "
                             f"Python, that is not a check of input sizes ({why}: "
                             f"{one_line(text, 80)!r})")

    for node in _expression_nodes(text, _GUARD_NODES, bad, "not one line of text"):
        if isinstance(node, ast.Name) and node.id not in _GUARD_NAMES:
            raise bad(f"the name {node.id}")
        if isinstance(node, ast.keyword):
            raise bad("a keyword argument")
        if isinstance(node, ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            ok = (node.attr in _GUARD_MATH if owner == "math" else
                  node.attr.startswith("sym_") if owner == "torch" else
                  owner is None and node.attr in _GUARD_TENSOR_ATTRS)
            if not ok or "__" in node.attr:
                raise bad(f"the attribute {node.attr}")
        if isinstance(node, ast.Subscript) and not (
                isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, (str, int))):
            raise bad("an index that is not a name or a number")
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, str) and ("__" in v or not _PLAIN_NAME.fullmatch(v)):
                raise bad("a string that is not a name")
            if not isinstance(v, (str, int, float, bool)):
                raise bad("a constant that is not a number")


# ------------------------------------------------------------------ TorchScript
_TS_NAMESPACES = {"aten", "prim", "prims", "quantized", "_quantized"}


def check_torchscript_archive(members: dict[str, bytes], path) -> None:
    """Raise unless the TorchScript code in ``members`` only names PyTorch's own tensor
    operators and classes (see the module docstring)."""
    code = [n for n in members if n.endswith(".py")]  # the importer reads code/**.py
    if not any(n.startswith("code/") for n in code) or "data.pkl" not in members \
            or "constants.pkl" not in members:
        raise _malformed(path, "TorchScript archive", "no code/, data.pkl or constants.pkl")
    for name in code:
        try:
            text = members[name].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _malformed(path, "TorchScript archive", f"{name}: {exc}") from None
        words = "|".join(sorted(_OUTSIDE_OPS))
        m = re.search(rf"\b({words})\b", text)
        if m:
            raise _refuse(path, f"its TorchScript code ({one_line(name, 80)}) calls "
                                f"{m.group(1)}, an operator that reads or writes files or "
                                "talks to other processes")
        for kind, pattern, allowed in (("operator", r"\bops\s*\.\s*(\w+)", _TS_NAMESPACES),
                                       ("class", r"\bclasses\s*\.\s*(\w+)", {"quantized"})):
            for m in re.finditer(pattern, text):
                if m.group(1) not in allowed:
                    raise _refuse(path, f"its TorchScript code ({one_line(name, 80)}) uses "
                                        f"the {kind} namespace {m.group(1)!r}, outside "
                                        "PyTorch's own (aten, prim)")


# ------------------------------------------------------------------ safetensors
#: Bytes per element of each safetensors dtype arcnb reads (those PyTorch has).
SAFETENSORS_DTYPES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
                      "F8_E4M3FNUZ": 1, "F8_E5M2FNUZ": 1, "I16": 2, "U16": 2, "F16": 2,
                      "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
                      "C64": 8}
#: Longest safetensors header arcnb reads (16 MiB: about a hundred thousand tensors; a
#: model's header is a few kilobytes to a few megabytes).
MAX_SAFETENSORS_HEADER = 16 * 1024 ** 2
#: Most dimensions a safetensors tensor may have.
MAX_SAFETENSORS_RANK = 32
_SAFETENSORS = "safetensors file"


def check_safetensors_header(path) -> tuple[dict, dict]:
    """``(tensors, metadata)`` of the safetensors file ``path``, read from its header
    alone (no tensor is read): ``tensors`` maps each name to ``{"dtype", "shape",
    "data_offsets"}``, ``metadata`` is the header's ``__metadata__`` (text to text).
    Raises a one-line :class:`~arcnb.errors.ArcnbError` unless the header passes every
    check listed in the module docstring."""
    def bad(why):
        return _malformed(path, _SAFETENSORS, why)

    try:
        size = os.stat(path).st_size
        with open(path, "rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise bad(f"{size} bytes, shorter than the 8-byte header length")
            n = int.from_bytes(head, "little")
            if n > MAX_SAFETENSORS_HEADER:
                raise bad(f"its header length is {fmt_count(n, thousands=True)} bytes, more than the "
                          f"{fmt_count(MAX_SAFETENSORS_HEADER, thousands=True)} arcnb reads")
            if 8 + n > size:
                raise bad(f"its header length is {fmt_count(n, thousands=True)} bytes, but the file holds only "
                          f"{fmt_count(size - 8, thousands=True)} bytes after it")
            raw = fh.read(n)
    except OSError as exc:
        raise bad(f"{type(exc).__name__}: {exc.strerror or exc}") from None
    if len(raw) != n:
        raise bad("the file changed while its header was read")

    # io's parse (UTF-8, bounded, a tensor named twice refused), in the words of this file
    header = parse_json(raw, what="its header", invalid="is not JSON",
                        duplicate=" (a tensor named twice)", error=bad)
    if not isinstance(header, dict):
        raise bad(f"its header is a JSON {type(header).__name__}, not an object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in metadata.items()):
        raise bad("its __metadata__ is not an object of text values")
    data_size = size - 8 - n
    spans = []
    for name, info in header.items():
        where = f"tensor {one_line(name, 60)!r}"
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise bad(f"{where} is not an object of dtype, shape and data_offsets")
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str) or dtype not in SAFETENSORS_DTYPES:
            raise bad(f"{where} has the dtype {one_line(repr(dtype), 40)}, not one of "
                      f"{', '.join(SAFETENSORS_DTYPES)}")
        if not isinstance(shape, list) or len(shape) > MAX_SAFETENSORS_RANK or not all(
                type(d) is int and d >= 0 for d in shape):
            raise bad(f"{where} has the shape {one_line(repr(shape), 60)}, not a list of at "
                      f"most {MAX_SAFETENSORS_RANK} whole numbers >= 0")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1]):
            raise bad(f"{where} has the data_offsets {one_line(repr(offsets), 60)}, not "
                      "[begin, end] with 0 <= begin <= end")
        begin, end = offsets
        if end > data_size:
            raise bad(f"{where} ends at byte {fmt_count(end, thousands=True)} of the data, past the end of the file "
                      f"({fmt_count(data_size, thousands=True)} bytes of data)")
        count = 1
        for d in shape:
            count *= d
        if count * SAFETENSORS_DTYPES[dtype] != end - begin:
            raise bad(f"{where}: its shape {shape} of {dtype} needs "
                      f"{fmt_count(count * SAFETENSORS_DTYPES[dtype], thousands=True)} bytes, its data_offsets hold "
                      f"{fmt_count(end - begin, thousands=True)}")
        spans.append((begin, end, name))
    spans.sort()
    reached, last = 0, None
    for begin, end, name in spans:
        if begin < reached:
            raise bad(f"tensors {one_line(last, 60)!r} and {one_line(name, 60)!r} overlap "
                      f"(bytes {fmt_count(begin, thousands=True)} to "
                      f"{fmt_count(reached, thousands=True)})")
        if begin > reached:
            raise bad(f"bytes {fmt_count(reached, thousands=True)} to "
                      f"{fmt_count(begin, thousands=True)} of the data belong to no tensor")
        reached, last = max(reached, end), name
    if reached != data_size:
        raise bad(f"bytes {fmt_count(reached, thousands=True)} to "
                  f"{fmt_count(data_size, thousands=True)} of the data belong to no tensor")
    return header, metadata


def load_checked(path: Path, fmt: str, trust: bool):
    """Load a TorchScript (``fmt="torchscript"``) or torch.export (``"export"``)
    archive: checked and re-packed without trust, as is with it. Any failure of
    PyTorch's loader is one :class:`ArcnbError` line."""
    import torch

    kind = "TorchScript archive" if fmt == "torchscript" else "torch.export archive"
    source = str(path)
    if not trust:
        top, members = read_archive(path, kind)
        (check_torchscript_archive if fmt == "torchscript" else check_export_archive)(
            members, path)
        source = io.BytesIO(repack(top, members))
    try:
        with quiet_torch():
            if fmt == "torchscript":
                return torch.jit.load(source, map_location="cpu")
            return torch.export.load(source)
    except Exception as exc:  # noqa: BLE001 - any failure of PyTorch's own loader
        raise _malformed(path, kind, f"{type(exc).__name__}: {_first_line(exc)}") from None


def _first_line(exc) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0].split("  (Could this error message be improved?")[0] if lines else ""
