"""docgraph inside other frameworks: ``langchain.DocgraphRetriever`` (``docgraph[langchain]``) and
``llamaindex.DocgraphRetriever`` (``docgraph[llamaindex]``). Both are thin: they call
``Workspace.search`` and hand back the framework's own types, one per page region, with the
page, box, region id, document title, scores and page image path in metadata (``hits``)."""
