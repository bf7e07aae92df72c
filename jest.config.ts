import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // examples/ import the package by its name, as users write it.
  moduleNameMapper: { '^sluice$': '<rootDir>/src/index.ts' },
  // Deep model-based runs (N = 3) are opt-in: `npm run test:deep`.
  testTimeout: 30_000,
};

export default config;
