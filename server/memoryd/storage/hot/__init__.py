"""The hot cache: hot partitions held in process memory in front of a durable Store
(cache.py), each searched exactly or by a graph (partition.py, ann.py, quant.py) and
by full text (text.py)."""
