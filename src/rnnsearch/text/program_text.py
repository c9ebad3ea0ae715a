"""The text of programs inside running text (``text/items.py`` makes each an item the model copies): a program's
placeholders (printf's ``%s``, ``%1$d``, Python's ``%(name)s``, Qt's ``%1``, ``{0}``, ``{name:.2f}``, ``{{ var }}``,
``${HOME}`` and a path from it, ``@@name@@``), a tag written as text (``&lt;b&gt;`` in HTML), and addresses (a UUID,
an IPv6 address).
"""
from __future__ import annotations

PLACEHOLDER = (  # a program's placeholder: the model wrote "%s was saved" as "On a économisé", "{1} messages" "messages}"
    r"\$\{?[A-Za-z_]\w*\}?(?:/[\w.+-]+)+/?"  # a path from a variable ($HOME/docs/a.txt, ${HOME}/bin: "/bin" was lost)
    r"|%\([\w.-]+\)[-+0# ]?\d*(?:\.\d+)?[diouxXeEfFgGcrsa]"  # Python's %(name)s
    r"|(?<![\w%])%(?:\d+\$)?[-+0#']?(?:\d+|\*)?(?:\.\d+)?(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfFgGcsp@](?![A-Za-z0-9])"  # %1$d
    r"|(?<![\w%])%\d{1,2}(?![\w.,%])"  # Qt's %1
    r"|\{\{\s*[\w.\[\]|: '\"]+?\s*\}\}|\$\{[\w.:-]+\}|@@\w+@@"  # {{ user.name }}, ${HOME}, @@name@@
    r"|\{[\w.\[\]]*(?:![rsa])?(?::[^{}\s]*)?\}|\{\d+,\s*\w+(?:,[^{}]*)?\}")  # {0}, {name:.2f}, {0,number}
WRITTEN_TAG = r"(?:(?<!\w)<|</)[A-Za-z][\w:-]*(?:\s+[\w:-]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s<>]+))?)*\s*/?>"  # x<y: none
ADDRESS = (r"(?<![\w-])[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}(?![\w-])"  # a UUID: "les 716 550e8400-..."
           r"|(?<![\w:.])(?=[0-9A-Fa-f:]*::|(?:[0-9A-Fa-f]{1,4}:){7})(?=[:0-9A-Fa-f]*[0-9A-Fa-f])"  # IPv6: 2001:db8::1 came
           r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")  # out "2001 : db8 1 h 1"
