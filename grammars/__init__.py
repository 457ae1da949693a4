"""The lark grammars of logparse, at the top of the repository as the design card has them.

``grammars/sglang/line.lark`` and ``grammars/vllm/line.lark`` read one line of each engine, ``pyliteral.lark`` the
``server_args=`` payload; each has its Transformer beside the others in :mod:`logparse.grammar`.
pyproject maps this folder to the package ``logparse.grammars`` (``[tool.setuptools] package-dir``),
so ``pip install`` puts the files inside the installed package and ``pip install -e`` finds them
here; :func:`logparse.grammar.lalr.grammar_text` reads them through :mod:`importlib.resources`.
"""
