"""The work of the command line's report commands, one module each: ``compare``, ``runs``,
``gate``, ``merge``/``merge-cache``, ``export-cache``, ``show``, ``plan`` and ``html`` (the
arguments are ``__main__``'s; what they show is :mod:`..render`'s and :mod:`..analyses`')."""
