"""The tests of vLLM's own code (``logparse/engines/vllm/``), one file per module it tests."""
