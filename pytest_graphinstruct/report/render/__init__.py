"""How reports are written for people: the terminal summary, failure text, the Markdown summary,
the HTML page (:mod:`.html`) and the one Jinja environment of every HTML output (:mod:`.jinja`).
Nothing here reads files or runs a command."""
