"""The guardrails policy pack (rules in `rules.py`; `__main__.py` serves them to the Pulumi CLI)."""
