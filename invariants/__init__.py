"""The named properties. Importing the package imports :mod:`model` first, whose finder decides whether the property
modules run compiled (:mod:`model.compiled`)."""

import model  # noqa: F401
