"""HTTP transport shared by every endpoint backend: the client, retries, concurrency limits."""
