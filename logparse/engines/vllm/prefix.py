"""vLLM's line prefix: the one definition every stage builds its regexps from.

A vLLM record is, by era (catalogue §1)::

    INFO 06-11 10:04:31 gpu_executor.py:83] # GPU blocks: 27718, # CPU blocks: 2048        0.4.0 - 0.7.3
    INFO 03-19 10:04:31 [kv_cache_utils.py:537] GPU KV cache size: 447,088 tokens           0.8.0 - 0.30.0
    (EngineCore pid=4242) INFO 10-05 10:04:31 [gpu_worker.py:692] Available KV cache ...    0.31.0+ (tag in the format)

In front of it, before 0.31.0, a stdout/stderr wrapper of each child process glues a process tag
``(Name pid=N) `` (``VllmWorkerProcess``, ``VllmWorker rank=R``, ``VllmWorker TP1``, ``Worker_TP1``,
``EngineCore_DP0``, ``APIServer`` ...), also on the process's foreign output (uvicorn, tracebacks);
Ray prefixes ``(ActorName pid=N, ip=A.B.C.D) `` (both may be present, Ray's first); torch puts
``[rank0]: `` in front of the traceback lines of a rank.  The stamp has no year and, in vLLM's own
formatter, no milliseconds; NVIDIA's NIM images (vLLM 0.4.x inside) configure logging with them
(``INFO 07-23 22:28:20.644 gpu_executor.py:119] ``), so three decimals after the seconds are read too; the level is Python's level name; ``file.py`` is the bare file name, or a short path
with ``VLLM_LOGGING_LEVEL=DEBUG`` (``v1/worker/gpu_worker.py``, ``model_executor/.../fp8_utils.py``).
A message that spans several physical lines repeats the whole prefix on each (``\\r\\n`` between
them); the first and last lines of the 0.15+ version logo are the prefix alone.

**Authority.**  The grammar (``grammars/vllm/line.lark``, terminals ``PROC_TAG``,
``RANK_PREFIX`` and ``VLOG``) is the documented definition; :data:`PROC_TAG`, :data:`RANK_PREFIX`
and :data:`LOG_PREFIX` below are the same terminals written as Python regexps, and
``tests/engines/vllm/test_prefix.py`` fails when they differ by one character.  They sit at the bottom
(no imports) because the sources stage needs them too: Ray's actor prefix looks like a vLLM process
tag, and :mod:`logparse.sources.formats.ray` must leave vLLM's own tags to the grammar.

The patterns are plain strings (no look-around), so that polars could run them as well; named
groups: ``name``, ``pid``, ``ip`` (a tag), ``rank`` (torch's rank prefix), ``level``, ``stamp``,
``loc``/``bare_loc`` (the log prefix: bracketed 0.8.0+, bare with a lone ``]`` before).
"""

from __future__ import annotations

import re

#: One process tag: ``(Worker_TP1 pid=77) ``, ``(VllmWorker rank=1 pid=77) ``, ``(VllmWorker TP1 pid=77) ``,
#: Ray's ``(RayWorkerWrapper pid=77, ip=10.0.0.2) `` and ``(pid=77) ``.
PROC_TAG = r"\((?:(?P<name>[A-Za-z_][\w.-]*(?: rank=[0-9]+| [A-Z]+[0-9]+(?:_[A-Z]+[0-9]+)*)?) )?pid=(?P<pid>[0-9]+)(?:, ip=(?P<ip>[^\s)]+))?\)(?: |$)"
#: torch's prefix on the lines a rank prints to stderr (tracebacks): ``[rank0]: ``.
RANK_PREFIX = r"\[rank(?P<rank>[0-9]+)\]:(?: |$)"
#: vLLM's own logging prefix: ``LEVEL MM-DD HH:MM:SS [file.py:N] `` (0.8.0+) or ``LEVEL MM-DD HH:MM:SS file.py:N] ``
#: (0.4.0 - 0.7.3); NIM's images add milliseconds to the stamp (``HH:MM:SS.mmm``).  The space after ``]`` is missing on a line that holds the prefix alone.
LOG_PREFIX = (
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<stamp>[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{3})?) "
    r"(?:\[(?P<loc>[\w./-]+\.py:[0-9]+)\]|(?P<bare_loc>[\w./-]+\.py:[0-9]+)\])(?: |$)"
)

PROC_TAG_RE = re.compile(PROC_TAG)
RANK_PREFIX_RE = re.compile(RANK_PREFIX)
LOG_PREFIX_RE = re.compile(LOG_PREFIX)
#: Where a log prefix may begin inside a line (text glued in front: ``VLLM_LOGGING_PREFIX``, a paste).
LOG_PREFIX_SEARCH_RE = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9](?:\.[0-9]{3})? \[?[\w./-]+\.py:[0-9]+\]"
)

#: Process names vLLM itself puts in a tag (not Ray's actors): the sources stage leaves these alone.
VLLM_PROCESS_NAME = (
    r"(?:VllmWorkerProcess|VllmWorker(?: rank=[0-9]+| [A-Z]+[0-9]+(?:_[A-Z]+[0-9]+)*|-[0-9]+)?|Worker(?:_[A-Z]+[0-9]+)*|"
    r"EngineCore(?:_DP)?(?:_?[0-9]+)?|APIServer(?:_DP[0-9]+)?|ApiServer_[0-9]+|MainProcess|DPSupervisor)"
)
VLLM_PROCESS_NAME_RE = re.compile(VLLM_PROCESS_NAME + r"\Z")
#: Ray's actor classes that run vLLM workers (their tags are Ray's, peeled by the sources stage).
RAY_ACTORS = ("RayWorkerVllm", "RayWorkerWrapper", "RayWorkerProc")


def is_vllm_process_name(name: str | None) -> bool:
    """Is ``name`` (the part of a tag before ``pid=``) one vLLM itself gives a process?"""
    return bool(name) and VLLM_PROCESS_NAME_RE.match(name) is not None  # type: ignore[arg-type]


def split_head(text: str) -> tuple[list[tuple[str | None, int, str | None]], int | None, re.Match | None, int]:
    """The layers vLLM and its neighbours put in front of a message, in order.

    Returns ``(tags, rank, log_prefix_match, end)``: the process tags ``(name, pid, ip)``, torch's
    ``[rankN]:`` rank, the log prefix's match (None without one) and where the message starts."""
    pos = 0
    tags: list[tuple[str | None, int, str | None]] = []
    rank = None
    while True:
        m = PROC_TAG_RE.match(text, pos)
        if m is None:
            break
        tags.append((m.group("name"), int(m.group("pid")), m.group("ip")))
        pos = m.end()
    m = RANK_PREFIX_RE.match(text, pos)
    if m is not None:
        rank = int(m.group("rank"))
        pos = m.end()
    lp = LOG_PREFIX_RE.match(text, pos)
    if lp is not None:
        pos = lp.end()
    return tags, rank, lp, pos


#: The first words of the vLLM messages that say whose they are on their own, without vLLM's prefix (a
#: paste of the messages alone, from a notebook or a trimmed log): start-anchored, so a line that only
#: mentions one of them somewhere is not taken.  Each is the start of a line the vLLM grammar reads
#: (catalogue §2); ``weak`` ones are generic enough to join a vLLM launch but are no evidence on their own.
#: The runtime lines' starts are their spec's (``grammars/vllm/runtime.toml``, read a stage above this
#: one): :func:`bare_message` takes them.
BARE_MESSAGE_STARTS = (
    r"Loading model weights took ",
    r"Model loading took ",
    r"Loading weights took ",
    r"Memory profiling (?:results: |takes )",
    r"the current vLLM instance can use ",
    r"model weights take ",
    r"Available KV cache memory: ",
    r"# (?:GPU|CUDA|cuda|TPU|HPU|XPU|CPU) blocks: ",
    r"Maximum concurrency for ",
    r"(?:GPU|GPU \+ host|XPU|CPU|TPU|HPU) KV cache size: ",
    r"Graph capturing finished in ",
    r"Estimated CUDA graph memory: ",
    r"CUDA graph pool memory: ",
    r"CUDA graph memory profiling is ",
    r"Profiling CUDA graph memory: ",
    r"init engine \(profile",
    r"Initializing an? (?:V[01] )?LLM engine \(v",
    r"vLLM (?:API |batch processing API |gRPC )?(?:server )?version ",
    r"non-default args: ",
    r"args: Namespace\(",
    r"Free memory on device ",
    r"Starting vLLM (?:API )?server ",
    r"Overriding num_gpu_blocks=",
    r"(?:Engine [0-9]{3}: )?vllm cache_config_info ",
    r"Exception in worker [^\s]+ while processing method ",
    r"Started engine process with PID ",
    r"Starting to load model ",
    r"Using max model len ",
    r"Chunked prefill is enabled with ",
    r"Capturing cudagraphs for decoding",
    r"Capturing the model for CUDA graphs",
    r"CUDA graphs can take additional ",
    r"torch\.compile t(?:akes|ook) ",
    r"Dynamo bytecode transform time: ",
    r"Compiling a graph for ",
    r"Initial profiling/warmup run took ",
    r"Initial free memory:? [0-9]",
    r"Free memory after profiling: ",
    r"Reserving [0-9.]+ GiB of GPU memory for frontend multimodal ",
    r"Applying persisted startup plan ",
    r"Startup plan not applied",
    r"Weights are held outside this process",
    r"Add [0-9]+ padding layers",
    r"Auto-fit max_model_len: ",
    r"Hybrid KV cache manager is disabled",
    r"rank [0-9]+ in world size [0-9]+ is assigned as ",
    r"Sequence group [^\s]+ is preempted by ",
    r"Multiplying the GPU KV cache size by ",
    r"In v0\.[0-9]+, CUDA graph memory profiling ",
    r"Failed to load model - ",
    r"Engine core initialization failed",
    r"EngineCore failed to start",
    r"[█▄▀][█▄▀ ]* (?:version|model) ",  # the version logo's lines that name them (0.15+)
    r"Cleared [0-9.]+ GiB of cached CUDA allocator memory ",  # patched builds (spark-vllm-docker)
    r"Freed [0-9.]+ GiB before KV cache sizing",
)
WEAK_BARE_MESSAGE_STARTS = (r"Available routes are:", r"Route: ", r"Using V2 Model Runner")


def bare_message(runtime_starts: tuple[str, ...]) -> str:
    """The regexp of a bare vLLM message at the start of a text (group ``weak`` set for a weak one):
    :data:`BARE_MESSAGE_STARTS`, and ``runtime_starts``, where its runtime lines start
    (:func:`logparse.grammar.runtime_decoder.family_starts`)."""
    strong = "|".join(BARE_MESSAGE_STARTS + runtime_starts)
    return r"[ \t]*(?:(?:" + strong + r")|(?P<weak>" + "|".join(WEAK_BARE_MESSAGE_STARTS) + "))"
