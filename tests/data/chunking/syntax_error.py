# A Python 2 module: it does not parse under Python 3.
import os

class Walker(object):
    """Walk a tree and print what it finds."""

    def __init__(self, root):
        self.root = root

    @staticmethod
    def show(path):
        print "found", path

    def walk(self):
        def visit(arg, dirname, names):
            for name in names:
                Walker.show(os.path.join(dirname, name))
        os.path.walk(self.root, visit, None)


def main(argv):
    """Walk each directory named on the command line, printing every path."""
    for root in argv[1:]:
        Walker(root).walk()
    print >>sys.stderr, "done"
