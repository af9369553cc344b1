"""Chat models: the OpenAI-compatible backend and the wrappers around every chat call
(structured output, response cache, replay, capability probing)."""
