import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cuentas, workspace } from "./helpers.ts";

test("added expenses are listed by date", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "add", "2024-03-05", "12.50", "Groceries").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-01", "3", "Bus", "ticket").code, 0);
  const listed = cuentas(dir, "list");
  assert.equal(listed.code, 0);
  assert.equal(listed.stdout, "2024-03-01  €3.00  Bus ticket\n2024-03-05  €12.50  Groceries\n");
});

test("expenses are kept in the data file as integer cents", () => {
  const dir = workspace();
  cuentas(dir, "add", "2024-03-05", "0.10", "Gum");
  const saved = JSON.parse(readFileSync(join(dir, "cuentas.json"), "utf8"));
  assert.deepEqual(saved, [{ date: "2024-03-05", cents: 10, description: "Gum" }]);
});

test("a malformed date or amount is refused and nothing is saved", () => {
  const dir = workspace();
  const badDate = cuentas(dir, "add", "5 March", "1.00", "Tea");
  assert.equal(badDate.code, 1);
  assert.match(badDate.stderr, /invalid date "5 March"/);
  const badAmount = cuentas(dir, "add", "2024-03-05", "lots", "Tea");
  assert.equal(badAmount.code, 1);
  assert.match(badAmount.stderr, /invalid amount "lots"/);
  assert.equal(cuentas(dir, "list").stdout, "");
});
