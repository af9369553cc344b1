"""The document-level QA (DLVQA) builder, KG4VD Appendix A.3: ``docgraph dataset dlvqa``.

Modules, one stage each: ``summaries`` (page and document summaries), ``facts`` (grounded
textual and visual atomic facts per page), ``clusters`` (fact embeddings, HDBSCAN, the
page-span rule), ``questions`` (one question per retained cluster, the dataset row),
``review`` (editable intermediate artifacts), ``builder`` (the run, resumable through the
response cache). Prompts are in ``prompts/``; settings in ``[dlvqa]`` (``DLVQASettings``).
"""

from .builder import DatasetReport, DocumentResult, build_dlvqa, builder_chat

__all__ = ["DatasetReport", "DocumentResult", "build_dlvqa", "builder_chat"]
