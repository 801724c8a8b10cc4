"""Envoy ext_proc WAF: SecLang rules + OWASP CRS on libmodsecurity v3."""

__version__ = "0.3.0"
