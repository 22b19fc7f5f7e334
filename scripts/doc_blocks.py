"""Generated blocks in a Markdown document: what scripts/kafka-doc.py and
scripts/perf-doc.py share.

A block sits between `<!-- TAG:NAME -->` and `<!-- /TAG:NAME -->`; its body
is whatever `write(NAME)` returns. With `check`, nothing is written and the
exit status says whether the document is what its data says (the test
command runs both scripts so).
"""
import re
import sys


def rewrite(doc, tag, write, check, rerun):
    """Replaces every `tag` block of `doc` by `write(name)`, or with `check`
    fails unless the document already says it; `rerun` is the command that
    writes it."""
    block = re.compile(rf"(<!-- {tag}:([a-z0-9-]+) -->\n).*?(<!-- /{tag}:\2 -->)", re.S)
    text = doc.read_text()
    names = [m.group(2) for m in block.finditer(text)]
    if not names:
        sys.exit(f"error: {doc} has no {tag} blocks")
    new = block.sub(lambda m: m.group(1) + write(m.group(2)) + m.group(3), text)
    if check:
        if new != text:
            sys.exit(f"error: {doc.name}'s tables are not what their data says: run {rerun}")
        print(f"{doc.name} is current ({', '.join(names)})")
    else:
        doc.write_text(new)
        print(f"wrote {', '.join(names)} into {doc.name}")
