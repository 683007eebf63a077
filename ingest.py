#!/usr/bin/env python3
"""Index a repository: python ingest.py path/to/repo"""

from rag.cli import ingest_main

if __name__ == "__main__":
    ingest_main()
