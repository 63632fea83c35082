import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 22: semicolon-separated CSV with decimal commas", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-05", cents: 123456, description: "Sofa; grande" },
    { date: "2024-03-01", cents: 4550, description: "Cena, amigos" },
  ]);
  const exported = cuentas(dir, "export", "es.csv", "--sep", ";");
  assert.equal(exported.code, 0, exported.stderr);
  assert.equal(
    readFileSync(join(dir, "es.csv"), "utf8").replaceAll("\r\n", "\n"),
    'date;amount;category;description\n2024-03-01;45,50;;Cena, amigos\n2024-03-05;1234,56;;"Sofa; grande"\n',
  );
  const bad = cuentas(dir, "export", "x.csv", "--sep=|");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /\|/);
  const other = workspace();
  writeFileSync(join(other, "in.csv"), 'date;amount;description;category\n5/3/2024;"1.234,56";Sofa;casa\n2024-03-06;7,5;"Café; con leche";\n');
  assert.equal(cuentas(other, "import", join(dir, "es.csv")).stdout.trim(), "Imported 2 expenses");
  assert.equal(cuentas(other, "import", "in.csv").stdout.trim(), "Imported 2 expenses");
  assert.deepEqual(lines(cuentas(other, "list").stdout), [
    "2024-03-01  €45.50  Cena, amigos",
    "2024-03-05  €1,234.56  Sofa; grande",
    "2024-03-05  €1,234.56  Sofa [casa]",
    "2024-03-06  €7.50  Café; con leche",
  ]);
});
