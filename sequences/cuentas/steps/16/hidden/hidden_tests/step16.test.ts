import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { cuentas, lines, workspace } from "./harness.ts";

test("step 16: --file names the data file on any command", () => {
  const dir = workspace();
  assert.equal(cuentas(dir, "--file", "mama.json", "add", "2024-03-05", "30", "Gas").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-06", "12,50", "Water", "--file=mama.json", "--category", "home").code, 0);
  assert.equal(cuentas(dir, "add", "2024-03-07", "1", "Mine").code, 0);
  assert.ok(existsSync(join(dir, "mama.json")));
  assert.equal(cuentas(dir, "--file=mama.json", "total").stdout.trim(), "Total: €42.50");
  assert.deepEqual(lines(cuentas(dir, "list", "--file", "mama.json", "--category", "home").stdout), [
    "2024-03-06  €12.50  Water [home]",
  ]);
  assert.equal(cuentas(dir, "total").stdout.trim(), "Total: €1.00");
  const missing = cuentas(dir, "total", "--file");
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /--file/);
});
