import { databaseUrlPassword, describeDatabaseUrl, safeErrorMessage } from './database-url';

describe(describeDatabaseUrl.name, () => {
  it('keeps host, port, user and database but drops the password', () => {
    expect(describeDatabaseUrl('postgres://sluice:s3cret@db.local:5432/sluice')).toBe(
      'postgres://sluice@db.local:5432/sluice',
    );
  });

  it('drops the query string', () => {
    expect(describeDatabaseUrl('postgres://u:p@h/db?sslpassword=x')).toBe('postgres://u@h/db');
  });

  it('does not echo an unparsable url', () => {
    expect(describeDatabaseUrl('not a url with secret')).toBe('<invalid database url>');
  });
});

describe(databaseUrlPassword.name, () => {
  it('decodes a percent-encoded password', () => {
    expect(databaseUrlPassword('postgres://u:p%40ss@h/db')).toBe('p@ss');
  });

  it('is undefined without a password', () => {
    expect(databaseUrlPassword('postgres://u@h/db')).toBeUndefined();
  });
});

describe(safeErrorMessage.name, () => {
  it('masks every occurrence of a secret', () => {
    const error = new Error('failed for pw and again pw');
    expect(safeErrorMessage(error, ['pw'])).toBe('failed for *** and again ***');
  });

  it('ignores undefined and empty secrets and accepts non-errors', () => {
    expect(safeErrorMessage('plain', [undefined, ''])).toBe('plain');
  });
});
