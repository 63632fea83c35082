import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 15: import from CSV", () => {
  const dir = workspace();
  writeFileSync(
    join(dir, "gastos.csv"),
    'description,amount,date,category\r\n"Cena, ""El Patio""","1.234,56",5/3/2024,ocio\r\n' +
      '"Two\nlines",12.5,2024-03-02,\r\nPan,"0,80",2024-3-1,Alimentación\r\n',
  );
  const imported = cuentas(dir, "import", "gastos.csv");
  assert.equal(imported.code, 0, imported.stderr);
  assert.equal(imported.stdout.trim(), "Imported 3 expenses");
  assert.deepEqual(lines(cuentas(dir, "list").stdout), [
    "2024-03-01  €0.80  Pan [Alimentación]",
    "2024-03-02  €12.50  Two",
    "lines",
    '2024-03-05  €1,234.56  Cena, "El Patio" [ocio]',
  ]);
  writeFileSync(join(dir, "bad.csv"), "date,amount,description\n2024-04-01,3,Tea\n2024-04-02,2,Milk\n2024-04-03,abc,Cake\n");
  const refused = cuentas(dir, "import", "bad.csv");
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /line 4/);
  assert.match(refused.stderr, /abc/);
  assert.equal(cuentas(dir, "total", "--month", "2024-04").stdout.trim(), "Total: €0.00");
});
