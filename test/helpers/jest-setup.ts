// Integration and e2e tests wait on a real broker and database; their own waits have deadlines.
jest.setTimeout(90_000);
