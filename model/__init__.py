"""The controllers' models. Importing the package installs the finder that takes a compiled module only where its
source is the one it was compiled from (:mod:`model.compiled`)."""

from model.compiled import install

install()
