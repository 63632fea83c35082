import assert from "node:assert/strict";
import { test } from "node:test";
import { cuentas, lines, seed, workspace } from "./harness.ts";

test("step 08: search ignores case and accents", () => {
  const dir = workspace();
  seed(dir, [
    { date: "2024-03-03", cents: 180, description: "Café con leche" },
    { date: "2024-03-01", cents: 250, description: "Panadería" },
    { date: "2024-04-02", cents: 220, description: "CAFÉ solo" },
    { date: "2024-03-04", cents: 900, description: "Cine" },
  ]);
  assert.equal(cuentas(dir, "add", "2024-03-05", "4", "Croissant", "--category", "Cafetería").code, 0);
  assert.deepEqual(lines(cuentas(dir, "search", "cafe").stdout), [
    "2024-03-03  €1.80  Café con leche",
    "2024-03-05  €4.00  Croissant [Cafetería]",
    "2024-04-02  €2.20  CAFÉ solo",
  ]);
  assert.deepEqual(lines(cuentas(dir, "search", "PANADERIA").stdout), ["2024-03-01  €2.50  Panadería"]);
  assert.deepEqual(lines(cuentas(dir, "search", "café", "con").stdout), ["2024-03-03  €1.80  Café con leche"]);
  assert.deepEqual(lines(cuentas(dir, "search", "cafe", "--month", "2024-04").stdout), ["2024-04-02  €2.20  CAFÉ solo"]);
});
