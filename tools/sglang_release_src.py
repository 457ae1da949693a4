"""Read facts from SGLang's own release wheels with ``ast`` (never importing them).

Shared by ``tools/build_version_data.py`` and ``tools/build_server_args_defaults.py``.
The wheels are downloaded outside the repository, e.g.::

    mkdir -p /work/scratch/sglang-releases/dl && cd /work/scratch/sglang-releases/dl
    pip download --no-deps --only-binary=:all: sglang==0.1.26 -d .     # one per release

Every release from 0.1.3 to 0.5.23 on PyPI ships a wheel: pure Python
(``sglang-<version>-py3-none-any.whl``) up to 0.5.10.post1, a CPython 3.11 manylinux wheel
from 0.5.11 on; either is read as a zip, nothing is installed.

``ServerArgs`` comes in two shapes:

* 0.1.3-0.5.19: a ``@dataclasses.dataclass`` in ``sglang/srt/server_args.py``; its fields
  are the annotated statements of the class body (``ClassVar`` excluded), in order.
* 0.5.20-0.5.23: ``msgspec.defstruct`` assembled from the namespace classes listed in
  ``_INPUT_NAMESPACES`` (``sglang/srt/arg_groups/fields/*.py``), followed by the annotated
  statements of ``ServerArgs``'s own class body.

A field's default is

* ``("value", v)`` - the declared default is a literal (``ast.literal_eval``; also
  ``field(default=<literal>)``, ``field(default_factory=list|dict|set|tuple)``,
  ``default_factory=lambda: <literal>``, and a module-level literal constant by name);
* ``("derived", None)`` - computed at runtime: the declared default is not a literal
  (a call, an attribute, an environment lookup), or it is ``None`` and SGLang's
  argument-resolution code fills the field in (an assignment ``self.f = ...`` in a
  ``ServerArgs`` method - ``__post_init__`` and the methods it calls -, ``server_args.f = ...``
  or ``args.f = ...`` in ``server_args.py`` / ``arg_groups/``, ``setattr(self, "f", ...)``,
  a keyword of ``declare_resolution(...)``, or ``Arg(resolvable=True)`` / ``Arg(fallback=...)``);
* ``("required", None)`` - no default (``model_path``).
"""

from __future__ import annotations

import ast
import re
import zipfile
from pathlib import Path
from typing import Any

from logparse.engines.sglang.versions import release_key

SERVER_ARGS = "sglang/srt/server_args.py"
ARG_GROUPS = "sglang/srt/arg_groups/"
FIELDS_DIR = "sglang/srt/arg_groups/fields/"
_WHEEL_RE = re.compile(r"^sglang-([0-9][0-9a-z.]*)-[^-]+-[^-]+-[^-]+\.whl$")


def wheels(folder: str | Path) -> dict[str, Path]:
    """``{release: wheel path}`` of the sglang wheels in ``folder``, oldest first."""
    found = {}
    for p in Path(folder).iterdir():
        m = _WHEEL_RE.match(p.name)
        if m:
            found[m.group(1)] = p
    return dict(sorted(found.items(), key=lambda kv: release_key(kv[0])))


class Unreadable(Exception):
    """The release's ServerArgs could not be read (missing file, syntax the parser rejects)."""


# --------------------------------------------------------------------------- literals

_MISSING = object()


def _literal(node: ast.AST | None, constants: dict[str, Any]) -> Any:
    """The value of a literal expression, or ``_MISSING``."""
    if node is None:
        return _MISSING
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments (used by name as defaults)."""
    out: dict[str, Any] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            v = _literal(stmt.value, out)
            if v is not _MISSING:
                out[stmt.targets[0].id] = v
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            v = _literal(stmt.value, out)
            if v is not _MISSING:
                out[stmt.target.id] = v
    return out


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


_FACTORIES = {"list": [], "dict": {}, "set": [], "tuple": [], "frozenset": []}


def _declared_default(value: ast.AST | None, constants: dict[str, Any]) -> tuple[str, Any]:
    """("value", v) | ("computed", None) | ("required", None) for a field's right-hand side."""
    if value is None:
        return ("required", None)
    if isinstance(value, ast.Call) and _call_name(value) in ("field",):
        kw = {k.arg: k.value for k in value.keywords if k.arg}
        if "default" in kw:
            return _declared_default(kw["default"], constants)
        if "default_factory" in kw:
            fac = kw["default_factory"]
            if isinstance(fac, ast.Name) and fac.id in _FACTORIES:
                return ("value", _FACTORIES[fac.id])
            if isinstance(fac, ast.Lambda):
                v = _literal(fac.body, constants)
                if v is not _MISSING:
                    return ("value", v)
            return ("computed", None)
        return ("required", None)
    v = _literal(value, constants)
    if v is _MISSING:
        return ("computed", None)
    return ("value", v)


def _annotation_is_classvar(ann: ast.AST) -> bool:
    return "ClassVar" in ast.unparse(ann)


def _arg_flags(ann: ast.AST) -> tuple[bool, bool]:
    """(resolvable, has_fallback) from ``A[T, Arg(...)]`` metadata in an annotation."""
    resolvable = fallback = False
    for node in ast.walk(ann):
        if isinstance(node, ast.Call) and _call_name(node) == "Arg":
            for k in node.keywords:
                if k.arg == "resolvable" and isinstance(k.value, ast.Constant) and k.value.value is True:
                    resolvable = True
                if k.arg == "fallback" and not (isinstance(k.value, ast.Constant) and k.value.value is None):
                    fallback = True
    return resolvable, fallback


def _class_fields(cls: ast.ClassDef, constants: dict[str, Any]) -> list[tuple[str, tuple[str, Any], bool]]:
    """(name, declared default, resolvable-or-fallback) of each annotated field of a class body."""
    out = []
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if _annotation_is_classvar(stmt.annotation):
                continue
            resolvable, fallback = _arg_flags(stmt.annotation)
            out.append((stmt.target.id, _declared_default(stmt.value, constants), resolvable or fallback))
    return out


# --------------------------------------------------------------------------- runtime assignments

_ARG_OBJECTS = {"server_args", "args"}


def _assigned_fields(tree: ast.AST, in_server_args_class: bool) -> set[str]:
    """Fields that resolution code assigns: ``self.f =`` (inside ServerArgs), ``server_args.f =``,
    ``args.f =``, ``setattr(self|server_args|args, "f", ...)``, ``declare_resolution(..., f=...)``."""
    out: set[str] = set()
    owners = set(_ARG_OBJECTS) | ({"self"} if in_server_args_class else set())
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in owners:
                    out.add(sub.attr)
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if (
                name == "setattr"
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in owners
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                out.add(node.args[1].value)
            if name == "declare_resolution":
                out.update(k.arg for k in node.keywords if k.arg)
    return out


# --------------------------------------------------------------------------- ServerArgs of a release


def _parse(z: zipfile.ZipFile, name: str) -> ast.Module:
    try:
        return ast.parse(z.read(name))
    except KeyError:
        raise Unreadable(f"{name} not in the wheel") from None
    except SyntaxError as exc:
        raise Unreadable(f"{name}: {exc.msg} (line {exc.lineno})") from None


def read_server_args(wheel: str | Path) -> dict[str, Any]:
    """``{"fields": [names in printed order], "defaults": {name: (kind, value)}, "shape": ...}``.

    ``kind`` is ``value``, ``derived`` or ``required`` (see the module doc).
    """
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        tree = _parse(z, SERVER_ARGS)
        constants = _module_constants(tree)
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs"), None)
        if cls is None:
            raise Unreadable("no class ServerArgs in server_args.py")
        assigned = _assigned_fields(cls, in_server_args_class=True)
        assigned |= _assigned_fields(tree, in_server_args_class=False)
        for n in sorted(names):
            if n.startswith(ARG_GROUPS) and n.endswith(".py"):
                assigned |= _assigned_fields(_parse(z, n), in_server_args_class=False)
        namespaces = _input_namespaces(tree)
        fields: list[tuple[str, tuple[str, Any], bool]] = []
        shape = "dataclass"
        if namespaces is not None:
            shape = "namespaces"
            classes: dict[str, tuple[ast.ClassDef, dict[str, Any]]] = {}
            for n in sorted(names):
                if n.startswith(FIELDS_DIR) and n.endswith(".py"):
                    ftree = _parse(z, n)
                    fconst = _module_constants(ftree)
                    for node in ftree.body:
                        if isinstance(node, ast.ClassDef):
                            classes[node.name] = (node, fconst)
            for ns in namespaces:
                if ns not in classes:
                    raise Unreadable(f"namespace class {ns} not found under {FIELDS_DIR}")
                node, fconst = classes[ns]
                fields.extend(_class_fields(node, fconst))
            order = _positional_order(z, names)
            known = [f for f in order if any(f == x[0] for x in fields)]
            by_name = {x[0]: x for x in fields}
            rest = [x[0] for x in fields if x[0] not in set(order)]
            fields = [by_name[f] for f in known + rest]
        own = _class_fields(cls, constants)
        seen = {f[0] for f in fields}
        fields.extend(f for f in own if f[0] not in seen)
    defaults: dict[str, tuple[str, Any]] = {}
    for name, (kind, value), resolvable in fields:
        if kind == "computed" or (kind == "value" and value is None and (resolvable or name in assigned)):
            defaults[name] = ("derived", None)
        else:
            defaults[name] = (kind, value)
    return {"fields": [f[0] for f in fields], "defaults": defaults, "shape": shape}


def _input_namespaces(tree: ast.Module) -> list[str] | None:
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == "_INPUT_NAMESPACES"
            and isinstance(stmt.value, (ast.List, ast.Tuple))
        ):
            return [e.id for e in stmt.value.elts if isinstance(e, ast.Name)]
    return None


def _positional_order(z: zipfile.ZipFile, names: set[str]) -> list[str]:
    path = ARG_GROUPS + "field_order.py"
    if path not in names:
        return []
    tree = _parse(z, path)
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(stmt, ast.AnnAssign):
            target = stmt.target
        if isinstance(target, ast.Name) and target.id == "POSITIONAL_FIELD_ORDER":
            v = _literal(stmt.value, {})
            if v is not _MISSING:
                return list(v)
    return []


def json_value(value: Any) -> Any:
    """A default as JSON: tuples and sets become lists (sets sorted), other literals as they are."""
    if isinstance(value, (tuple, list)):
        return [json_value(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((json_value(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, complex):
        return str(value)
    return value
