"""How a run is written for people: the terminal summary (:mod:`.terminal`), failure text
(:mod:`.failures`), the Markdown summary (:mod:`.markdown`), the HTML page (:mod:`.html`) and the
one Jinja environment of every HTML output (:mod:`.jinja`).  It reads no report file and runs
no command (that is :mod:`..commands`)."""
