"""kmc's command line and composition root.

``kmc/`` is the one package that wires the Kafka model (``model/``), its named properties
(``invariants/``), an explorer (``explorer/`` in process, ``spark_explore/`` on Spark) and the
renderers (``reports/``) together. Everything below it is reusable on its own: the explorers know
only the model contract, the model knows nothing of the explorers. import-linter keeps these
layers (see ``[tool.importlinter]`` in ``pyproject.toml``).
"""
