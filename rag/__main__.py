"""Run the rag command group: python -m rag ..."""

from rag.cli import main

main()
