// @ts-check
const { randomBytes } = require('node:crypto');

/**
 * Names this test run, before the workers start (they inherit the environment): every topic
 * prefix the tests make starts with `t-<run>-` (`uniquePrefix`), so the teardown removes this
 * run's topics and groups, and only this run's.
 */
module.exports = async function globalSetup() {
  process.env.SLUICE_TEST_RUN ??= randomBytes(3).toString('hex');
};
