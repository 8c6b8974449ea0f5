"""Text from the files (budget names, owners, paths, messages quoting them) as markdown *text*.

The job summary and ``--format markdown`` render what they print: a budget
named ``[click](https://evil.example)`` would be a link, ``![x](...)`` an
image that loads when the summary is opened, an ESC byte a control
sequence. :func:`text` makes such text show as the characters it is made
of; the markdown reporters use it for every cell that comes from the files.
"""

from __future__ import annotations

import re

from budgetlint.findings import printable_lines

#: what makes markdown of text: links and images ([...](...), ![...](...)), code spans, emphasis
#: and the backslash itself; backslash-escaped they render as themselves (CommonMark 2.4).
#: <, > and & become entities (no HTML, no autolink), | is escaped for the table.
_MARKUP = re.compile(r"([\\`*_~\[\]])")
_SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*):(?=//)")
_WWW = re.compile(r"(?i)\b(www)\.")


def text(value: object) -> str:
    """Text taken from the files (names, paths, messages quoting them) as markdown *text*.

    A budget named ``[click](https://evil.example)`` or ``![x](https://tracker)``
    renders as those characters, not as a link or an image; control characters
    are written as escapes (``\\x1b``); newlines become ``<br>``; the result is
    safe in a table cell. For our own markup use ``markdown.cell``.
    """
    lines = printable_lines("" if value is None else str(value).replace("\r\n", "\n"))
    out = []
    for line in lines:
        line = _MARKUP.sub(r"\\\1", line)  # first: the entities below must stay entities
        line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
        # GitHub links bare URLs as it reads them ("https:", "www."): an entity is not read as one
        out.append(_WWW.sub(r"\1&#46;", _SCHEME.sub(r"\1&#58;", line)))
    return "<br>".join(out).strip() or " "
