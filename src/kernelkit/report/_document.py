"""A short report written twice, as Markdown and as HTML, linking the files beside it."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Report:
    """Blocks of a report: headings, paragraphs, tables, images and file links.

    Build it with the ``add_*`` methods, then :meth:`write` gives ``NAME.md`` and
    ``NAME.html`` in a folder; images and links are paths relative to that folder.
    """

    title: str
    blocks: list[tuple[str, object]] = field(default_factory=list)

    def add_heading(self, text: str) -> None:
        self.blocks.append(("heading", text))

    def add_paragraph(self, text: str) -> None:
        self.blocks.append(("paragraph", text))

    def add_table(self, header: list[str], rows: list[list[str]]) -> None:
        self.blocks.append(("table", (header, rows)))

    def add_image(self, path: str, caption: str) -> None:
        self.blocks.append(("image", (path, caption)))

    def add_files(self, files: list[tuple[str, str]]) -> None:
        """A list of ``(relative path, what it holds)`` links."""
        self.blocks.append(("files", files))

    def markdown(self) -> str:
        out = [f"# {self.title}", ""]
        for kind, value in self.blocks:
            if kind == "heading":
                out += [f"## {value}", ""]
            elif kind == "paragraph":
                out += [str(value), ""]
            elif kind == "table":
                header, rows = value  # type: ignore[misc]
                out.append("| " + " | ".join(header) + " |")
                out.append("|" + "---|" * len(header))
                out += ["| " + " | ".join(row) + " |" for row in rows]
                out.append("")
            elif kind == "image":
                path, caption = value  # type: ignore[misc]
                out += [f"![{caption}]({path})", "", f"*{caption}*", ""]
            else:
                out += [f"- [{path}]({path}): {what}" for path, what in value]  # type: ignore[union-attr]
                out.append("")
        return "\n".join(out)

    def html(self) -> str:
        esc = html.escape
        out = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{esc(self.title)}</title>",
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
            "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.3em .6em}"
            "img{max-width:100%}</style></head><body>",
            f"<h1>{esc(self.title)}</h1>",
        ]
        for kind, value in self.blocks:
            if kind == "heading":
                out.append(f"<h2>{esc(str(value))}</h2>")
            elif kind == "paragraph":
                out.append(f"<p>{esc(str(value))}</p>")
            elif kind == "table":
                header, rows = value  # type: ignore[misc]
                out.append("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
                out += [
                    "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows
                ]
                out.append("</table>")
            elif kind == "image":
                path, caption = value  # type: ignore[misc]
                out.append(
                    f'<figure><img src="{esc(path)}" alt="{esc(caption)}">'
                    f"<figcaption>{esc(caption)}</figcaption></figure>"
                )
            else:
                items = "".join(
                    f'<li><a href="{esc(p)}">{esc(p)}</a>: {esc(w)}</li>'
                    for p, w in value  # type: ignore[union-attr]
                )
                out.append(f"<ul>{items}</ul>")
        out.append("</body></html>")
        return "\n".join(out)

    def write(self, folder: Path, name: str = "report") -> tuple[Path, Path]:
        """Write ``NAME.md`` and ``NAME.html`` into ``folder``; returns both paths."""
        md, page = folder / f"{name}.md", folder / f"{name}.html"
        md.write_text(self.markdown(), encoding="utf-8")
        page.write_text(self.html(), encoding="utf-8")
        return md, page
