"""The .src.md format: render and parse, round trips, the lenient forms, and errors naming the line."""
import pytest

from apps.core.exceptions import InvalidInput
from apps.reasoning.srcmd import SourceCell, SourceNotebook, parse, render

NOTEBOOK = SourceNotebook(
    title='Binary search: "halving" explained',
    language="typescript",
    template="sequential-feynman",
    dependencies={"is-odd": "3.0.1", "@scope/pkg": "^1.2.0"},
    cells=(
        SourceCell("markdown", "# Title\n\nSome *prose* with a fenced example:\n\n```js\nnot a cell\n```"),
        SourceCell("markdown", "A second markdown cell, right after the first."),
        SourceCell("code", "export const half = (n: number): number => n / 2;", filename="half.ts",
                   output="earlier output"),
        SourceCell("code", "const fence = '```';\nconsole.log(fence);\n  // indented last line", filename="fence.ts"),
        SourceCell("markdown", "Closing words."),
    ),
)


def _comparable(notebook: SourceNotebook):
    return (notebook.title, notebook.language, notebook.template, notebook.dependencies,
            [(c.cell_type, c.content, c.filename) for c in notebook.cells])


def test_render_then_parse_is_lossless():
    text = render(NOTEBOOK)
    assert _comparable(parse(text)) == _comparable(NOTEBOOK)
    assert render(parse(text)).replace("```text output\nearlier output\n```\n\n", "") == \
        text.replace("```text output\nearlier output\n```\n\n", "")


def test_render_writes_the_documented_shape():
    text = render(NOTEBOOK)
    assert text.startswith('---\ntitle: "Binary search: \\"halving\\" explained"\nlanguage: typescript\n')
    assert 'dependencies: {"@scope/pkg": "^1.2.0", "is-odd": "3.0.1"}' in text
    assert "```ts filename=half.ts\nexport const half" in text
    assert "````ts filename=fence.ts\n" in text  # a longer fence than the code's own backticks
    assert "```text output\nearlier output\n```" in text
    assert "<!-- cell -->" in text


def test_output_blocks_are_not_cells():
    parsed = parse(render(NOTEBOOK))
    assert [c.filename for c in parsed.cells if c.cell_type == "code"] == ["half.ts", "fence.ts"]
    assert all("earlier output" not in c.content for c in parsed.cells)


def test_lenient_forms_are_understood():
    text = """
---
title: Plain title
language: javascript
dependencies:
  - is-odd@3.0.1
  left-pad: 1.3.0
---
Intro prose.
```javascript:main.js
console.log(1)
```
```js file="other.js"
console.log(2)
```
"""
    parsed = parse(text)
    assert parsed.title == "Plain title"
    assert parsed.dependencies == {"is-odd": "3.0.1", "left-pad": "1.3.0"}
    assert [(c.cell_type, c.filename, c.content) for c in parsed.cells] == [
        ("markdown", "", "Intro prose."), ("code", "main.js", "console.log(1)"), ("code", "other.js", "console.log(2)")]


def test_language_defaults_to_javascript():
    assert parse("---\ntitle: T\n---\n").language == "javascript"


@pytest.mark.parametrize(("text", "line", "words"), [
    ("", 1, "empty"),
    ("# no front matter\n", 1, "starts with front matter"),
    ("---\ntitle: T\n", 1, "never closed"),
    ("---\nlanguage: javascript\n---\n", 1, "no title"),
    ("---\ntitle: T\ncolour: blue\n---\n", 3, "unknown front matter key"),
    ("---\ntitle: T\nnot a pair\n---\n", 3, "expected key: value"),
    ('---\ntitle: "unterminated\n---\n', 2, "quoted string"),
    ("---\ntitle: T\ndependencies: {\"a\": 1}\n---\n", 3, "dependencies must be"),
    ("---\ntitle: T\n---\n\ntext\n```js filename=a.js\nconsole.log(1)\n", 6, "never closed"),
])
def test_malformed_files_name_the_line(text, line, words):
    with pytest.raises(InvalidInput) as caught:
        parse(text)
    assert caught.value.message.startswith(f"line {line}: ")
    assert words in caught.value.message
    assert caught.value.extra["line"] == line
