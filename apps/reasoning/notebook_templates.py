"""Notebook templates: the cells a new notebook starts with (notebook_create(template=...)).

Code cells are written so they run unchanged as JavaScript and as TypeScript (no module syntax, no type
annotations); a cell's file gets the notebook language's extension.
"""
from __future__ import annotations

from dataclasses import dataclass

from apps.reasoning.srcmd import SourceCell


@dataclass(frozen=True)
class TemplateCell:
    cell_type: str
    content: str
    stem: str = ""  # code cells: the file name without its extension


@dataclass(frozen=True)
class Template:
    name: str
    description: str
    cells: tuple[TemplateCell, ...]

    def source_cells(self, *, title: str, language: str) -> list[SourceCell]:
        extension = ".ts" if language == "typescript" else ".js"
        return [SourceCell(cell_type=cell.cell_type, content=cell.content.replace("{title}", title),
                           filename=cell.stem + extension if cell.stem else "") for cell in self.cells]


FEYNMAN_DEMO = """\
// Binary search, traced step by step: the running proof of the explanation above.
// Replace it with a demonstration of your own concept, keeping the habit of printing each step.
function binarySearch(sorted, target) {
  let low = 0;
  let high = sorted.length - 1;
  let step = 1;
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    console.log(`step ${step++}: look between ${low} and ${high}, middle ${middle} holds ${sorted[middle]}`);
    if (sorted[middle] === target) return middle;
    if (sorted[middle] < target) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

const numbers = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
const found = binarySearch(numbers, 23);
const bound = Math.ceil(Math.log2(numbers.length + 1));
console.log(`23 is at index ${found} of ${numbers.length}: found in at most ${bound} steps`);
if (binarySearch(numbers, 4) !== -1) throw new Error("4 is not in the list, yet it was found");
console.log("4 is not in the list: the search says -1, as the explanation predicts");"""

EXPLORATION_DATA = """\
// A small inline data set; replace it with yours (or read a file from the notebook folder with require('fs')).
const rows = [
  { city: "Lisbon", month: "Jan", temperature: 11.6, rain: 99 },
  { city: "Lisbon", month: "Jul", temperature: 23.5, rain: 4 },
  { city: "Oslo", month: "Jan", temperature: -3.5, rain: 49 },
  { city: "Oslo", month: "Jul", temperature: 16.8, rain: 81 },
  { city: "Cairo", month: "Jan", temperature: 14.0, rain: 5 },
  { city: "Cairo", month: "Jul", temperature: 28.2, rain: 0 },
];

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((total, value) => total + value, 0) / values.length;
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  const variance = values.reduce((total, value) => total + (value - mean) ** 2, 0) / values.length;
  return { count: values.length, min: sorted[0], max: sorted[sorted.length - 1],
           mean: +mean.toFixed(2), median, stdev: +Math.sqrt(variance).toFixed(2) };
}

const numeric = Object.keys(rows[0]).filter((key) => typeof rows[0][key] === "number");
for (const column of numeric) console.log(column, JSON.stringify(summary(rows.map((row) => row[column]))));

const byCity = {};
for (const row of rows) (byCity[row.city] = byCity[row.city] || []).push(row.temperature);
for (const [city, temperatures] of Object.entries(byCity)) {
  console.log(`${city}: yearly swing ${(Math.max(...temperatures) - Math.min(...temperatures)).toFixed(1)} degrees`);
}"""

TEMPLATES: dict[str, Template] = {
    template.name: template for template in (
        Template(
            name="sequential-feynman",
            description="Explain a concept the Feynman way: state it, explain it simply, find the gaps, refine, "
                        "and prove the explanation with running code.",
            cells=(
                TemplateCell("markdown", "# {title}\n\nA Feynman walk-through: state the concept precisely, explain "
                                         "it as you would to a newcomer, find where that explanation breaks, refine "
                                         "it, and check it against code that runs."),
                TemplateCell("markdown", "## 1. The concept\n\nState the concept in its precise, technical form, "
                                         "with the terms a specialist would use. (Example: binary search finds an "
                                         "item in a sorted list in O(log n) comparisons by halving the range.)"),
                TemplateCell("markdown", "## 2. Explain it simply\n\nExplain it to someone who has never met it, "
                                         "in plain words and one everyday analogy. (Example: looking up a word in "
                                         "a paper dictionary: open it in the middle, see which half the word is "
                                         "in, and repeat on that half.)"),
                TemplateCell("markdown", "## 3. Find the gaps\n\nWhere did the simple explanation wave its hands? "
                                         "List each point you could not explain without jargon, and each case it "
                                         "does not cover. (Example: why must the list be sorted? What happens "
                                         "when the item is missing?)"),
                TemplateCell("markdown", "## 4. Refine\n\nGo back to the sources for each gap and rewrite the "
                                         "explanation so it covers them, still in plain words. (Example: each "
                                         "look throws away the half that cannot hold the word, which only works "
                                         "because the list is in order; when nothing is left, the word is not "
                                         "there.)"),
                TemplateCell("markdown", "## 5. Demonstrate\n\nThe cell below runs the idea and prints each step, "
                                         "so the explanation can be checked against what really happens."),
                TemplateCell("code", FEYNMAN_DEMO, stem="demonstration"),
            ),
        ),
        Template(
            name="data-exploration",
            description="Explore a small data set: load it, summarise each numeric column, group, and note "
                        "findings.",
            cells=(
                TemplateCell("markdown", "# {title}\n\nA first look at a data set: what is in it, how each numeric "
                                         "column is spread, and what stands out when it is grouped."),
                TemplateCell("code", EXPLORATION_DATA, stem="explore"),
                TemplateCell("markdown", "## Findings\n\nWrite down what the summaries show, what surprised you, "
                                         "and which question to ask the data next."),
            ),
        ),
    )
}


def notebook_templates() -> dict[str, str]:
    """Template name -> what it is for."""
    return {name: template.description for name, template in TEMPLATES.items()}
