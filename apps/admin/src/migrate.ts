import { Matches } from 'class-validator';

import { readEnv } from '@app/config';
import { createSettingsDataSource, revertAllMigrations, runMigrations } from '@app/settings';

/** The migration command reads only the database URL. */
class MigrateEnv {
  /** PostgreSQL connection URL of the settings database. */
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;
}

const COMMANDS = ['up', 'revert-all'] as const;
type Command = (typeof COMMANDS)[number];

/**
 * Applies the settings migrations (`up`, the default) or reverts them all (`revert-all`).
 * Prints the names of the migrations it ran.
 */
export async function migrate(command: Command, databaseUrl: string): Promise<string[]> {
  const dataSource = await createSettingsDataSource({ url: databaseUrl, poolSize: 1 }).initialize();
  try {
    return command === 'up'
      ? await runMigrations(dataSource)
      : await revertAllMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

if (require.main === module) {
  const command = (process.argv[2] ?? 'up') as Command;
  if (!COMMANDS.includes(command)) {
    process.stderr.write(`usage: migrate [${COMMANDS.join('|')}]\n`);
    process.exit(2);
  }
  Promise.resolve()
    .then(() => migrate(command, readEnv(MigrateEnv, process.env).DATABASE_URL))
    .then((names) => {
      const verb = command === 'up' ? 'applied' : 'reverted';
      process.stdout.write(
        `${verb} ${names.length} migration(s)${names.length ? `: ${names.join(', ')}` : ''}\n`,
      );
    })
    .catch((error: unknown) => {
      process.stderr.write(
        `migration failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exit(1);
    });
}
