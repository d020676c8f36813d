"""A report as a list of blocks, rendered to Markdown and to self-contained HTML."""
import base64
import html
import os
import re


class Document:
    def __init__(self):
        self.blocks = []

    def h(self, level, text):
        self.blocks.append(("h", level, text))

    def p(self, text):
        self.blocks.append(("p", text))

    def items(self, items):
        self.blocks.append(("list", list(items)))

    def table(self, header, rows, align=None):
        self.blocks.append(("table", header, [[str(c) for c in r] for r in rows], align))

    def img(self, path, alt):
        self.blocks.append(("img", path, alt))

    def pre(self, text):
        self.blocks.append(("pre", text))

    # ------------------------------------------------------------------ Markdown
    def markdown(self):
        out = []
        for b in self.blocks:
            kind = b[0]
            if kind == "h":
                out.append("#" * b[1] + " " + b[2])
            elif kind == "p":
                out.append(b[1])
            elif kind == "list":
                out.append("\n".join("- " + i for i in b[1]))
            elif kind == "table":
                header, rows, align = b[1], b[2], b[3] or ["l"] * len(b[1])
                cell = lambda s: s.replace("|", "\\|").replace("\n", " ")  # noqa: E731
                lines = ["| " + " | ".join(cell(h) for h in header) + " |",
                         "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
                lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
                out.append("\n".join(lines))
            elif kind == "img":
                out.append("![%s](%s)" % (b[2], os.path.basename(b[1])))
            elif kind == "pre":
                out.append("```\n" + b[1].rstrip("\n") + "\n```")
        return "\n\n".join(out) + "\n"

    # ------------------------------------------------------------------ HTML
    def html(self, title):
        body = []
        for b in self.blocks:
            kind = b[0]
            if kind == "h":
                body.append("<h%d>%s</h%d>" % (b[1], _inline(b[2]), b[1]))
            elif kind == "p":
                body.append("<p>%s</p>" % _inline(b[1]))
            elif kind == "list":
                body.append("<ul>" + "".join("<li>%s</li>" % _inline(i) for i in b[1]) + "</ul>")
            elif kind == "table":
                header, rows, align = b[1], b[2], b[3] or ["l"] * len(b[1])
                cls = lambda i: ' class="r"' if align[i] == "r" else ""  # noqa: E731
                t = ["<table><thead><tr>"]
                t += ["<th%s>%s</th>" % (cls(i), _inline(h)) for i, h in enumerate(header)]
                t.append("</tr></thead><tbody>")
                for r in rows:
                    t.append("<tr>" + "".join("<td%s>%s</td>" % (cls(i), _inline(c))
                                              for i, c in enumerate(r)) + "</tr>")
                t.append("</tbody></table>")
                body.append("".join(t))
            elif kind == "img":
                with open(b[1], "rb") as f:
                    data = base64.b64encode(f.read()).decode("ascii")
                body.append('<figure><img alt="%s" src="data:image/png;base64,%s"><figcaption>%s'
                            '</figcaption></figure>' % (html.escape(b[2]), data, html.escape(b[2])))
            elif kind == "pre":
                body.append("<pre>%s</pre>" % html.escape(b[1]))
        return _PAGE % (html.escape(title), "\n".join(body))


def _inline(text):
    s = html.escape(text)
    s = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", s)
    s = re.sub(r"`(.+?)`", r"<code>\1</code>", s)
    s = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', s)
    return s


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
img { max-width: 100%%; border: 1px solid #eee; } figure { margin: 1em 0; }
figcaption { color: #666; font-size: 0.9em; }
code, pre { background: #f5f5f5; } pre { padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
h1 { border-bottom: 2px solid #333; } h2 { border-bottom: 1px solid #ccc; margin-top: 1.6em; }
</style></head>
<body>
%s
</body></html>
"""
