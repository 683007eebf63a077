#!/usr/bin/env python3
"""Ask a question about the indexed repository: python query.py "how does auth work?" """

from rag.cli import query_main

if __name__ == "__main__":
    query_main()
