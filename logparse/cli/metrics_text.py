"""The Prometheus text exposition format 0.0.4 of :class:`logparse.reports.metrics.Metrics`, written
by prometheus_client (the Python client Prometheus maintains).

:class:`StoreCollector` hands the metrics to prometheus_client as custom metric families
(``GaugeMetricFamily``, ``CounterMetricFamily``, ``InfoMetricFamily``); prometheus_client writes
HELP and TYPE lines for every family, escapes label values and writes no sample timestamps
(node_exporter's textfile collector refuses them).  :func:`write_textfile` is its
``write_to_textfile``: a temporary file beside the target, then a rename, so the collector never
reads a file half-written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.exposition import generate_latest, write_to_textfile
from prometheus_client.registry import CollectorRegistry

from logparse.reports.metrics import SERIES_LABELS, Family, Metrics, Sample

_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(v: str) -> str:
    """A label value prometheus_client can encode: a lone surrogate (an undecodable byte of a log) becomes U+FFFD."""
    return v if v.isascii() else _SURROGATE.sub("\ufffd", v)


def _family(fam: Family, samples: list[Sample]) -> Metric:
    names = list(SERIES_LABELS)
    if fam.kind == "info":
        info = InfoMetricFamily(fam.name.removesuffix("_info"), fam.help, labels=names)
        for s in samples:
            rest = {k: _text(v) for k, v in s.labels.items() if k not in SERIES_LABELS}
            info.add_metric([_text(s.labels[k]) for k in names], rest)
        return info
    metric: CounterMetricFamily | GaugeMetricFamily
    if fam.kind == "counter":
        metric = CounterMetricFamily(fam.name.removesuffix("_total"), fam.help, labels=names)
    else:
        metric = GaugeMetricFamily(fam.name, fam.help, labels=names)
    for s in samples:
        metric.add_metric([_text(s.labels[k]) for k in names], s.value)
    return metric


class StoreCollector:
    """A prometheus_client collector of fixed metrics (one scrape: the store as it was read)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        for fam, samples in self.metrics.families:
            yield _family(fam, samples)


def registry(m: Metrics) -> CollectorRegistry:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(StoreCollector(m))
    return reg


def exposition(m: Metrics) -> str:
    return generate_latest(registry(m)).decode("utf-8")


def write_textfile(path: str | os.PathLike, m: Metrics) -> None:
    """Write the metrics to ``path`` through a temporary file in the same folder and a rename; readable by
    every user whatever the umask (node_exporter runs as a user of its own)."""
    write_to_textfile(os.fspath(path), registry(m))
    os.chmod(path, 0o644)
