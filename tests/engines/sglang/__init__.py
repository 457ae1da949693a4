"""The tests of SGLang's own code (``logparse/engines/sglang/``), one file per module it tests."""
