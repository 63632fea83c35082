import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 24: importing skips expenses we already have", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-01", cents: 250, description: "Café" },
    { date: "2024-03-02", cents: 1000, description: "Cine" },
  ]);
  writeFileSync(
    join(dir, "march.csv"),
    "date,amount,description\n2024-03-01,\"2,50\",cafe \n2024-03-02,10.01,Cine\n3/3/2024,4,Pan\n2024-03-01,2.50,Té\n2024-03-03,4.00,PAN\n",
  );
  const first = cuentas(dir, "import", "march.csv");
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^Imported 3 expenses \(2 duplicates skipped\)\n$/);
  assert.deepEqual(lines(cuentas(dir, "list").stdout), [
    "2024-03-01  €2.50  Café",
    "2024-03-01  €2.50  Té",
    "2024-03-02  €10.00  Cine",
    "2024-03-02  €10.01  Cine",
    "2024-03-03  €4.00  Pan",
  ]);
  assert.match(cuentas(dir, "import", "march.csv").stdout, /^Imported 0 expenses \(5 duplicates skipped\)\n$/);
  writeFileSync(join(dir, "april.csv"), "date,amount,description\n2024-04-01,1,Pan\n");
  assert.match(cuentas(dir, "import", "april.csv").stdout, /^Imported 1 expenses?\n$/);
});
