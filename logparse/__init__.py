"""logparse: SGLang startup-log parser and KV-cache regression tracker."""

__version__ = "0.1.0"
