"""What the methods build with: chunking, embedding blocks, Markdown tables, build statistics."""
