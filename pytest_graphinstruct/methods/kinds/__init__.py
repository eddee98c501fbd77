"""One module per method, each holding one :class:`~pytest_graphinstruct.methods.protocol.
Method` object; :mod:`pytest_graphinstruct.methods.registry` lists them.  Modules here import
the methods' machinery (``iterative``, ``caap``) only when a method runs, so the registry stays
cheap to import."""
