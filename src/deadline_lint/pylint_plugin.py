"""`pylint --load-plugins deadline_lint.pylint_plugin`: the name users put in their pylint
configuration; the plugin itself is `deadline_lint.frontends.pylint_plugin`."""
from deadline_lint.frontends.pylint_plugin import register

__all__ = ["register"]
