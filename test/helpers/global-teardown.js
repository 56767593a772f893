// @ts-check
const { Kafka, logLevel } = require('kafkajs');

/**
 * Deletes the topics and consumer groups this run made (names starting with `t-<run>-`), so
 * the local broker does not gather thousands of partitions over many runs (which slows its
 * start). A failure here is reported, never fails the run: the tests have passed or failed
 * already.
 */
module.exports = async function globalTeardown() {
  const run = process.env.SLUICE_TEST_RUN;
  const brokers = process.env.KAFKA_BROKERS;
  if (!run || !brokers) return;
  const prefix = `t-${run}-`;
  const admin = new Kafka({
    clientId: 'sluice-test-teardown',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
  }).admin();
  try {
    await admin.connect();
    const { groups } = await admin.listGroups();
    const groupIds = groups.map((g) => g.groupId).filter((id) => id.startsWith(prefix));
    // Deleting a group some consumer still belongs to is refused; it simply stays.
    if (groupIds.length > 0) await admin.deleteGroups(groupIds).catch(() => undefined);
    const topics = (await admin.listTopics()).filter((name) => name.startsWith(prefix));
    for (let i = 0; i < topics.length; i += 100) {
      await admin.deleteTopics({ topics: topics.slice(i, i + 100), timeout: 30_000 });
    }
    console.log(`[teardown] deleted ${topics.length} topics and the groups of test run ${run}`);
  } catch (error) {
    console.warn(`[teardown] could not delete the topics of test run ${run}: ${String(error)}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
};
