#!/usr/bin/env python3
"""This is a Python script saved with a .rs name: the Rust grammar can make nothing of it."""

import sys


def main(argv):
    for arg in argv[1:]:
        print(f"{arg!r}: {len(arg)} characters")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
