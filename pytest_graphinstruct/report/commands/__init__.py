"""The work of the command line's report commands, one module each: ``compare``, ``runs``,
``gate``, ``merge``/``cache merge``, ``cache export``, ``show``, ``plan`` and ``html`` (the
arguments are ``__main__``'s; what they show is :mod:`..render`'s and :mod:`..analyses`')."""
