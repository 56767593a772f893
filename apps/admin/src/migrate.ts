import { IsOptional, Matches } from 'class-validator';

import { readEnv } from '@app/config';
import {
  createSettingsDataSource,
  MigrationOptions,
  revertAllMigrations,
  runMigrations,
} from '@app/settings';
import { SecretBox } from '@app/signing';

/** The migration command reads the database URL, and the apps' key when it is set. */
class MigrateEnv {
  /** PostgreSQL connection URL of the settings database. */
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;

  /**
   * The apps' key: the migration that encrypts stored static header values needs it when
   * webhooks with static headers exist (and says so when it is missing).
   */
  @IsOptional()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, {
    message: 'SECRETS_ENCRYPTION_KEY must be 32 bytes, base64 (openssl rand -base64 32)',
  })
  SECRETS_ENCRYPTION_KEY?: string;
}

const COMMANDS = ['up', 'revert-all'] as const;
type Command = (typeof COMMANDS)[number];

/**
 * Applies the settings migrations (`up`, the default) or reverts them all (`revert-all`).
 * Prints the names of the migrations it ran.
 */
export async function migrate(
  command: Command,
  databaseUrl: string,
  secretsKey?: string,
): Promise<string[]> {
  const options: MigrationOptions = {
    headerCipher: secretsKey === undefined ? undefined : new SecretBox(secretsKey),
  };
  const dataSource = await createSettingsDataSource({ url: databaseUrl, poolSize: 1 }).initialize();
  try {
    return command === 'up'
      ? await runMigrations(dataSource, options)
      : await revertAllMigrations(dataSource, options);
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
    .then(() => {
      const env = readEnv(MigrateEnv, process.env);
      return migrate(command, env.DATABASE_URL, env.SECRETS_ENCRYPTION_KEY || undefined);
    })
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
