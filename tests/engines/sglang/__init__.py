"""The tests of SGLang's own code (``logparse/engines/sglang/``): each file is named after the module it tests
(``test_variants.py``: ``variants.py``), or after the logs it reads (``test_samples.py``)."""
