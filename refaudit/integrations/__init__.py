"""Where refaudit meets other tools: CI services (GitHub Actions) and editors (LSP).

Each module is a thin layer over the one pipeline (`refaudit.audit`) and the
renderers (`refaudit.render`); none decides a verdict of its own.
"""
