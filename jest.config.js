/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  setupFiles: ['<rootDir>/test/support/env.ts'],
  testTimeout: 60_000,
  // Two cores here: one chDB engine per worker process, each suite in its own database.
  maxWorkers: 2,
  forceExit: true,
};
