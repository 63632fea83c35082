import { add, list } from "./commands.ts";

const USAGE = `usage: cuentas <command> [arguments]
commands:
  add <date> <amount> <description>   record an expense (date as YYYY-MM-DD, amount like 12.50)
  list                                show every expense, oldest first
The expenses are kept in the file named by CUENTAS_FILE, or in cuentas.json.`;

const COMMANDS: Record<string, (args: string[]) => string> = { add, list };

function main(argv: string[]): number {
  const [name, ...args] = argv;
  if (name === undefined || name === "help" || name === "--help") {
    console.log(USAGE);
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    console.error(`error: unknown command "${name}"\n\n${USAGE}`);
    return 1;
  }
  try {
    const output = command(args);
    if (output !== "") {
      console.log(output);
    }
    return 0;
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
