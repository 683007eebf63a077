"""Run the rag command group: python -m rag ..."""

from .cli import main

main()
