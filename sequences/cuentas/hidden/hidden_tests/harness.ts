import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(import.meta.dirname, "..");
const entry = join(root, "src", "cli.ts");
const loader = import.meta.resolve("tsx");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// The folders this process makes, removed when it exits (one listener for them all:
// a listener per folder would pass node's limit of 10 and warn).
const made: string[] = [];
process.on("exit", () => made.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function madeFolder(prefix: string): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  made.push(folder);
  return folder;
}

// A fresh folder per test, so each test starts with no data file.
export function workspace(): string {
  return madeFolder("cuentas-hidden-");
}

export function cuentas(dir: string, ...args: string[]): Run {
  return cuentasWith({}, dir, ...args);
}

// Runs the program with extra environment variables; the program's own variables are
// otherwise unset, so the caller's environment cannot change the outcome.
export function cuentasWith(extra: Record<string, string>, dir: string, ...args: string[]): Run {
  const env = { ...process.env };
  for (const name of Object.keys(env).filter((name) => name.startsWith("CUENTAS_"))) {
    delete env[name];
  }
  const run = spawnSync(process.execPath, [...program(), ...args], {
    cwd: dir,
    env: { ...env, ...extra },
    encoding: "utf8",
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

// The program runs as `node --import tsx src/cli.ts`, as its README says. tsx's own
// start-up costs about 0.25 s of CPU per run, and a late state's hidden tests run the
// program about 180 times; so the program is built once, by the esbuild that tsx runs
// and with tsx's options, into one file that plain node runs. A program that could tell
// the two apart (it reads where its code lives, imports a package, or esbuild warns
// about it or cannot build it) runs through tsx.
let start: string[] | undefined;
function program(): string[] {
  start ??= built() ?? ["--import", loader, entry];
  return start;
}

const readsWhereItLives = /import\.meta|__dirname|__filename|\brequire\b|execArgv/;

function built(): string[] | undefined {
  const esbuild = createRequire(fileURLToPath(loader))("esbuild");
  const folder = madeFolder("cuentas-built-");
  const outfile = join(folder, "cli.mjs");
  let result;
  try {
    result = esbuild.buildSync({
      absWorkingDir: root,
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      packages: "external",
      target: `node${process.versions.node}`,
      keepNames: true,
      sourcemap: "inline",
      metafile: true,
      logLevel: "silent",
      // Under tsx the program's path is src/cli.ts.
      banner: { js: `process.argv[1] = ${JSON.stringify(entry)};` },
    });
  } catch {
    return undefined;
  }
  const outputs: { imports: { path: string }[] }[] = Object.values(result.metafile.outputs);
  const faithful =
    result.warnings.length === 0 &&
    outputs.every((output) => output.imports.every((imported) => isBuiltin(imported.path))) &&
    Object.keys(result.metafile.inputs).every(
      (input) => !readsWhereItLives.test(readFileSync(resolve(root, input), "utf8")),
    );
  return faithful ? ["--enable-source-maps", outfile] : undefined;
}

// Writes expenses straight into the data file (its documented format), to set up a
// test without spawning the program once per expense.
export function seed(dir: string, expenses: { date: string; cents: number; description: string }[]): void {
  writeFileSync(join(dir, "cuentas.json"), JSON.stringify(expenses, null, 2) + "\n");
}

export function lines(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}
