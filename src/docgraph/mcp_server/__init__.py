"""docgraph as a Model Context Protocol server (``docgraph mcp``): ``server.create_server``
builds it over a workspace, ``tools`` holds what each tool does, ``http`` the token-gated
streamable-HTTP app."""
