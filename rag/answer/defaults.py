"""The backend names and default model, apart from rag.answer.backends so that the CLI can offer them
without importing the backends (retrieval alone never needs them)."""

DEFAULT_MODEL = "claude-sonnet-5-5"
BACKENDS = ("auto", "anthropic", "claude", "none")
