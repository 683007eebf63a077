"""Compatibility layer: the fastest JSON codec and a TLS-capable client, whichever this
platform provides, behind one interface for the rest of the package."""

import os
import sys

try:
    from _speedups import encode_basestring
except ImportError:
    def encode_basestring(s):
        """Return a JSON representation of a Python string, escaping quotes and control characters."""
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

try:
    import ssl
except ImportError:
    _HAVE_SSL = False
else:
    _HAVE_SSL = True

    class SecureClient:
        """A client that wraps its control connection in TLS before sending credentials."""

        def __init__(self, host, context=None):
            self.host = host
            self.context = context or ssl.create_default_context()

        def login(self, user, password):
            """Secure the connection with AUTH TLS, then send the user name and password."""
            self.auth()
            return self.send_credentials(user, password)

if os.name == "nt":
    def spawn(command):
        """Start a command through CreateProcess and return its process handle to the caller."""
        return _winapi_spawn(command)
else:
    def spawn(command):
        """Fork and exec a command, returning the child's process id to the caller when started."""
        return os.posix_spawn(command[0], command, os.environ)


def main(argv=None):
    """Encode each argument and print it, one per line, for a quick manual check."""
    for arg in argv or sys.argv[1:]:
        print(encode_basestring(arg))
