import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cuentas, seed, workspace } from "./harness.ts";

test("step 11: export to CSV with quoting", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-09", cents: 123456, description: "Sofa" },
    { date: "2024-03-01", cents: 4550, description: 'Dinner, "La Bodega"' },
    { date: "2024-04-01", cents: 100, description: "Bread" },
  ]);
  assert.equal(cuentas(dir, "add", "2024-03-05", "7,5", "Café", "--category", "ocio").code, 0);
  const exported = cuentas(dir, "export", "gastos.csv");
  assert.equal(exported.code, 0);
  assert.equal(exported.stdout.trim(), "Exported 4 expenses to gastos.csv");
  const csv = readFileSync(join(dir, "gastos.csv"), "utf8").replaceAll("\r\n", "\n");
  assert.equal(
    csv,
    'date,amount,category,description\n2024-03-01,45.50,,"Dinner, ""La Bodega"""\n' +
      "2024-03-05,7.50,ocio,Café\n2024-03-09,1234.56,,Sofa\n2024-04-01,1.00,,Bread\n",
  );
  assert.match(cuentas(dir, "export", "april.csv", "--month", "2024-04").stdout, /^Exported 1 expenses? to april.csv\n$/);
  assert.equal(readFileSync(join(dir, "april.csv"), "utf8").replaceAll("\r\n", "\n"), "date,amount,category,description\n2024-04-01,1.00,,Bread\n");
});
