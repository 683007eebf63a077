"""The backend names, default models and search modes, apart from rag.answer.backends so that the CLI
can offer them without importing the backends (retrieval alone never needs them)."""

DEFAULT_MODEL = "claude-sonnet-5-5"
BACKENDS = ("auto", "anthropic", "claude", "none")
# who writes the search: `planned` = the model that answers writes keyword searches first
# (rag.answer.plan), whenever a model answers; `question` = the question's own words alone
SEARCH_MODES = ("planned", "question")
DEFAULT_SEARCH = "planned"
SEARCH_MODEL_ENV = "RAG_SEARCH_MODEL"  # the model that plans searches
# when the installed SDK lists no Claude Haiku (rag.answer.plan.search_model)
FALLBACK_SEARCH_MODEL = "claude-haiku-4-5"
# searches the answering model may make before it answers (rag.answer.followups); 0: a single round
DEFAULT_FOLLOW_UPS = 2
FOLLOW_UPS_ENV = "RAG_FOLLOWUPS"
MAX_FOLLOW_UPS = 10
