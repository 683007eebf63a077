"""Ranking: one pipeline for every list (rag.ranking.pipeline): the code-aware lexical order
(order), quoted text as written (quoted), the semantic stage's part in the order (semantic), and
the passages shaped for answers, a match and its context (passages)."""
