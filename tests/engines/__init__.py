"""The tests of the engines, one folder per engine (``sglang/``, ``vllm/``), as in ``logparse/engines/``.

A package (with ``sglang/`` and ``vllm/``) so that two test files of one name, one per engine
(``sglang/test_variants.py``, ``vllm/test_variants.py``), are two modules under pytest's default
import mode: ``engines.sglang.test_variants`` and ``engines.vllm.test_variants``.  The folders are not
top-level packages themselves: a test package named ``vllm`` or ``sglang`` would stand for the real one.
"""
