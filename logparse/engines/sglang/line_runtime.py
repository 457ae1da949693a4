"""SGLang's runtime lines, for the line transformer (:mod:`logparse.engines.sglang.line`).

The builders of the batch statistics a running server prints (``Decode batch``, ``Prefill batch``,
the 0.1.x wordings) and of its retractions.  Each returns ``(kind, fields, form)``; a batch line's
values are read by :func:`~logparse.engines.sglang.line_values.batch_value`.
"""

from __future__ import annotations

from typing import Any

from lark import Token

from logparse.engines.sglang.line_values import batch_value, field_name, first_int, number


class RuntimeLines:
    """The builders of the runtime lines (a mixin of :class:`~logparse.engines.sglang.line.LineTransformer`)."""

    # ---- runtime
    def b_item(self, c):
        return (str(c[0]).strip(), str(c[1]).strip())

    def b_sub(self, c):
        k, _, v = str(c[0]).partition("=")
        return (k, v)

    def bitems(self, c):
        return [v for v in c if isinstance(v, tuple)]

    def _batch(self, kind, c):
        f: dict[str, Any] = {}
        form_bits = []
        last_key = None
        for v in c:
            if isinstance(v, Token):
                if v.type == "BATCH_ITER":
                    f["iteration"] = number(str(v).strip()[1:-1])
                elif v.type == "BATCH_SEP":
                    form_bits.append("dot" if str(v).startswith(".") else "comma")
                elif v.type == "MIXED":
                    f["mixed_running_req"] = first_int(str(v))
                elif v.type == "RETRACT_HEAD":
                    form_bits.append("kv_full" if "KV cache pool" in str(v) else "decode_oom")
            elif isinstance(v, list):
                for key, raw in v:
                    if "=" not in key and raw.startswith(("full=", "swa=")):
                        # 0.4.9 SWA allocator: "#token: full=N, swa=M"
                        sub, _, num = raw.partition("=")
                        f[f"{field_name(key)}_{sub}"] = batch_value(num)
                        last_key = field_name(key)
                    elif key in ("full", "swa") and last_key:
                        f[f"{last_key}_{key}"] = batch_value(raw)
                    else:
                        last_key = field_name(key)
                        f[last_key] = batch_value(raw)
        return (kind, f, "_".join(form_bits) or None)

    def decode_batch(self, c):
        return self._batch("decode_batch", c)

    def prefill_batch(self, c):
        return self._batch("prefill_batch", c)

    def decode_batch_v01(self, c):
        # 0.1.3-0.1.16: "#running-req: 1, #token: 25, token usage: 0.00, #queue-req: 0"; the grammar
        # read the first label (its value is c[0]): the field by its name, not by the label again
        kind, f, _ = self._batch("decode_batch", [[("running_req", str(c[0]))], c[1]])
        return (kind, f, "v01")

    def prefill_batch_v01(self, c):
        # 0.1.3-0.1.16: "new fill batch. #seq: 1. #cached_token: 0. ... #running_req: 0[. tree_cache_hit_rate: 0.00%.]"
        f: dict[str, Any] = {}
        for part in str(c[0]).rstrip(".").split(". "):
            key, sep, value = part.partition(": ")
            if sep:
                f[field_name(key)] = batch_value(value)
        return ("prefill_batch", f, "v01")

    def retract(self, c):
        kind, f, form = self._batch("retract", c)
        ratio = f.pop("new_token_ratio", None)
        if isinstance(ratio, str) and "->" in ratio:
            a, _, b = ratio.partition("->")
            f["new_token_ratio_from"] = batch_value(a.strip())
            f["new_token_ratio_to"] = batch_value(b.strip())
        return (kind, f, form)

    def retract_abort(self, c):
        return ("retract", {"aborted": str(c[0])}, "abort")

    def retract_failed(self, c):
        return ("retract", {}, "failed")

    def decode_oom(self, c):
        return ("retract", {}, "decode_oom_error")
