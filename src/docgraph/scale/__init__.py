"""Scale-out on a Ray cluster: page work of ``add`` and embedding batches of ``build`` run
as Ray tasks; the calling process stays the one writer of the workspace, so resume and
idempotence are those of a local run.

- ``cluster``: joining a cluster (or starting a local one) once per process;
- ``ray_pages``: ``RayPageRunner``, the ``documents.runner.PageRunner`` contract on Ray;
- ``ray_embed``: ``RayTextEmbedder``, a ``TextEmbedder`` whose batches run on the cluster.
"""
