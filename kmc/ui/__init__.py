"""``kmc ui``: the interactive explorer (a session over the model contract, its web server and its page)."""
