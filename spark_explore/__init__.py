"""The Spark engine: the breadth-first search on Spark (:mod:`spark_explore.bfs`), its levels' Parquet and the
traces read back from them, and the seeded simulation's walks as Spark tasks."""

import os

# Arrow's buffers from the C library's malloc instead of Arrow's own allocator (mimalloc in pyarrow's wheels):
# what the driver frees between levels (a level's table, the Parquet written and read back) is then reused by
# Python and handed back to the system by explorer.stopping.release_free_memory, where mimalloc keeps the pages
# it freed. Arrow reads the variable once, at its first allocation, so it is set before this package imports
# pyarrow; a value already set is kept, and the JVM and the Python workers it starts inherit it. The default
# scenario, every level on the driver: 655 MB at the peak with mimalloc, 410 MB with malloc.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
